package main

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika/gateway"
)

// The money-safety invariants (issue 17): the general ones hold for every transaction, the
// others for the operations of money.go.

// opsByTx groups the sandbox's operations by the transaction of their attempt.
// routedPastA reports whether none of a transaction's operations reached sandbox-a: the
// router skipped it (its health marks it down after the 503s of 005 and 012 numbers), so a 012
// number meets sandbox-b alone, which holds its push as 004 does.
func routedPastA(ops []sandboxOp) bool {
	for _, op := range ops {
		if op.Gateway == "sandbox-a" {
			return false
		}
	}
	return true
}

func opsByTx(w *world, ops []sandboxOp) map[uuid.UUID][]sandboxOp {
	out := map[uuid.UUID][]sandboxOp{}
	for _, op := range ops {
		if a, ok := w.attempts[op.Reference]; ok {
			out[a.tx] = append(out[a.tx], op)
		}
	}
	return out
}

// entriesOf returns a transaction's ledger entries of one type.
func (w *world) entriesOf(tx uuid.UUID, typ string) []entryRow {
	var out []entryRow
	for _, e := range w.entries[tx] {
		if e.typ == typ {
			out = append(out, e)
		}
	}
	return out
}

// checkPayoutHolds: a payout's hold is released (PAYOUT_REVERSAL) only when the payout is
// FAILED and the operator definitely did not pay it: none of its operations at the sandbox
// succeeded or is still open (none existing at all is definite too: nothing was sent).
func checkPayoutHolds(w *world, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "a payout's hold released only on a definite failure"}
	byTx := opsByTx(w, ops)
	released := 0
	for _, t := range w.txs {
		if t.typ != "RETRAIT" {
			continue
		}
		c.checked++
		if n := w.flagCount(t.id, flagPayoutPaidAfterRelease); n > 0 {
			c.addf("payout %s (to %s) was paid by the operator after its hold was released (%d flag(s))", t.id, t.recipient, n)
		}
		if len(w.entriesOf(t.id, "PAYOUT_REVERSAL")) == 0 {
			continue
		}
		released++
		if t.status != "FAILED" {
			c.addf("payout %s (to %s) is %s but its hold was released", t.id, t.recipient, t.status)
		}
		for _, op := range byTx[t.id] {
			if op.Status == gateway.StatusSuccess || !op.Status.Final() {
				c.addf("payout %s (to %s) had its hold released (%s) while %s %s is %s at the sandbox",
					t.id, t.recipient, t.failureCode, op.Gateway, op.Reference, op.Status)
			}
		}
	}
	c.figures = fmt.Sprintf("%d holds released", released)
	return c
}

// checkOperatorMoney: every operation the sandbox reports SUCCESS moved money in the ledger
// exactly once: a collection credited once (a COLLECTION entry naming its attempt), a payout
// debited once; no entry without such an operation. A collection (or a checkout session)
// charged more than once has every extra success flagged REFUND_DUE.
func checkOperatorMoney(w *world, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "every operator success credited or debited exactly once"}
	byTx := opsByTx(w, ops)
	extraBySession := map[uuid.UUID]int{}
	flagsBySession := map[uuid.UUID]int{}
	for _, t := range w.txs {
		if t.typ == "TRANSFERT" {
			continue
		}
		c.checked++
		paid := map[string]bool{} // attempts the sandbox reports paid
		for _, op := range byTx[t.id] {
			if op.Status == gateway.StatusSuccess {
				paid[op.Reference] = true
			}
		}
		if t.typ == "RETRAIT" {
			// A second transfer of one payout is not debited behind a person's back: it is
			// flagged PAYOUT_PAID_TWICE for support (store.reconcilePayout).
			twice := 0
			for _, f := range w.flags[t.id] {
				if f.kind == flagPayoutPaidTwice && f.attempt != nil && paid[f.attempt.String()] {
					twice++
				}
			}
			if debits := len(w.entriesOf(t.id, "PAYOUT")); debits+twice != len(paid) || debits > 1 {
				c.addf("payout %s (to %s, %s) was paid %d time(s) at the sandbox, debited %d time(s) and flagged PAYOUT_PAID_TWICE %d time(s)",
					t.id, t.recipient, t.status, len(paid), debits, twice)
			}
			continue
		}
		credits := w.entriesOf(t.id, "COLLECTION")
		credited := map[string]int{}
		for _, e := range credits {
			switch {
			case e.attempt == nil:
				c.addf("collection %s has a COLLECTION entry without its attempt", t.id)
			case !paid[e.attempt.String()]:
				c.addf("collection %s is credited for attempt %s, which the sandbox does not report paid", t.id, e.attempt)
			}
			if e.attempt != nil {
				credited[e.attempt.String()]++
			}
		}
		for ref := range paid {
			if credited[ref] != 1 {
				c.addf("collection %s (number %s, %s): attempt %s paid at the sandbox is credited %d time(s)", t.id, t.phone, t.status, ref, credited[ref])
			}
		}
		flagged := 0
		for _, f := range w.flags[t.id] {
			if f.kind == flagRefundDue && f.attempt != nil && paid[f.attempt.String()] {
				flagged++
			}
		}
		if len(paid) > 1 && flagged < len(paid)-1 {
			c.addf("collection %s (number %s) was charged %d times at the sandbox with %d REFUND_DUE flag(s)", t.id, t.phone, len(paid), flagged)
		}
		if t.session != nil {
			extraBySession[*t.session] += len(paid)
			flagsBySession[*t.session] += flagged
		}
	}
	for s, n := range extraBySession {
		if n > 1 && flagsBySession[s] < n-1 {
			c.addf("checkout session %s was charged %d times at the sandbox with %d REFUND_DUE flag(s)", s, n, flagsBySession[s])
		}
	}
	return c
}

// checkNotFound: a payout or softpay to a number ending in 010 (the operator loses the first
// answer, says NOT_FOUND, then pays) ends SUCCESS, its hold is never released, and the sandbox
// made exactly one transfer or push for it, however often Sika sent it again.
func checkNotFound(w *world, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "010 'not found, then pays': SUCCESS, hold kept, one transfer"}
	byTx := opsByTx(w, ops)
	payouts, collections, resent := 0, 0, 0
	for _, t := range w.txs {
		number := t.phone
		if t.typ == "RETRAIT" {
			number = t.recipient
		}
		if suffixOf(number) != suffixNotFound || t.typ == "TRANSFERT" {
			continue
		}
		c.checked++
		if t.typ == "RETRAIT" {
			payouts++
		} else {
			collections++
		}
		if t.status != "SUCCESS" {
			c.addf("%s %s (number %s) is %s %s", t.typ, t.id, number, t.status, t.failureCode)
		}
		if n := len(w.entriesOf(t.id, "PAYOUT_REVERSAL")); n > 0 {
			c.addf("payout %s (to %s) had its hold released", t.id, number)
		}
		tops := byTx[t.id]
		if len(tops) != 1 {
			c.addf("%s %s (number %s) has %d operations at the sandbox, want 1", t.typ, t.id, number, len(tops))
		}
		for _, op := range tops {
			if op.Pushes != 1 || op.Status != gateway.StatusSuccess {
				c.addf("%s %s (number %s): %s %s made %d pushes and is %s", t.typ, t.id, number, op.Gateway, op.Reference, op.Pushes, op.Status)
			}
			if op.Requests > 1 {
				resent++
			}
		}
	}
	c.figures = fmt.Sprintf("%d payouts, %d softpay; %d sent again while not found", payouts, collections, resent)
	return c
}

// checkLate: a softpay to a number ending in 011 (the customer approves after Sika's deadline,
// the cancel is refused) ends SUCCESS: recorded FAILED expired, then reconciled FAILED →
// SUCCESS by SYSTEM ("Reconciled: …") once the sandbox paid; or SUCCESS at once when its run
// ended only after the sandbox had paid. One push, its re-reads ended, one credit naming the
// paid attempt, one transaction.succeeded event; a retry sent while it was FAILED was refused
// 409 outcome_unresolved (or not_failed, once reconciled) and made no second run.
func checkLate(w *world, b *book, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "011 'pays after the deadline': reconciled once, retry refused"}
	byTx := opsByTx(w, ops)
	reconciled, direct, refused := 0, 0, 0
	for _, t := range w.txs {
		if t.typ != "PAIEMENT" || suffixOf(t.phone) != suffixLate {
			continue
		}
		c.checked++
		if t.status != "SUCCESS" || t.run != 1 {
			c.addf("payment %s (number %s) is %s %s after %d run(s)", t.id, t.phone, t.status, t.failureCode, t.run)
		}
		tops := byTx[t.id]
		if len(tops) != 1 || tops[0].Pushes != 1 {
			c.addf("payment %s (number %s) has %d operations at the sandbox, want 1 push", t.id, t.phone, len(tops))
			continue
		}
		op := tops[0]
		paidAt := op.CreatedAt.Add(lateAfter)
		logs := w.logs[t.id]
		shape := make([]string, len(logs))
		for i, l := range logs {
			shape[i] = orNull(l.from) + "→" + l.to
		}
		switch strings.Join(shape, " ") {
		case "null→PENDING PENDING→FAILED FAILED→SUCCESS":
			reconciled++
			if l := logs[1]; !strings.Contains(l.reason, "expired") {
				c.addf("payment %s failed with %q, want expired", t.id, l.reason)
			}
			if l := logs[2]; l.by != "SYSTEM" || !strings.HasPrefix(l.reason, "Reconciled:") {
				c.addf("payment %s went FAILED→SUCCESS by %s: %q, want SYSTEM \"Reconciled: …\"", t.id, l.by, l.reason)
			}
		case "null→PENDING PENDING→SUCCESS":
			direct++
			if at := logs[1].at; at.Before(paidAt.Add(-time.Second)) {
				c.addf("payment %s was recorded SUCCESS at %s, before the sandbox paid it (%s)", t.id, at.Format(time.TimeOnly), paidAt.Format(time.TimeOnly))
			}
		default:
			c.addf("payment %s has status logs %s", t.id, strings.Join(shape, ", "))
		}
		if a := w.attempts[op.Reference]; a.recheckUntil != nil {
			c.addf("payment %s: attempt %s is still re-read (until %s) after its success", t.id, op.Reference, a.recheckUntil.Format(time.TimeOnly))
		}
		credits := w.entriesOf(t.id, "COLLECTION")
		if len(credits) != 1 || credits[0].attempt == nil || credits[0].attempt.String() != op.Reference {
			c.addf("payment %s has %d COLLECTION entries, want one for attempt %s", t.id, len(credits), op.Reference)
		}
		if n := w.eventTypes[t.id]["transaction.succeeded"]; n != 1 {
			c.addf("payment %s has %d transaction.succeeded events, want 1", t.id, n)
		}
		n := b.txs[t.id]
		if n == nil || n.late == nil || !n.late.sent || n.late.err != nil {
			continue
		}
		a := n.late.answer
		switch {
		case a.status == http.StatusConflict && a.code() == "outcome_unresolved":
			refused++
		case a.status == http.StatusConflict && a.code() == "not_failed" && len(logs) == 3 && !logs[2].at.After(n.late.answeredAt):
			// reconciled before the retry arrived: no longer unresolved
		default:
			c.addf("payment %s: its retry while FAILED expired was answered %s, want 409 outcome_unresolved", t.id, a.describe())
		}
	}
	c.figures = fmt.Sprintf("%d reconciled after FAILED expired, %d ended SUCCESS directly; %d retries refused outcome_unresolved",
		reconciled, direct, refused)
	return c
}

// logTime is when a status log was written: its id is a UUIDv7 made just before its INSERT
// (created_at is the start of its Postgres transaction, which may have waited for a lock).
func logTime(l logRow) time.Time {
	ms := binary.BigEndian.Uint64(append([]byte{0, 0}, l.id[:6]...))
	return time.UnixMilli(int64(ms))
}

// checkCheckouts: a checkout session never has two payments in flight at once (by their status
// logs), it is PAID by exactly one payment, and any other payment of it that succeeded is
// flagged REFUND_DUE. Customers paying one session at once (and the merchant retrying its
// failed payment meanwhile) were answered 201 (200) or 409 checkout_payment_in_progress, never
// 500 internal_error (503 and lost answers are the faults'), and a payment after the session
// was paid 409 session_not_payable.
func checkCheckouts(w *world, b *book) *checkResult {
	c := &checkResult{name: "checkout: one payment in flight, PAID by one"}
	type flight struct {
		tx         uuid.UUID
		start, end time.Time
	}
	bySession := map[uuid.UUID][]flight{}
	succeeded := map[uuid.UUID][]uuid.UUID{}
	forever := time.Unix(1<<40, 0)
	for _, t := range w.txs {
		if t.session == nil {
			continue
		}
		var open *flight
		for _, l := range w.logs[t.id] {
			switch {
			case l.to == "PENDING" && open == nil:
				open = &flight{tx: t.id, start: logTime(l), end: forever}
			case l.from == "PENDING" && open != nil:
				open.end = logTime(l)
				bySession[*t.session] = append(bySession[*t.session], *open)
				open = nil
			}
		}
		if open != nil {
			bySession[*t.session] = append(bySession[*t.session], *open)
		}
		if t.status == "SUCCESS" {
			succeeded[*t.session] = append(succeeded[*t.session], t.id)
		}
	}
	overlaps := 0
	for _, s := range w.sessions {
		c.checked++
		fl := bySession[s.id]
		sort.Slice(fl, func(i, j int) bool { return fl[i].start.Before(fl[j].start) })
		for i := 1; i < len(fl); i++ {
			if fl[i].start.Before(fl[i-1].end) && fl[i].tx != fl[i-1].tx {
				overlaps++
				c.addf("session %s had payments %s and %s in flight together (%s–%s and %s–)", s.id, fl[i-1].tx, fl[i].tx,
					fl[i-1].start.Format("15:04:05.000"), fl[i-1].end.Format("15:04:05.000"), fl[i].start.Format("15:04:05.000"))
			}
			if fl[i].end.Before(fl[i-1].end) {
				fl[i].end = fl[i-1].end // keep the latest end for the next comparison
			}
		}
		paid := succeeded[s.id]
		if len(paid) == 0 {
			continue
		}
		if s.status != "PAID" || s.tx == nil || w.txs[*s.tx].status != "SUCCESS" {
			c.addf("session %s is %s although %d of its payments succeeded", s.id, s.status, len(paid))
			continue
		}
		for _, id := range paid {
			if id != *s.tx && w.flagCount(id, flagRefundDue) == 0 {
				c.addf("session %s is PAID by %s, and payment %s also succeeded without a REFUND_DUE flag", s.id, *s.tx, id)
			}
		}
	}
	answers := map[string]int{}
	for _, r := range b.races {
		for _, round := range r.rounds {
			for _, a := range round {
				answers[a.String()]++
				switch {
				case a.internal != "":
					c.addf("session %s: a customer paying it with others was answered 500 internal_error (X-Request-Id %s), want 201 or 409 checkout_payment_in_progress",
						r.session, a.internal)
				case a.status == 0, a.status >= 500, a.status == http.StatusCreated:
				case a.status == http.StatusConflict && (a.code == "checkout_payment_in_progress" || a.code == "session_not_payable"):
				default:
					c.addf("session %s: a customer paying it with others was answered %s", r.session, a)
				}
			}
		}
		for _, a := range r.retries {
			answers["merchant's retry: "+a.String()]++
			switch {
			case a.internal != "":
				c.addf("session %s: the merchant's retry of its failed payment while customers paid was answered 500 internal_error "+
					"(X-Request-Id %s) before %s, want 200 or 409 checkout_payment_in_progress", r.session, a.internal, a)
			case a.status == 0, a.status >= 500, a.status == http.StatusOK:
			case a.status == http.StatusConflict && (a.code == "checkout_payment_in_progress" || a.code == "session_not_payable"):
			default:
				c.addf("session %s: the merchant's retry of its failed payment while customers paid was answered %s", r.session, a)
			}
		}
		if a := r.afterPaid; a != nil {
			answers["after PAID: "+a.String()]++
			if a.status != 0 && a.status < 500 && (a.status != http.StatusConflict || a.code != "session_not_payable") {
				c.addf("session %s: a payment after it was PAID was answered %s, want 409 session_not_payable", r.session, a)
			}
		}
	}
	c.figures = fmt.Sprintf("%d sessions paid by %d customers at once: %s", len(b.races), raceCustomers, joinCounts(answers))
	return c
}

// joinCounts formats counts by label, most frequent first.
func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d× %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// checkKeyReuse: an Idempotency-Key reused with another amount after its first request's 5xx
// never gets the first request's transaction: 409 idempotency_key_reused when the first was
// committed, a 201 for the new body when it was not.
func checkKeyReuse(w *world, b *book) *checkResult {
	c := &checkResult{name: "key reused with another body after a 5xx: never the old transaction"}
	byKey := map[string]txRow{}
	for _, t := range w.txs {
		if t.key != nil {
			byKey[*t.key] = t
		}
	}
	counts := map[string]int{}
	for _, r := range b.reuses {
		c.checked++
		t, committed := byKey[r.key]
		label := map[cutResult]string{cutPending: "not cut", cutDone: "cut", cutMissed: "cut missed"}[r.cut]
		if r.cut == cutDone {
			label += map[cutWhen]string{cutBeforeCommit: " before the commit", cutAfterCommit: " after the commit"}[r.when]
		}
		counts[label+" (first answered "+r.first.brief()+")"]++
		if r.secondErr != nil || r.second.status == 0 {
			continue // no definitive answer: checkAnswers reports it
		}
		s := r.second
		switch {
		case backstopAnswer(s):
			counts["second body: 409 idempotency_key_reused by the store's backstop"]++
		case s.status == http.StatusConflict && s.code() == "idempotency_key_reused":
			counts["second body: 409 idempotency_key_reused by the API's record"]++
		case isSuccess(s):
			counts["second body: 201 created"]++
		default:
			counts["second body: "+s.describe()]++
		}
		switch {
		case isSuccess(s):
			got, known := w.txs[r.secondTx]
			switch {
			case !known:
				c.addf("key %s: the second body was answered %s with transaction %s, which does not exist", r.key, s.describe(), r.secondTx)
			case !got.requested.Equal(r.amount):
				c.addf("key %s: the second body (amount %s) was answered transaction %s of amount %s", r.key, r.amount, got.id, got.requested)
			case r.cut == cutDone && r.when == cutAfterCommit:
				c.addf("key %s: the first body was committed, yet the second body was answered %s", r.key, s.describe())
			}
		case s.status == http.StatusConflict && s.code() == "idempotency_key_reused":
			switch {
			case committed && !t.requested.Equal(r.amountA):
				c.addf("key %s holds transaction %s of amount %s, neither body's first amount %s", r.key, t.id, t.requested, r.amountA)
			case !committed && r.released:
				c.addf("key %s: nothing was committed with it and its record was released, yet the second body was answered %s", r.key, s.describe())
			}
		default:
			c.addf("key %s: the second body was answered %s, want 409 idempotency_key_reused or 201", r.key, s.describe())
		}
		if r.cut == cutDone && r.when == cutAfterCommit && (!committed || !t.requested.Equal(r.amountA)) {
			c.addf("key %s: the first body's commit was cut after Postgres committed it, but no transaction of amount %s holds the key", r.key, r.amountA)
		}
		if r.cut == cutDone && r.when == cutBeforeCommit && committed && t.requested.Equal(r.amountA) {
			c.addf("key %s: the first body was cut before its commit, but transaction %s of its amount exists", r.key, t.id)
		}
	}
	c.figures = joinCounts(counts)
	return c
}

// checkClosedPaid: a softpay or a payout to a number ending in 012 (sandbox-a answers 503,
// takes the operation all the same and reports it paid, signed, while the run is at sandbox-b)
// ends SUCCESS with attempt 1 credited (or debited) once. When the customer also approved
// sandbox-b's push, both are credited and one flagged REFUND_DUE; when sandbox-b also paid the
// payout, its hold is settled once, never released, and the second transfer is flagged
// PAYOUT_PAID_TWICE. No operator answer is left unprocessed.
func checkClosedPaid(w *world, ops []sandboxOp) *checkResult {
	c := &checkResult{name: "012 'a closed attempt paid while the run is at the next gateway': kept and settled"}
	byTx := opsByTx(w, ops)
	atEnd, afterFailed, twice, skipped := 0, 0, 0, 0
	payouts, payoutsAtEnd, payoutsTwice := 0, 0, 0
	for _, t := range w.txs {
		if (t.typ == "RETRAIT" && suffixOf(t.recipient) == suffixClosedPaid || t.typ == "PAIEMENT" && suffixOf(t.phone) == suffixClosedPaid) &&
			routedPastA(byTx[t.id]) {
			// Never at sandbox-a: nothing was paid despite a 503; the final-state and money
			// checks hold it to sandbox-b's outcome.
			c.checked++
			skipped++
			continue
		}
		if t.typ == "RETRAIT" && suffixOf(t.recipient) == suffixClosedPaid {
			c.checked++
			payouts++
			paid := 0
			for _, op := range byTx[t.id] {
				if op.Status == gateway.StatusSuccess {
					paid++
				}
			}
			if t.status != "SUCCESS" {
				c.addf("payout %s (to %s) is %s %s: sandbox-a paid its first attempt", t.id, t.recipient, t.status, t.failureCode)
			}
			if n := len(w.entriesOf(t.id, "PAYOUT_REVERSAL")); n > 0 {
				c.addf("payout %s (to %s): its hold was released %d time(s) although sandbox-a paid it", t.id, t.recipient, n)
			}
			if n := len(w.entriesOf(t.id, "PAYOUT")); n != 1 {
				c.addf("payout %s (to %s): its hold was settled %d time(s), want 1", t.id, t.recipient, n)
			}
			if n := w.flagCount(t.id, flagPayoutPaidAfterRelease); n > 0 {
				c.addf("payout %s (to %s) was flagged paid after its release (%d)", t.id, t.recipient, n)
			}
			switch n := w.flagCount(t.id, flagPayoutPaidTwice); {
			case paid == 0:
				c.addf("payout %s: no operation succeeded at the sandbox", t.id)
			case n != paid-1:
				c.addf("payout %s was paid %d times at the sandbox with %d PAYOUT_PAID_TWICE flag(s)", t.id, paid, n)
			case paid > 1:
				payoutsTwice++
			}
			if logs := w.logs[t.id]; len(logs) > 0 {
				if last := logs[len(logs)-1]; last.from == "PENDING" && last.to == "SUCCESS" {
					payoutsAtEnd++
				}
			}
			continue
		}
		if t.typ != "PAIEMENT" || suffixOf(t.phone) != suffixClosedPaid {
			continue
		}
		c.checked++
		if t.status != "SUCCESS" {
			c.addf("payment %s (number %s) is %s %s: sandbox-a paid its first attempt", t.id, t.phone, t.status, t.failureCode)
		}
		paid := 0
		for _, op := range byTx[t.id] {
			if op.Status != gateway.StatusSuccess {
				continue
			}
			paid++
			credits := 0
			for _, e := range w.entriesOf(t.id, "COLLECTION") {
				if e.attempt != nil && e.attempt.String() == op.Reference {
					credits++
				}
			}
			if credits != 1 {
				c.addf("payment %s: attempt %s paid at %s is credited %d time(s)", t.id, op.Reference, op.Gateway, credits)
			}
		}
		if paid == 0 {
			c.addf("payment %s: no operation succeeded at the sandbox", t.id)
		}
		if paid > 1 {
			twice++
			if n := w.flagCount(t.id, flagRefundDue); n != paid-1 {
				c.addf("payment %s was paid %d times at the sandbox with %d REFUND_DUE flag(s)", t.id, paid, n)
			}
		}
		if logs := w.logs[t.id]; len(logs) > 0 {
			switch last := logs[len(logs)-1]; {
			case last.from == "PENDING" && strings.Contains(last.reason, "Confirmed by sandbox-a for attempt"):
				atEnd++
			case last.from == "FAILED":
				afterFailed++
			}
		}
	}
	if w.pendingAnswers != 0 {
		c.addf("%d operator answers left unprocessed", w.pendingAnswers)
	}
	c.figures = fmt.Sprintf("collections: %d settled at their run's end on the kept answer, %d reconciled after FAILED, %d paid at both gateways (refund due); "+
		"payouts: %d, %d ended SUCCESS by their run, %d paid at both gateways (PAYOUT_PAID_TWICE); %d routed past sandbox-a (its health down)",
		atEnd, afterFailed, twice, payouts, payoutsAtEnd, payoutsTwice, skipped)
	return c
}
