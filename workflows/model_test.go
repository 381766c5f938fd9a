package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"pgregory.net/rapid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// The model-based test of money safety (issue 17): the Payment and Payout workflows run in the
// time-skipping test environment with the real activities and the real store (Postgres), against
// two scripted operators whose every answer is drawn by rapid: accepted, unclear (its answer
// lost, created or not), not found for a while, unavailable, declined, succeeding or failing
// before or after the push lifetime, cancels honoured, refused or unclear, status reads that
// fail, callbacks or none. After the run, the operators' late answers arrive (late callbacks,
// then the re-check sweep), and the invariants are checked against the operators' own truth:
//   - no collection is charged twice through Sika (at most one operator success per payment);
//   - every operator success is credited exactly once (one COLLECTION entry per success) and a
//     collection ends SUCCESS exactly when the operator took the money;
//   - a payout's hold is released only when no operator paid it, and settled when one did;
//   - every wallet equals its ledger (store.CheckLedger).
//
// Issue 21 adds an operator that breaks its word (it answers 503 to a first send and takes the
// money all the same, while the run goes on at the next gateway), callbacks signed or not that
// reach the API's own handling (activities.ReceiveCallback) before, during and after the run,
// a retry and a new payment of the checkout session beside an unresolved attempt, and a second
// run when the retry is taken. Then also:
//   - a second success is possible only through an operator that broke its word, and it is
//     credited and flagged (REFUND_DUE), or flagged for a payout (PAYOUT_PAID_TWICE, or
//     PAYOUT_PAID_AFTER_RELEASE with what was left held again);
//   - a retry or a new session payment is taken only when no operation of the payment may
//     still be paid at its operator;
//   - no operator answer is left unprocessed once the runs are over.

// modelSettle and modelLateWindow are the scripted operators' windows.
const (
	modelSettle     = time.Minute
	modelLateWindow = time.Hour
	modelLifetime   = 2 * time.Minute
)

type sendAnswer int

const (
	sendAccept          sendAnswer = iota // accepted, answered
	sendAcceptLost                        // accepted, the answer lost (ambiguous); visible after a delay
	sendLost                              // not accepted, but the answer lost (ambiguous)
	sendUnavailable                       // refused before acceptance (503)
	sendDeclined                          // refused for good
	sendUnavailablePaid                   // answered 503, yet accepted (an operator breaking its word)
)

type cancelPolicy int

const (
	cancelHonoured cancelPolicy = iota
	cancelRefused
	cancelUnclear
)

// modelOperator is one scripted gateway; every operation it accepted follows its fate.
type modelOperator struct {
	name    string
	mu      *sync.Mutex
	now     func() time.Time
	sends   []sendAnswer
	reads   []bool // true: this status read fails
	cancel  cancelPolicy
	outcome gateway.Status // the fate of its operations: SUCCESS, FAILED, or PENDING (never decided)
	after   time.Duration  // when the fate happens after creation
	visible time.Duration  // how long an accepted-but-lost operation reads NOT_FOUND (< modelSettle)
	ops     map[string]*modelOp
	// signed: its callbacks are signed (trusted); broke: it answered 503 to a first send and
	// took the operation all the same (such an operator always reports it by callback: nothing
	// else could tell Sika).
	signed, broke bool
}

type modelOp struct {
	created time.Time
	status  gateway.Status
	code    string
	calls   int  // initiations received
	broken  bool // taken after answering 503: Sika cannot know of it unless the operator tells it
}

func (o *modelOperator) Name() string { return o.name }

func (o *modelOperator) Windows() gateway.Windows {
	return gateway.Windows{NotFoundSettle: modelSettle, LateSuccess: modelLateWindow}
}

// resolve applies an operation's fate once its time has come. Call it locked.
func (o *modelOperator) resolve(op *modelOp) {
	if op.status == gateway.StatusPending && o.outcome != gateway.StatusPending && !o.now().Before(op.created.Add(o.after)) {
		op.status = o.outcome
		if o.outcome == gateway.StatusFailed {
			op.code = gateway.FailurePayerDeclined
		}
	}
}

func (o *modelOperator) send(ref string) (gateway.OperationStatus, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	answer := sendAccept
	if len(o.sends) > 0 {
		answer, o.sends = o.sends[0], o.sends[1:]
	}
	if op, ok := o.ops[ref]; ok {
		op.calls++
		if answer == sendUnavailable || answer == sendUnavailablePaid {
			return gateway.OperationStatus{}, gateway.Unavailable(errors.New("503"))
		}
		if answer == sendAcceptLost || answer == sendLost {
			return gateway.OperationStatus{}, gateway.Ambiguous(errors.New("answer lost"))
		}
		o.resolve(op)
		return gateway.OperationStatus{Reference: ref, Status: op.status, FailureCode: op.code}, nil // deduped
	}
	switch answer {
	case sendUnavailable:
		return gateway.OperationStatus{}, gateway.Unavailable(errors.New("503"))
	case sendUnavailablePaid:
		o.broke = true
		o.ops[ref] = &modelOp{created: o.now(), status: gateway.StatusPending, calls: 1, broken: true}
		return gateway.OperationStatus{}, gateway.Unavailable(errors.New("503, accepted all the same"))
	case sendLost:
		return gateway.OperationStatus{}, gateway.Ambiguous(errors.New("answer lost, nothing created"))
	case sendDeclined:
		o.ops[ref] = &modelOp{created: o.now(), status: gateway.StatusFailed, code: gateway.FailurePayerDeclined, calls: 1}
		return gateway.OperationStatus{}, gateway.Declined(gateway.FailurePayerDeclined, "declined")
	}
	created := o.now()
	if answer == sendAcceptLost {
		// Still being created: reads answer NOT_FOUND until o.visible has passed.
		created = created.Add(o.visible)
	}
	op := &modelOp{created: created, status: gateway.StatusPending, calls: 1}
	o.ops[ref] = op
	if answer == sendAcceptLost {
		return gateway.OperationStatus{}, gateway.Ambiguous(errors.New("answer lost after acceptance"))
	}
	o.resolve(op)
	return gateway.OperationStatus{Reference: ref, Status: op.status, FailureCode: op.code}, nil
}

func (o *modelOperator) read(ref string) (gateway.OperationStatus, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.reads) > 0 {
		fail := o.reads[0]
		o.reads = o.reads[1:]
		if fail {
			return gateway.OperationStatus{}, gateway.Unavailable(errors.New("status read failed"))
		}
	}
	op, ok := o.ops[ref]
	if !ok || o.now().Before(op.created) {
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusNotFound}, nil
	}
	o.resolve(op)
	return gateway.OperationStatus{Reference: ref, Status: op.status, FailureCode: op.code}, nil
}

func (o *modelOperator) Collect(_ context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	st, err := o.send(req.Reference)
	return gateway.CollectResult{Status: st.Status, FailureCode: st.FailureCode}, err
}

func (o *modelOperator) ConfirmOTP(context.Context, string, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, gateway.Invalid("no_otp", "no OTP here")
}

func (o *modelOperator) CollectionStatus(_ context.Context, ref string) (gateway.OperationStatus, error) {
	return o.read(ref)
}

func (o *modelOperator) Disburse(_ context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	return o.send(req.Reference)
}

func (o *modelOperator) DisbursementStatus(_ context.Context, ref string) (gateway.OperationStatus, error) {
	return o.read(ref)
}

func (o *modelOperator) ParseCallback(context.Context, http.Header, []byte) (gateway.Callback, error) {
	return gateway.Callback{}, errors.New("not used")
}

func (o *modelOperator) CancelCollection(_ context.Context, ref string) (gateway.OperationStatus, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cancel == cancelUnclear {
		return gateway.OperationStatus{}, gateway.Ambiguous(errors.New("cancel answer lost"))
	}
	op, ok := o.ops[ref]
	if !ok || o.now().Before(op.created) {
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusNotFound}, nil
	}
	o.resolve(op)
	if op.status == gateway.StatusPending && o.cancel == cancelHonoured {
		op.status, op.code = gateway.StatusFailed, gateway.FailureCancelled
	}
	return gateway.OperationStatus{Reference: ref, Status: op.status, FailureCode: op.code}, nil
}

// successes counts the operations the operator says it completed for these references.
func successes(ops []*modelOperator, refs []uuid.UUID) int {
	n := 0
	for _, o := range ops {
		o.mu.Lock()
		for _, ref := range refs {
			if op, ok := o.ops[ref.String()]; ok {
				o.resolve(op)
				if op.status == gateway.StatusSuccess {
					n++
				}
			}
		}
		o.mu.Unlock()
	}
	return n
}

// drawOperator draws one gateway's script.
func drawOperator(t *rapid.T, name string, mu *sync.Mutex, payout bool) *modelOperator {
	outcomes := []gateway.Status{gateway.StatusSuccess, gateway.StatusFailed}
	if !payout {
		outcomes = append(outcomes, gateway.StatusPending) // a push never approved
	}
	return &modelOperator{
		name: name,
		mu:   mu,
		sends: rapid.SliceOfN(rapid.SampledFrom([]sendAnswer{sendAccept, sendAcceptLost, sendLost, sendUnavailable, sendDeclined,
			sendUnavailablePaid}), 0, 6).Draw(t, name+" sends"),
		signed:  rapid.Bool().Draw(t, name+" signs its callbacks"),
		reads:   rapid.SliceOfN(rapid.Bool(), 0, 8).Draw(t, name+" failed reads"),
		cancel:  rapid.SampledFrom([]cancelPolicy{cancelHonoured, cancelRefused, cancelUnclear}).Draw(t, name+" cancel"),
		outcome: rapid.SampledFrom(outcomes).Draw(t, name+" fate"),
		// Before the push lifetime, around it, or well after it (a late success).
		after:   rapid.SampledFrom([]time.Duration{0, 2 * time.Second, 40 * time.Second, 119 * time.Second, 3 * time.Minute, 20 * time.Minute}).Draw(t, name+" after"),
		visible: rapid.SampledFrom([]time.Duration{time.Second, 20 * time.Second, 59 * time.Second}).Draw(t, name+" visible after"),
		ops:     map[string]*modelOp{},
	}
}

// modelFixture is the merchant every model run pays, with a funded TEST wallet in Benin.
type modelFixture struct {
	merchant sika.Merchant
	network  sika.Network
}

func newModelFixture(t *testing.T) modelFixture {
	ctx := t.Context()
	_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "Model", Country: "BJ"})
	require.NoError(t, err)
	n, err := st.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	f := modelFixture{merchant: *m, network: n}
	// Fund the wallet for the payouts.
	fund := f.transaction(t, sika.TypePayment, "100000000")
	created, _, _, err := st.CreateTransaction(ctx, store.NewTransaction{Transaction: fund}, store.WorkflowStart{})
	require.NoError(t, err)
	_, _, err = st.CompletePayment(ctx, store.Completion{TransactionID: created.ID, Run: 1, Status: sika.StatusSuccess, Reason: "funding", TriggeredBy: sika.TriggerSystem})
	require.NoError(t, err)
	return f
}

func (f modelFixture) transaction(t require.TestingT, typ sika.TransactionType, amount string) sika.Transaction {
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("MDL", time.Now())
	require.NoError(t, err)
	a := sika.NewAmount(decimal.RequireFromString(amount))
	return sika.Transaction{ID: id, Reference: ref, Merchant: f.merchant.ID, Environment: sika.EnvironmentTest, Type: typ,
		RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: "XOF", Country: "BJ", NetworkID: f.network.ID,
		Network: f.network.Code, CustomerPhone: "+22997000123", Recipient: "+22997000123", FeeChargeMode: sika.FeeDeducted}
}

// session creates a PENDING checkout session of 1000 XOF for the fixture's merchant.
func (f modelFixture) session(t require.TestingT) sika.CheckoutSession {
	id, err := uuid.NewV7()
	require.NoError(t, err)
	expires := time.Now().Add(24 * time.Hour)
	c, _, err := st.CreateCheckoutSession(context.Background(), sika.CheckoutSession{
		ID: id, Merchant: f.merchant.ID, Environment: sika.EnvironmentTest, Slug: "cs_" + id.String(),
		CheckoutURL: "https://pay.example.com/pay/cs_" + id.String() + "/", Amount: sika.NewAmount(decimal.NewFromInt(1000)),
		Currency: "XOF", CustomerName: "Model", ExpiresAt: &expires,
	}, func(sika.CheckoutSession) store.WorkflowStart { return store.WorkflowStart{} })
	require.NoError(t, err)
	return c
}

// modelCounts counts what the model's cases exercised, for the note.
type modelCounts struct {
	sync.Mutex
	cases, broke, paidTwice, kept, retriesRefused, retriesTaken, sessionRefused, sessionTaken int
}

var modelStats modelCounts

func TestMoneySafetyModel(t *testing.T) {
	f := newModelFixture(t)
	defer func() {
		m := &modelStats
		t.Logf("model cases %d: an operator broke its word in %d, paid twice %d, answers kept for a run %d, "+
			"retries refused %d / taken %d, new session payments refused %d / taken %d",
			m.cases, m.broke, m.paidTwice, m.kept, m.retriesRefused, m.retriesTaken, m.sessionRefused, m.sessionTaken)
	}()
	for _, payout := range []bool{false, true} {
		name := "collection"
		if payout {
			name = "payout"
		}
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { runModel(t, rt, f, payout) })
		})
	}
	disc, err := st.CheckLedger(t.Context())
	require.NoError(t, err)
	require.Nil(t, disc, "every wallet equals its ledger")
}

func runModel(t *testing.T, rt *rapid.T, f modelFixture, payout bool) {
	ctx := context.WithoutCancel(t.Context())
	var mu sync.Mutex
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	env := suite.NewTestWorkflowEnvironment()
	var after time.Time // once the runs are over, the operators live on to the end of their windows
	now := func() time.Time {
		if !after.IsZero() {
			return after
		}
		return env.Now()
	}
	opA, opB := drawOperator(rt, "sandbox-a", &mu, payout), drawOperator(rt, "sandbox-b", &mu, payout)
	opA.now, opB.now = now, now
	ops := []*modelOperator{opA, opB}
	callbacks := rapid.Bool().Draw(rt, "operators send callbacks")
	// The first callbacks come before the run has heard back from its gateway, or later.
	firstCallback := rapid.SampledFrom([]time.Duration{time.Second, 20 * time.Second}).Draw(rt, "first callback after")
	session := !payout && rapid.Bool().Draw(rt, "paid through a checkout session")
	retry := !payout && rapid.Bool().Draw(rt, "the merchant retries a failed payment")
	router := gateway.NewRouter(gateway.HealthPolicy{FailuresToTrip: 1000}, opA, opB)
	acts := &activities.Activities{Store: st, Gateways: router, PushLifetime: modelLifetime}
	env.RegisterActivity(acts)

	typ, wf := sika.TypePayment, Payment
	if payout {
		typ, wf = sika.TypePayout, Payout
	}
	tx := f.transaction(rt, typ, "1000")
	var sess sika.CheckoutSession
	var err error
	switch {
	case payout:
		tx, _, _, err = st.CreatePayout(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{})
	case session:
		sess = f.session(rt)
		tx.CheckoutSession = &sess.ID
		tx, _, err = st.CreateCheckoutPayment(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{}, time.Now())
	default:
		tx, _, _, err = st.CreateTransaction(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{})
	}
	require.NoError(rt, err)
	refs := []uuid.UUID{activities.AttemptID(tx.ID, 1, 1), activities.AttemptID(tx.ID, 1, 2)}

	// The operators' callbacks, every 20 s: each final operation is reported once, signed or
	// not as its operator does, through what the API does with it (activities.ReceiveCallback);
	// signal hands it to the running workflow, and answers false once there is none.
	told := map[string]bool{}
	running := false
	report := func() {
		for _, o := range ops {
			if !callbacks && !o.broke {
				continue
			}
			o.mu.Lock()
			for ref, op := range o.ops {
				o.resolve(op)
				if !op.status.Final() || told[ref] || o.now().Before(op.created) {
					continue
				}
				o.mu.Unlock()
				cb := gateway.Callback{OperationStatus: gateway.OperationStatus{Reference: ref, Status: op.status, FailureCode: op.code},
					Trusted: o.signed}
				if payout {
					cb.Kind = gateway.CallbackDisbursement
				}
				attemptID := uuid.MustParse(ref)
				signal := func(context.Context, sika.Transaction) (bool, error) {
					if !running {
						return false, nil
					}
					env.SignalWorkflow(SignalGatewayCallback, GatewayCallback{AttemptID: attemptID, Status: cb.Status,
						FailureCode: cb.FailureCode, Trusted: cb.Trusted})
					return true, nil
				}
				// An error is a 5xx: the operator sends it again at its next report.
				if _, err := activities.ReceiveCallback(ctx, st, router, o.name, attemptID, cb, signal); err == nil {
					told[ref] = true
					if cb.Trusted && cb.Status == gateway.StatusSuccess {
						// Answered 2xx: what the operator said is in Postgres already (the attempt
						// paid, or its answer kept for the run that decides), whatever else
						// would find it later (a re-read, the run's own status poll).
						var durable bool
						require.NoError(rt, st.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM transaction_attempts WHERE id = $1 AND status = 'SUCCESS')
							OR EXISTS (SELECT 1 FROM operator_answers WHERE attempt_id = $1)`, attemptID).Scan(&durable))
						if !durable {
							attempt, tx, err := st.AttemptAndTransaction(ctx, attemptID)
							require.NoError(rt, err)
							rt.Fatalf("a signed success answered 2xx was neither recorded nor kept: attempt %s (%s) of transaction %s (%s, run %d)",
								attempt.ID, attempt.Status, tx.ID, tx.Status, tx.Run)
						}
					}
				}
				o.mu.Lock()
			}
			o.mu.Unlock()
		}
	}
	run := func(in activities.PaymentInput) {
		for d := firstCallback; d < 30*time.Minute; d += 20 * time.Second {
			env.RegisterDelayedCallback(report, d)
		}
		running = true
		env.ExecuteWorkflow(wf, in)
		running = false
		require.True(rt, env.IsWorkflowCompleted())
		require.NoError(rt, env.GetWorkflowError())
	}
	run(activities.PaymentInput{TransactionID: tx.ID, Run: 1})

	// Beside a payment that may still be paid, a new payment of its session and a retry must
	// wait (409 outcome_unresolved); once nothing may still be paid, they are taken.
	stillPayable := func() bool {
		for _, o := range ops {
			o.mu.Lock()
			for _, ref := range refs {
				if op, ok := o.ops[ref.String()]; ok {
					o.resolve(op)
					if !op.status.Final() && !op.broken {
						o.mu.Unlock()
						return true
					}
				}
			}
			o.mu.Unlock()
		}
		return false
	}
	got, err := st.Transaction(ctx, tx.ID)
	require.NoError(rt, err)
	if session && got.Status == sika.StatusFailed {
		next := f.transaction(rt, sika.TypePayment, "1000")
		next.CheckoutSession = &sess.ID
		created, _, err := st.CreateCheckoutPayment(ctx, store.NewTransaction{Transaction: next}, store.WorkflowStart{}, time.Now())
		switch {
		case err == nil && stillPayable():
			rt.Fatalf("a new payment of the session was taken while payment %s may still be paid", tx.ID)
		case err == nil:
			modelStats.count(&modelStats.sessionTaken)
			// Taken: the customer abandons it at once (no workflow here).
			_, _, err = st.CompletePayment(ctx, store.Completion{TransactionID: created.ID, Run: 1, Status: sika.StatusFailed,
				Reason: "abandoned", TriggeredBy: sika.TriggerSystem})
			require.NoError(rt, err)
		case sika.ErrorCode(err) != sika.CodeOutcomeUnresolved:
			rt.Fatalf("a new payment of the session: %v", err)
		default:
			modelStats.count(&modelStats.sessionRefused)
		}
	}
	if retry && got.Status == sika.StatusFailed {
		_, _, err := st.RetryPayment(ctx, f.merchant.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, func(sika.Transaction) store.WorkflowStart {
			return store.WorkflowStart{}
		})
		switch {
		case err == nil && stillPayable():
			rt.Fatalf("a retry was taken while payment %s may still be paid", tx.ID)
		case err == nil:
			modelStats.count(&modelStats.retriesTaken)
			// The second run, with the same operators, their clock going on.
			start := env.Now()
			env = suite.NewTestWorkflowEnvironment()
			env.SetStartTime(start)
			env.RegisterActivity(acts)
			refs = append(refs, activities.AttemptID(tx.ID, 2, 1), activities.AttemptID(tx.ID, 2, 2))
			run(activities.PaymentInput{TransactionID: tx.ID, Run: 2})
		case sika.ErrorCode(err) != sika.CodeOutcomeUnresolved:
			rt.Fatalf("a retry: %v", err)
		default:
			modelStats.count(&modelStats.retriesRefused)
		}
	}

	// Later: every fate has happened; late callbacks reach the API (the workflow is gone), then
	// the re-check sweep reads what is left.
	after = env.Now().Add(48 * time.Hour)
	for range 10 { // operators resend what was answered 5xx (a status read that failed)
		report()
	}
	// The schedule runs every interval for the operator's window: a read that fails now is
	// made again by a later sweep (the scripts fail at most 8 reads).
	sweep := suite.NewTestActivityEnvironment()
	sweep.RegisterActivity(acts)
	for range 10 {
		_, err = sweep.ExecuteActivity(acts.RecheckEndedAttempts, time.Duration(0))
		require.NoError(rt, err)
	}

	paid := successes(ops, refs)
	broke := opA.broke || opB.broke
	got, err = st.Transaction(ctx, tx.ID)
	require.NoError(rt, err)
	count := func(query string) int {
		var n int
		require.NoError(rt, st.Pool().QueryRow(ctx, query, tx.ID).Scan(&n))
		return n
	}
	entries := func(typ sika.LedgerType) int {
		return count(`SELECT count(*) FROM ledger_entries WHERE transaction_id = $1 AND type = '` + string(typ) + `'`)
	}
	flags := func(kind store.FlagKind) int {
		return count(`SELECT count(*) FROM money_flags WHERE transaction_id = $1 AND kind = '` + string(kind) + `'`)
	}
	what := fmt.Sprintf("transaction %s %s (%s), operator successes %d, an operator broke its word %v", tx.ID, got.Status, got.FailureCode, paid, broke)
	if paid > 1 && !broke {
		rt.Fatalf("charged twice through Sika: %s", what)
	}
	if n := count(`SELECT count(*) FROM operator_answers WHERE transaction_id = $1 AND processed_at IS NULL`); n != 0 {
		rt.Fatalf("%d operator answers left unprocessed: %s", n, what)
	}
	if got.Status != sika.StatusPending {
		// A decided transaction leaves no attempt open: each was ended by its run (a stale run's
		// too, with its re-read window when its operator had not said its last word).
		if n := count(`SELECT count(*) FROM transaction_attempts WHERE transaction_id = $1 AND status = 'PENDING'`); n != 0 {
			rt.Fatalf("%d attempts left PENDING: %s", n, what)
		}
	}
	modelStats.count(&modelStats.cases)
	if broke {
		modelStats.count(&modelStats.broke)
	}
	if paid > 1 {
		modelStats.count(&modelStats.paidTwice)
	}
	if count(`SELECT count(*) FROM operator_answers WHERE transaction_id = $1`) > 0 {
		modelStats.count(&modelStats.kept)
	}
	if payout {
		switch {
		case paid >= 1 && got.Status == sika.StatusFailed && broke:
			// Paid after the run released the hold (only an operator that broke its word can):
			// flagged, and held again.
			if flags(store.FlagPayoutPaidAfterRelease) != paid || entries(sika.LedgerPayoutHold) != 1+paid {
				rt.Fatalf("a payout paid after its release must be flagged and held again: %s, flags %d, holds %d", what,
					flags(store.FlagPayoutPaidAfterRelease), entries(sika.LedgerPayoutHold))
			}
		case paid >= 1 && (entries(sika.LedgerPayoutReversal) != 0 || entries(sika.LedgerPayout) != 1 || got.Status != sika.StatusSuccess):
			rt.Fatalf("a paid payout must be settled and never released: %s, reversals %d, settlements %d", what,
				entries(sika.LedgerPayoutReversal), entries(sika.LedgerPayout))
		case paid >= 1 && flags(store.FlagPayoutPaidTwice) != paid-1:
			rt.Fatalf("a payout paid twice must be flagged: %s, flags %d", what, flags(store.FlagPayoutPaidTwice))
		case paid == 0 && (entries(sika.LedgerPayoutReversal) != 1 || entries(sika.LedgerPayout) != 0 || got.Status != sika.StatusFailed):
			rt.Fatalf("an unpaid payout ends FAILED with its hold released once: %s", what)
		}
		return
	}
	if credits := entries(sika.LedgerCollection); credits != paid {
		rt.Fatalf("every operator success is credited exactly once: %s, credits %d", what, credits)
	}
	if paid > 1 && flags(store.FlagRefundDue) != paid-1 {
		rt.Fatalf("every second success is flagged for refund: %s, flags %d", what, flags(store.FlagRefundDue))
	}
	want := sika.StatusFailed
	if paid >= 1 {
		want = sika.StatusSuccess
	}
	if got.Status != want {
		rt.Fatalf("the record must end as the operator did: %s", what)
	}
}

func (m *modelCounts) count(n *int) {
	m.Lock()
	*n++
	m.Unlock()
}
