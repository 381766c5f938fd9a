package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/gateway"

	"github.com/sikahq/sika/internal/devstack"
)

// checkResult is one invariant checked at the end.
type checkResult struct {
	name     string
	checked  int      // how many things were looked at
	problems []string // every violation, described
	figures  string   // what it saw, for the report
}

func (c *checkResult) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// world is the end state, read once for all the checks.
type world struct {
	txs      map[uuid.UUID]txRow
	logs     map[uuid.UUID][]logRow   // per transaction, in order
	attempts map[string]attemptRow    // by id (the sandbox's reference)
	entries  map[uuid.UUID][]entryRow // ledger entries by transaction
	flags    map[uuid.UUID][]flagRow  // money flags by transaction
	// eventTypes counts, per transaction, its events by type.
	eventTypes map[uuid.UUID]map[string]int
	wallets    []walletRow
	events     []string
	outbox     int
	sessions   []sessionRow
	// pendingAnswers counts the operators' answers kept for a run and not processed yet.
	pendingAnswers int
	// settle is, per transaction type, the time from creation to the final state of first runs.
	settle map[string][]time.Duration
}

type attemptRow struct {
	id           uuid.UUID
	tx           uuid.UUID
	run          int
	gateway      string
	status       string
	recheckUntil *time.Time // set while Sika re-reads an attempt that ended without the operator's word
}

type entryRow struct {
	typ     string
	amount  decimal.Decimal
	attempt *uuid.UUID // the paid attempt of a COLLECTION entry
}

// logRow is one status log.
type logRow struct {
	id         uuid.UUID // a UUIDv7, made when the log was written (see logTime)
	from, to   string
	reason, by string
	at         time.Time // created_at: the start of its Postgres transaction
}

// flagRow is one money flag (REFUND_DUE, PAYOUT_PAID_AFTER_RELEASE, PAYOUT_PAID_TWICE).
type flagRow struct {
	kind    string
	attempt *uuid.UUID
}

type walletRow struct {
	country            string
	available, pending decimal.Decimal
}

type sessionRow struct {
	id     uuid.UUID
	status string
	tx     *uuid.UUID
}

// check reads the end state and runs every check into the report.
func (h *harness) check(ctx context.Context, l *load, rep *report) error {
	w, err := h.readWorld(ctx)
	if err != nil {
		return err
	}
	rep.txCount = len(w.txs)
	rep.eventCount = len(w.events)
	rep.settle = w.settle
	ops := h.sandbox.Operations()
	ledger, err := h.checkLedger(ctx, w)
	if err != nil {
		return err
	}
	transfers, err := h.checkTransferValue(ctx)
	if err != nil {
		return err
	}
	rep.checks = []*checkResult{
		checkFinalStates(w, l.book, ops, l.o.tick),
		checkNoPending(w),
		checkStatusLogs(w),
		checkGateway(w, ops),
		ledger,
		transfers,
		checkIdempotency(w, l.book),
		checkWebhooks(w, h.receiver.stats()),
		checkOutbox(w),
		checkSessions(w),
		checkPayoutHolds(w, ops),
		checkOperatorMoney(w, ops),
		checkNotFound(w, ops),
		checkLate(w, l.book, ops),
		checkClosedPaid(w, ops),
		checkCheckouts(w, l.book),
		checkKeyReuse(w, l.book),
		checkAnswers(l.book),
		h.checkProcesses(rep),
	}
	return nil
}

// checkFinalStates: every transaction is in the final state its number promises.
func checkFinalStates(w *world, b *book, ops []sandboxOp, tick time.Duration) *checkResult {
	c := &checkResult{name: "final state matches the sandbox outcome"}
	created := map[uuid.UUID]time.Time{} // the newest sandbox operation of each transaction
	for _, op := range ops {
		if a, ok := w.attempts[op.Reference]; ok && op.CreatedAt.After(created[a.tx]) {
			created[a.tx] = op.CreatedAt
		}
	}
	relaxed := 0
	byTx := opsByTx(w, ops)
	for _, t := range w.txs {
		c.checked++
		e := raceWithExpiry(expect(t, b.txs[t.id]), t, b.txs[t.id], created[t.id], tick)
		if number := map[string]string{"PAIEMENT": t.phone, "RETRAIT": t.recipient}[t.typ]; suffixOf(number) == suffixClosedPaid && routedPastA(byTx[t.id]) {
			// 012 never at sandbox-a: sandbox-b's push alone, expired or approved by hand.
			e = expectation{status: "FAILED", code: "expired", why: "number ends in 012, routed past sandbox-a: sandbox-b's push alone"}
			for _, op := range byTx[t.id] {
				if op.Status == gateway.StatusSuccess {
					e = expectation{status: "SUCCESS", why: "number ends in 012, routed past sandbox-a: approved at sandbox-b"}
				}
			}
		}
		if e.orExpired {
			relaxed++
		}
		switch {
		case t.status != "SUCCESS" && t.status != "FAILED":
			c.addf("%s %s %s is %s (%s)", t.typ, t.network, t.id, t.status, e.why)
		case e.orExpired && t.status == "FAILED" && t.failureCode == "expired":
		case e.status != "" && t.status != e.status:
			c.addf("%s %s %s is %s %s, want %s (%s)", t.typ, t.network, t.id, t.status, t.failureCode, e.status, e.why)
		case e.status == "FAILED" && e.code != "" && t.failureCode != e.code:
			c.addf("%s %s %s failed %q, want %q (%s)", t.typ, t.network, t.id, t.failureCode, e.code, e.why)
		}
	}
	if relaxed > 0 {
		c.figures = fmt.Sprintf("%d post-push OTP payments confirmed too close to the sandbox's push expiry: SUCCESS or FAILED expired", relaxed)
	}
	return c
}

// checkNoPending: no transaction is left PENDING.
func checkNoPending(w *world) *checkResult {
	c := &checkResult{name: "no transaction left PENDING"}
	attempted := map[uuid.UUID]map[int]bool{} // runs that reached a gateway call
	for _, a := range w.attempts {
		if attempted[a.tx] == nil {
			attempted[a.tx] = map[int]bool{}
		}
		attempted[a.tx][a.run] = true
	}
	for _, t := range w.txs {
		c.checked++
		if t.status != "PENDING" {
			continue
		}
		hint := ""
		if t.run > 1 && !attempted[t.id][t.run] {
			// Seen: the retry's start found the previous run's workflow still open under the
			// same id, took it for its own and dropped its outbox row (workflows.StartPayment).
			hint = fmt.Sprintf(": retried, but run %d never made an attempt (its workflow never ran)", t.run)
		}
		c.addf("%s %s %s (number %s%s) is PENDING%s", t.typ, t.network, t.id, t.phone, t.recipient, hint)
	}
	return c
}

// checkStatusLogs: each log continues the previous one, the last is the transaction's status,
// and each run ended exactly once. A late success reconciled after its run ended adds a SYSTEM
// log FAILED→SUCCESS ("Reconciled: …"), and a second success SUCCESS→SUCCESS ("Second success:
// …"): neither ends a run.
func checkStatusLogs(w *world) *checkResult {
	c := &checkResult{name: "status log ends in the final state, one end per run"}
	for _, t := range w.txs {
		c.checked++
		logs := w.logs[t.id]
		prev, finals := "", 0
		for i, l := range logs {
			if l.from != prev {
				c.addf("%s: log %d goes %s→%s after %s", t.id, i+1, orNull(l.from), l.to, orNull(prev))
				break
			}
			switch {
			case isReconciliation(l):
				if l.by != "SYSTEM" || l.to != "SUCCESS" || (l.from != "FAILED" && l.from != "PENDING" && l.from != "SUCCESS") {
					c.addf("%s: reconciliation log %d goes %s→%s by %s", t.id, i+1, orNull(l.from), l.to, l.by)
				}
			case l.to != "PENDING":
				finals++
			}
			prev = l.to
		}
		switch {
		case prev != t.status:
			c.addf("%s is %s but its log ends in %s", t.id, t.status, orNull(prev))
		case t.typ != "TRANSFERT" && finals != t.run:
			c.addf("%s has %d final logs for %d run(s)", t.id, finals, t.run)
		}
	}
	return c
}

// isReconciliation reports whether a status log records a success reconciled after its run
// ended (store.ReconcileSuccess) rather than a run's end.
func isReconciliation(l logRow) bool {
	return strings.HasPrefix(l.reason, "Reconciled:") || strings.HasPrefix(l.reason, "Second success:")
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// checkGateway: every operation the sandbox started belongs to an attempt the service recorded,
// no reference started twice, and the money the sandbox moved is the money the service
// recorded: one successful operation for a SUCCESS transaction, none for a FAILED one.
func checkGateway(w *world, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "no push or disbursement twice; every one accounted for"}
	succeeded := map[uuid.UUID]int{}
	for _, op := range ops {
		c.checked++
		a, ok := w.attempts[op.Reference]
		if !ok {
			c.addf("%s %s %s (%s) has no attempt in the service", op.Gateway, op.Kind, op.Reference, op.Status)
			continue
		}
		t := w.txs[a.tx]
		if (op.Kind == gateway.CallbackDisbursement) != (t.typ == "RETRAIT") || op.Gateway != a.gateway {
			c.addf("%s %s %s is attempt %s of %s %s", op.Gateway, op.Kind, op.Reference, a.gateway, t.typ, t.id)
		}
		if op.Pushes != 1 {
			c.addf("%s %s made %d pushes", op.Gateway, op.Reference, op.Pushes)
		}
		if !op.Status.Final() {
			c.addf("%s %s %s still %s at the sandbox", op.Gateway, op.Kind, op.Reference, op.Status)
		}
		if op.Status == gateway.StatusSuccess {
			succeeded[a.tx]++
		}
	}
	for _, t := range w.txs {
		if t.typ == "TRANSFERT" {
			continue
		}
		want, also := 0, ""
		if t.status == "SUCCESS" {
			want = 1
			switch t.typ {
			case "PAIEMENT": // a customer who paid twice is credited and flagged for refund
				want += w.flagCount(t.id, flagRefundDue)
				also = fmt.Sprintf(" (%d flagged REFUND_DUE)", want-1)
			case "RETRAIT": // a payout paid twice is settled once and flagged for support
				want += w.flagCount(t.id, flagPayoutPaidTwice)
				also = fmt.Sprintf(" (%d flagged PAYOUT_PAID_TWICE)", want-1)
			}
		}
		if got := succeeded[t.id]; got != want {
			c.addf("%s %s %s is %s%s but %d operation(s) succeeded at the sandbox", t.typ, t.network, t.id, t.status, also, got)
		}
	}
	return c
}

// Money flag kinds (store/reconcile.go).
const (
	flagRefundDue              = "REFUND_DUE"
	flagPayoutPaidAfterRelease = "PAYOUT_PAID_AFTER_RELEASE"
	flagPayoutPaidTwice        = "PAYOUT_PAID_TWICE"
)

// flagCount counts a transaction's money flags of one kind.
func (w *world) flagCount(tx uuid.UUID, kind string) int {
	n := 0
	for _, f := range w.flags[tx] {
		if f.kind == kind {
			n++
		}
	}
	return n
}

// checkLedger: `sika admin check-ledger` and the store's check pass, every wallet holds nothing
// for operations in flight, and every transaction has exactly the entries its state calls for.
func (h *harness) checkLedger(ctx context.Context, w *world) (*checkResult, error) {
	c := &checkResult{name: "every wallet equals its ledger; entries match transactions"}
	d, err := h.st.CheckLedger(ctx)
	if err != nil {
		return nil, err
	}
	if d != nil {
		c.addf("store check: wallet %s: %s", d.Wallet, d.Problem)
	}
	cmd := exec.CommandContext(ctx, h.sikaBin, "admin", "check-ledger")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+h.pgURL())
	if out, err := cmd.CombinedOutput(); err != nil {
		c.addf("sika admin check-ledger: %v: %s", err, strings.TrimSpace(string(out)))
	}
	for _, wl := range w.wallets {
		c.checked++
		if !wl.pending.IsZero() {
			c.addf("wallet %s still holds %s for operations in flight", wl.country, wl.pending)
		}
	}
	for _, t := range w.txs {
		c.checked++
		got := map[string][]decimal.Decimal{}
		for _, e := range w.entries[t.id] {
			got[e.typ] = append(got[e.typ], e.amount)
		}
		one := func(d decimal.Decimal) []decimal.Decimal { return []decimal.Decimal{d} }
		var want map[string][]decimal.Decimal
		switch {
		case t.typ == "TRANSFERT":
			if len(got) != 2 || len(got["TRANSFER_OUT"]) != 1 || len(got["TRANSFER_IN"]) != 1 {
				c.addf("transfer %s has entries %v", t.id, got)
			}
			continue
		case t.typ == "RETRAIT" && t.status == "SUCCESS":
			want = map[string][]decimal.Decimal{"PAYOUT_HOLD": one(t.debited), "PAYOUT": one(t.debited)}
		case t.typ == "RETRAIT" && t.status == "FAILED":
			want = map[string][]decimal.Decimal{"PAYOUT_HOLD": one(t.debited), "PAYOUT_REVERSAL": one(t.debited)}
		case t.typ == "RETRAIT":
			want = map[string][]decimal.Decimal{"PAYOUT_HOLD": one(t.debited)} // still undecided
		case t.status == "SUCCESS":
			// Credited once, and once more for every success flagged REFUND_DUE.
			n := 1 + w.flagCount(t.id, flagRefundDue)
			for range n {
				want = map[string][]decimal.Decimal{"COLLECTION": append(want["COLLECTION"], t.netAmount)}
			}
		default:
			want = map[string][]decimal.Decimal{}
		}
		if !sameEntries(got, want) {
			c.addf("%s %s %s has entries %v, want %v", t.status, t.typ, t.id, got, want)
		}
	}
	return c, nil
}

// sameEntries compares two sets of ledger amounts by type (each a multiset).
func sameEntries(got, want map[string][]decimal.Decimal) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			return false
		}
		for _, v := range w {
			found := false
			for _, x := range g {
				found = found || x.Equal(v)
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// checkIdempotency: no key got two different operations; every transaction created with a key
// is the one answered to that key; retries made exactly one run per key that performed one.
func checkIdempotency(w *world, b *book) *checkResult {
	c := &checkResult{name: "no Idempotency-Key produced two operations"}
	for key, k := range b.keys {
		c.checked++
		if k.kind != opRetry && k.kind != opOTP && len(k.txIDs) > 1 {
			c.addf("%s key %s was answered %d different transactions", k.kind, key, len(k.txIDs))
		}
	}
	for _, t := range w.txs {
		switch {
		case t.key == nil && t.session == nil:
			c.addf("%s %s has no Idempotency-Key and no checkout session", t.typ, t.id)
		case t.key == nil:
		case b.keys[*t.key] != nil && b.keys[*t.key].kind == opKeyReuse:
			// Its first answer was cut on purpose: checkKeyReuse judges it.
		case b.keys[*t.key] == nil:
			c.addf("%s %s carries key %s the merchant never sent", t.typ, t.id, *t.key)
		case !b.keys[*t.key].txIDs[t.id]:
			k := b.keys[*t.key]
			c.addf("%s %s exists for key %s, which was answered %d %s (%d other ids)", t.typ, t.id, *t.key, k.status, k.code, len(k.txIDs))
		}
	}
	for id, n := range b.txs {
		if len(n.retryKeys) == 0 {
			continue
		}
		sure, maybe := 0, 0
		for _, key := range n.retryKeys {
			switch k := b.keys[key]; {
			case k.status == 200:
				sure++
			case k.maybe:
				maybe++
			}
		}
		c.checked++
		if runs := w.txs[id].run; runs-1 < sure || runs-1 > sure+maybe {
			c.addf("payment %s has %d runs after %d retries answered 200 (%d more may have acted)", id, runs, sure, maybe)
		}
	}
	return c
}

// checkWebhooks: every event in Postgres reached the receiver, signed, at least once.
func checkWebhooks(w *world, s receiverStats) *checkResult {
	c := &checkResult{name: "every event delivered, signature-valid"}
	missing := 0
	for _, id := range w.events {
		c.checked++
		if s.accepted[id] == 0 {
			missing++
			if missing <= 10 {
				c.addf("event %s never delivered", id)
			}
		}
	}
	if missing > 10 {
		c.addf("… %d events never delivered in all", missing)
	}
	if s.badSig > 0 || s.mismatched > 0 {
		c.addf("%d deliveries with a bad signature, %d whose body id differs from webhook-id", s.badSig, s.mismatched)
	}
	return c
}

// checkOutbox: no workflow start is left waiting.
func checkOutbox(w *world) *checkResult {
	c := &checkResult{name: "no outbox row left", checked: 1}
	if w.outbox > 0 {
		c.addf("%d workflow_outbox rows left", w.outbox)
	}
	return c
}

// checkSessions: a session is PAID exactly when one of its payments succeeded, and points at it.
func checkSessions(w *world) *checkResult {
	c := &checkResult{name: "checkout session PAID iff paid"}
	succeeded := map[uuid.UUID][]uuid.UUID{}
	for _, t := range w.txs {
		if t.session != nil && t.status == "SUCCESS" {
			succeeded[*t.session] = append(succeeded[*t.session], t.id)
		}
	}
	for _, s := range w.sessions {
		c.checked++
		paid := succeeded[s.id]
		switch {
		case s.status == "PAID" && (s.tx == nil || w.txs[*s.tx].status != "SUCCESS"):
			c.addf("session %s is PAID without a successful payment", s.id)
		case s.status != "PAID" && len(paid) > 0:
			c.addf("session %s is %s although payment %s succeeded", s.id, s.status, paid[0])
		}
	}
	return c
}

// checkAnswers: every operation got a definitive answer.
func checkAnswers(b *book) *checkResult {
	c := &checkResult{name: "every request got a definitive answer", checked: len(b.keys)}
	for _, u := range b.unresolved {
		c.addf("%s", u)
	}
	return c
}

// checkProcesses: the API and the worker never died on their own and the service recovered
// from every fault.
func (h *harness) checkProcesses(rep *report) *checkResult {
	c := &checkResult{name: "service recovered from every fault, no crash"}
	for _, s := range append(append([]*devstack.Replica(nil), h.apis...), h.workers...) {
		_, unplanned, _, exits := s.Counts()
		c.checked++
		if unplanned > 0 {
			c.addf("sika %s exited on its own %d time(s): %s", s.Name(), unplanned, strings.Join(exits, "; "))
		}
	}
	for _, f := range rep.faults {
		c.checked++
		if f.err != nil {
			c.addf("%s at op %d: %v", f.kind, f.atOp, f.err)
		}
	}
	return c
}

// pgURL is the service's database URL on the current Postgres.
func (h *harness) pgURL() string {
	if h.cluster != nil {
		return h.cluster.DatabaseURL
	}
	h.pgMu.Lock()
	defer h.pgMu.Unlock()
	return h.pg.URL(h.database)
}

// quietState is what is still moving.
type quietState struct {
	pending, outbox, undelivered, sandboxOpen int
	// unrecorded counts the operations the sandbox reports paid whose attempt Sika has not
	// recorded SUCCESS yet (a late success on its way to being reconciled).
	unrecorded int
}

func (q quietState) String() string {
	return fmt.Sprintf("%d transactions PENDING, %d outbox rows, %d events undelivered, %d sandbox operations open, "+
		"%d sandbox successes not recorded", q.pending, q.outbox, q.undelivered, q.sandboxOpen, q.unrecorded)
}

// awaitQuiescence waits until no transaction is PENDING, the outbox is empty, every event has
// reached the receiver and every sandbox operation is final; it gives up after 4 minutes, or
// after 90 s without any progress (longer than any wait of the service's: a push lifetime, a
// webhook retry). The checks then run anyway and report what is stuck.
func (h *harness) awaitQuiescence(ctx context.Context, rep *report) error {
	start := time.Now()
	const bound, stall = 4 * time.Minute, 90 * time.Second
	var last quietState
	lastChange := start
	for {
		q, err := h.readQuiet(ctx)
		if err == nil && q == (quietState{}) {
			rep.quiescence = time.Since(start)
			return nil
		}
		if q != last {
			last, lastChange = q, time.Now()
		}
		if time.Since(start) > bound || time.Since(lastChange) > stall {
			rep.quiescence = time.Since(start)
			rep.notQuiet = fmt.Sprintf("not quiet after %s (no progress for %s): %v (err %v)",
				round(time.Since(start)), round(time.Since(lastChange)), q, err)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("await quiescence: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (h *harness) readQuiet(ctx context.Context) (quietState, error) {
	var q quietState
	merchant := h.setup.merchantID
	err := h.st.Pool().QueryRow(ctx, `SELECT
			(SELECT count(*) FROM transactions WHERE merchant_id = $1 AND status = 'PENDING'),
			(SELECT count(*) FROM workflow_outbox)`, merchant).Scan(&q.pending, &q.outbox)
	if err != nil {
		return q, fmt.Errorf("read the quiet state: %w", err)
	}
	events, err := h.eventIDs(ctx)
	if err != nil {
		return q, err
	}
	accepted := h.receiver.stats().accepted
	for _, id := range events {
		if accepted[id] == 0 {
			q.undelivered++
		}
	}
	recorded := map[string]bool{}
	err = scanRows(ctx, h.st.Pool(), `SELECT id FROM transaction_attempts WHERE merchant_id = $1 AND status = 'SUCCESS'`,
		[]any{merchant}, func(r pgx.Rows) error {
			var id uuid.UUID
			if err := r.Scan(&id); err != nil {
				return err
			}
			recorded[id.String()] = true
			return nil
		})
	if err != nil {
		return q, fmt.Errorf("read the recorded successes: %w", err)
	}
	for _, op := range h.sandbox.Operations() {
		if !op.Status.Final() {
			q.sandboxOpen++
		}
		if op.Status == gateway.StatusSuccess && !recorded[op.Reference] {
			q.unrecorded++
		}
	}
	return q, nil
}
