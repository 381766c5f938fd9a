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

// modelSettle and modelLateWindow are the scripted operators' windows.
const (
	modelSettle     = time.Minute
	modelLateWindow = time.Hour
	modelLifetime   = 2 * time.Minute
)

type sendAnswer int

const (
	sendAccept      sendAnswer = iota // accepted, answered
	sendAcceptLost                    // accepted, the answer lost (ambiguous); visible after a delay
	sendLost                          // not accepted, but the answer lost (ambiguous)
	sendUnavailable                   // refused before acceptance (503)
	sendDeclined                      // refused for good
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
}

type modelOp struct {
	created time.Time
	status  gateway.Status
	code    string
	calls   int // initiations received
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
		if answer == sendUnavailable {
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
		name:    name,
		mu:      mu,
		sends:   rapid.SliceOfN(rapid.SampledFrom([]sendAnswer{sendAccept, sendAcceptLost, sendLost, sendUnavailable, sendDeclined}), 0, 6).Draw(t, name+" sends"),
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
	_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", false, &store.NewMerchant{Name: "Model", Country: "BJ"})
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

func TestMoneySafetyModel(t *testing.T) {
	f := newModelFixture(t)
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
	var after time.Time // once the run is over, the operators live on to the end of their windows
	now := func() time.Time {
		if !after.IsZero() {
			return after
		}
		return env.Now()
	}
	opA, opB := drawOperator(rt, "sandbox-a", &mu, payout), drawOperator(rt, "sandbox-b", &mu, payout)
	opA.now, opB.now = now, now
	callbacks := rapid.Bool().Draw(rt, "operators send callbacks")
	router := gateway.NewRouter(gateway.HealthPolicy{FailuresToTrip: 1000}, opA, opB)
	acts := &activities.Activities{Store: st, Gateways: router, PushLifetime: modelLifetime}
	env.RegisterActivity(acts)

	typ, wf := sika.TypePayment, Payment
	if payout {
		typ, wf = sika.TypePayout, Payout
	}
	tx := f.transaction(rt, typ, "1000")
	var err error
	if payout {
		tx, _, _, err = st.CreatePayout(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{})
	} else {
		tx, _, _, err = st.CreateTransaction(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{})
	}
	require.NoError(rt, err)
	refs := []uuid.UUID{activities.AttemptID(tx.ID, 1, 1), activities.AttemptID(tx.ID, 1, 2)}

	// The operators' callbacks: every 20 s, each final operation is reported once, signed.
	told := map[string]bool{}
	report := func(deliver func(GatewayCallback)) {
		for _, o := range []*modelOperator{opA, opB} {
			o.mu.Lock()
			for ref, op := range o.ops {
				o.resolve(op)
				if op.status.Final() && !told[ref] && !o.now().Before(op.created) {
					told[ref] = true
					id := uuid.MustParse(ref)
					o.mu.Unlock()
					deliver(GatewayCallback{AttemptID: id, Status: op.status, FailureCode: op.code, Trusted: true})
					o.mu.Lock()
				}
			}
			o.mu.Unlock()
		}
	}
	if callbacks {
		for d := 20 * time.Second; d < 30*time.Minute; d += 20 * time.Second {
			env.RegisterDelayedCallback(func() {
				report(func(cb GatewayCallback) { env.SignalWorkflow(SignalGatewayCallback, cb) })
			}, d)
		}
	}
	env.ExecuteWorkflow(wf, activities.PaymentInput{TransactionID: tx.ID, Run: 1})
	require.True(rt, env.IsWorkflowCompleted())
	require.NoError(rt, env.GetWorkflowError())

	// Later: every fate has happened; late callbacks reach the API (the workflow is gone), then
	// the re-check sweep reads what is left.
	after = env.Now().Add(48 * time.Hour)
	if callbacks {
		report(func(cb GatewayCallback) {
			if cb.Status != gateway.StatusSuccess {
				return
			}
			_, err := activities.ReconcileLateAnswer(ctx, st, router, activities.LateAnswer{AttemptID: cb.AttemptID, Status: cb.Status,
				Trusted: true, Source: "signed callback"})
			if sika.ErrorCode(err) != sika.CodeNotFound {
				require.NoError(rt, err)
			}
		})
	}
	// The schedule runs every interval for the operator's window: a read that fails now is
	// made again by a later sweep (the scripts fail at most 8 reads).
	sweep := suite.NewTestActivityEnvironment()
	sweep.RegisterActivity(acts)
	for range 10 {
		_, err = sweep.ExecuteActivity(acts.RecheckEndedAttempts, time.Duration(0))
		require.NoError(rt, err)
	}

	paid := successes([]*modelOperator{opA, opB}, refs)
	got, err := st.Transaction(ctx, tx.ID)
	require.NoError(rt, err)
	count := func(typ sika.LedgerType) int {
		var n int
		require.NoError(rt, st.Pool().QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE transaction_id = $1 AND type = $2`, tx.ID, typ).Scan(&n))
		return n
	}
	what := fmt.Sprintf("transaction %s %s (%s), operator successes %d", tx.ID, got.Status, got.FailureCode, paid)
	if paid > 1 {
		rt.Fatalf("charged twice through Sika: %s", what)
	}
	if payout {
		switch {
		case paid == 1 && (count(sika.LedgerPayoutReversal) != 0 || count(sika.LedgerPayout) != 1 || got.Status != sika.StatusSuccess):
			rt.Fatalf("a paid payout must be settled and never released: %s, reversals %d, settlements %d", what, count(sika.LedgerPayoutReversal), count(sika.LedgerPayout))
		case paid == 0 && (count(sika.LedgerPayoutReversal) != 1 || count(sika.LedgerPayout) != 0 || got.Status != sika.StatusFailed):
			rt.Fatalf("an unpaid payout ends FAILED with its hold released once: %s", what)
		}
		return
	}
	if credits := count(sika.LedgerCollection); credits != paid {
		rt.Fatalf("every operator success is credited exactly once: %s, credits %d", what, credits)
	}
	want := sika.StatusFailed
	if paid == 1 {
		want = sika.StatusSuccess
	}
	if got.Status != want {
		rt.Fatalf("the record must end as the operator did: %s", what)
	}
}
