package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// The transaction and run every scenario pays (run 2: a retried payment, so that a run number
// taken from anywhere but the input shows).
var payTx = uuid.MustParse("0190f3c2-7d1e-7a4b-9c2d-5e6f7a8b9c0d")

const payRun = 2

// The two gateways of the network, in routing order.
var (
	gwA = gateway.Candidate{Gateway: "sandbox-a", Priority: 1}
	gwB = gateway.Candidate{Gateway: "sandbox-b", Priority: 2}
)

// twoGateways is the plan of a push network routed to gwA then gwB.
func twoGateways() activities.PaymentPlan {
	return activities.PaymentPlan{Proceed: true, Gateways: []gateway.Candidate{gwA, gwB}, OTPKind: sika.OTPNone, PushLifetime: 2 * time.Minute}
}

// startInput is the StartCollection input of the attempt of sequence seq at cand.
func startInput(seq int, cand gateway.Candidate) activities.StartCollectionInput {
	return activities.StartCollectionInput{TransactionID: payTx, Run: payRun, Sequence: seq, Candidate: cand}
}

// resendInput is the StartCollection input of the attempt of sequence seq at cand sent again
// after a NOT_FOUND read.
func resendInput(seq int, cand gateway.Candidate) activities.StartCollectionInput {
	in := startInput(seq, cand)
	in.Resend = true
	return in
}

// expiredUnclear is the record of a run whose push lifetime ended on attempt o, its cancel not
// confirmed: FAILED expired, the attempt re-read for an hour.
func expiredUnclear(o activities.CollectionOutcome) store.Completion {
	o.Kind, o.FailureCode, o.FailureMessage = activities.OutcomeFailed, gateway.FailureExpired, "The customer did not approve the payment in time."
	c := completion(o, sika.StatusFailed, sika.TriggerSystem, "Refused by "+o.Gateway+": expired (cancel not confirmed: re-read at "+o.Gateway+" for 1h0m0s)")
	c.RecheckFor = time.Hour
	return c
}

// attempt is a gateway's answer of the given kind about the attempt of sequence seq at cand.
func attempt(seq int, cand gateway.Candidate, kind activities.OutcomeKind) activities.CollectionOutcome {
	return activities.CollectionOutcome{
		Kind: kind, AttemptID: activities.AttemptID(payTx, payRun, seq), Gateway: cand.Gateway,
		GatewayReference: fmt.Sprintf("%s-ref-%d", cand.Gateway, seq),
	}
}

// as is o answered with another kind.
func as(o activities.CollectionOutcome, kind activities.OutcomeKind) activities.CollectionOutcome {
	o.Kind = kind
	return o
}

// refused is o answered FAILED with code.
func refused(o activities.CollectionOutcome, code string) activities.CollectionOutcome {
	o.Kind, o.FailureCode, o.FailureMessage = activities.OutcomeFailed, code, "operator says "+code
	return o
}

// unavailable is what StartCollection answers when cand did not accept the attempt seq.
func unavailable(seq int, cand gateway.Candidate) activities.CollectionOutcome {
	o := attempt(seq, cand, activities.OutcomeUnavailable)
	o.GatewayReference, o.FailureCode, o.FailureMessage = "", gateway.FailureGatewayUnavailable, "The gateway did not accept the request."
	return o
}

// completion is the record of a run that ends with status on outcome o.
func completion(o activities.CollectionOutcome, status sika.TransactionStatus, by sika.Trigger, reason string) store.Completion {
	attemptStatus := sika.AttemptSuccess
	if status == sika.StatusFailed {
		attemptStatus = sika.AttemptFailed
	}
	return store.Completion{
		TransactionID: payTx, Run: payRun, Gateway: o.Gateway, Status: status, Reason: reason, TriggeredBy: by,
		Attempt: store.AttemptUpdate{ID: o.AttemptID, Status: attemptStatus, GatewayReference: o.GatewayReference,
			FailureCode: o.FailureCode, FailureMessage: o.FailureMessage},
	}
}

// succeeded and failedWith are the results of a run.
var succeeded = PaymentResult{Status: sika.StatusSuccess}

func failedWith(code string) PaymentResult {
	return PaymentResult{Status: sika.StatusFailed, FailureCode: code}
}

// secs lists durations in seconds.
func secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

// check fails the test with got and want when they differ.
func check[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	assert.Equal(t, want, got, "%s: got (actual) differs from want (expected)", what)
}

// paymentRun is one Payment run in the time-skipping test environment: its local activities
// answer from the scripts below and record how, and when (time since the run started), they
// were called. Set the scripts, the callbacks and the updates, then execute.
type paymentRun struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment

	plan activities.PaymentPlan
	// starts answers StartCollection calls in order; a call beyond it fails the run.
	starts []activities.CollectionOutcome
	// checks answers CheckCollection reads in order; the last answer repeats.
	checks []activities.CollectionOutcome
	// otps answers ConfirmCollectionOTP calls in order.
	otps []activities.OTPConfirmation
	// cancels answers CancelCollection calls in order; the last answer repeats; none scripted
	// answers an unclear cancel (PENDING, re-read for an hour).
	cancels []activities.CollectionOutcome
	// recorded is the status CompletePayment answers; zero means the status it was given.
	recorded sika.TransactionStatus
	// payout runs the Payout workflow, whose gateway steps (StartDisbursement,
	// CheckDisbursement) answer from the same scripts as StartCollection and CheckCollection.
	payout bool
	// failures makes the named local activity fail that many times (a plain, retryable error)
	// before it answers.
	failures map[string]int
	// How long StartCollection, CheckCollection, ConfirmCollectionOTP and CompletePayment take,
	// on the workflow clock.
	startTakes, checkTakes, otpTakes, completeTakes time.Duration

	mu          sync.Mutex
	begin       time.Time
	started     []activities.StartCollectionInput // every call, failed ones included
	answered    map[string]int                    // calls that did not fail, by activity
	checked     []uuid.UUID                       // the attempt of each CheckCollection read
	checkedAt   []time.Duration                   // when each read answered
	confirmed   []activities.ConfirmOTPInput
	completed   []store.Completion
	completedAt []time.Duration // when each CompletePayment answered
	cancelled   []uuid.UUID     // the attempt of each CancelCollection call
	reconciled  []activities.LateAnswer
	updates     int
}

func newPaymentRun(t *testing.T, plan activities.PaymentPlan, starts ...activities.CollectionOutcome) *paymentRun {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	r := &paymentRun{t: t, env: s.NewTestWorkflowEnvironment(), plan: plan, starts: starts, failures: map[string]int{}, answered: map[string]int{}}
	mockLocal(r, a.PreparePayment, nil, func(in activities.PaymentInput) (activities.PaymentPlan, error) {
		if r.begin.IsZero() {
			r.begin = r.env.Now()
		}
		check(t, "PreparePayment input", in, activities.PaymentInput{TransactionID: payTx, Run: payRun})
		return reply(r, "PreparePayment", []activities.PaymentPlan{r.plan}, true)
	})
	mockLocal(r, a.StartCollection, &r.startTakes, func(in activities.StartCollectionInput) (activities.CollectionOutcome, error) {
		r.started = append(r.started, in)
		return reply(r, "StartCollection", r.starts, false)
	})
	mockLocal(r, a.CheckCollection, &r.checkTakes, func(id uuid.UUID) (activities.CollectionOutcome, error) {
		r.checked, r.checkedAt = append(r.checked, id), append(r.checkedAt, r.elapsed())
		return reply(r, "CheckCollection", r.checks, true)
	})
	mockLocal(r, a.StartDisbursement, &r.startTakes, func(in activities.StartCollectionInput) (activities.CollectionOutcome, error) {
		r.started = append(r.started, in)
		return reply(r, "StartCollection", r.starts, false)
	})
	mockLocal(r, a.CheckDisbursement, &r.checkTakes, func(id uuid.UUID) (activities.CollectionOutcome, error) {
		r.checked, r.checkedAt = append(r.checked, id), append(r.checkedAt, r.elapsed())
		return reply(r, "CheckCollection", r.checks, true)
	})
	mockLocal(r, a.ConfirmCollectionOTP, &r.otpTakes, func(in activities.ConfirmOTPInput) (activities.OTPConfirmation, error) {
		r.confirmed = append(r.confirmed, in)
		return reply(r, "ConfirmCollectionOTP", r.otps, false)
	})
	mockLocal(r, a.CancelCollection, nil, func(id uuid.UUID) (activities.CollectionOutcome, error) {
		r.cancelled = append(r.cancelled, id)
		if len(r.cancels) == 0 {
			out := r.starts[0]
			out.Kind, out.RecheckFor, out.NextAction = activities.OutcomePending, time.Hour, gateway.NextAction{}
			return out, nil
		}
		return reply(r, "CancelCollection", r.cancels, true)
	})
	mockLocal(r, a.ReconcileLateAnswer, nil, func(in activities.LateAnswer) (store.ReconcileOutcome, error) {
		r.reconciled = append(r.reconciled, in)
		return store.ReconcileCredited, nil
	})
	mockLocal(r, a.CompletePayment, &r.completeTakes, func(c store.Completion) (sika.TransactionStatus, error) {
		r.completed, r.completedAt = append(r.completed, c), append(r.completedAt, r.elapsed())
		recorded := c.Status
		if r.recorded != "" {
			recorded = r.recorded
		}
		return reply(r, "CompletePayment", []sika.TransactionStatus{recorded}, true)
	})
	return r
}

// mockLocal scripts a local activity: answer runs locked, once the call has taken *takes (nil:
// no time) on the workflow clock.
func mockLocal[In, Out any](r *paymentRun, activity func(context.Context, In) (Out, error), takes *time.Duration, answer func(In) (Out, error)) {
	call := r.env.OnActivity(activity, mock.Anything, mock.Anything)
	if takes != nil {
		call.AfterFn(func() time.Duration { return *takes })
	}
	call.Return(func(_ context.Context, in In) (Out, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return answer(in)
	})
}

// reply answers a call of the activity: a plain (retryable) error while it has failures left,
// then answers in order; repeat keeps answering the last one. A call the script does not cover
// fails the run (non-retryable), which the test then reports. Call it locked.
func reply[T any](r *paymentRun, activity string, answers []T, repeat bool) (T, error) {
	var zero T
	if r.failures[activity] > 0 {
		r.failures[activity]--
		return zero, errors.New(activity + ": connection reset by peer")
	}
	i := r.answered[activity]
	r.answered[activity]++
	if repeat && i >= len(answers) && len(answers) > 0 {
		i = len(answers) - 1
	}
	if i >= len(answers) {
		return zero, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unscripted %s call %d", activity, i+1), "test", nil)
	}
	return answers[i], nil
}

// elapsed is the workflow time since the run started. Call it locked.
func (r *paymentRun) elapsed() time.Duration { return r.env.Now().Sub(r.begin) }

// callback delivers the gateway callbacks, in order, after d.
func (r *paymentRun) callback(d time.Duration, cbs ...GatewayCallback) {
	r.env.RegisterDelayedCallback(func() {
		for _, cb := range cbs {
			r.env.SignalWorkflow(SignalGatewayCallback, cb)
		}
	}, d)
}

// trusted is a signed callback that reports status and ref for the attempt of o.
func trusted(o activities.CollectionOutcome, status gateway.Status, ref string) GatewayCallback {
	return GatewayCallback{AttemptID: o.AttemptID, Status: status, GatewayReference: ref, Trusted: true}
}

// updateCall is one workflow update and its answer.
type updateCall struct {
	rejected error // the validator refused it
	done     bool  // the handler answered
	result   any
	err      error
	at       time.Duration // when it answered
}

// update sends the named update after d.
func (r *paymentRun) update(d time.Duration, name string, args ...any) *updateCall {
	u := &updateCall{}
	r.updates++
	id := fmt.Sprintf("%s-%d", name, r.updates)
	r.env.RegisterDelayedCallback(func() {
		r.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				u.rejected = err
			},
			OnComplete: func(res any, err error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				u.done, u.result, u.err, u.at = true, res, err, r.elapsed()
			},
		}, args...)
	}, d)
	return u
}

// execute runs the workflow to its end and returns its result.
func (r *paymentRun) execute() PaymentResult {
	r.t.Helper()
	wf := Payment
	if r.payout {
		wf = Payout
	}
	r.env.ExecuteWorkflow(wf, activities.PaymentInput{TransactionID: payTx, Run: payRun})
	require.True(r.t, r.env.IsWorkflowCompleted(), "the run ended")
	require.NoError(r.t, r.env.GetWorkflowError())
	var res PaymentResult
	require.NoError(r.t, r.env.GetWorkflowResult(&res))
	return res
}

// wantCompleted checks the run recorded exactly one end, want, at the given time.
func (r *paymentRun) wantCompleted(want store.Completion, at time.Duration) {
	r.t.Helper()
	check(r.t, "CompletePayment calls", r.completed, []store.Completion{want})
	check(r.t, "CompletePayment time", r.completedAt, []time.Duration{at})
}

// wantStarted checks the StartCollection calls.
func (r *paymentRun) wantStarted(want ...activities.StartCollectionInput) {
	r.t.Helper()
	check(r.t, "StartCollection calls", r.started, want)
}

// wantChecked checks when the CheckCollection reads answered, all about attempt o.
func (r *paymentRun) wantChecked(o activities.CollectionOutcome, at []time.Duration) {
	r.t.Helper()
	check(r.t, "CheckCollection times", r.checkedAt, at)
	for i, id := range r.checked {
		check(r.t, fmt.Sprintf("CheckCollection %d attempt", i+1), id, o.AttemptID)
	}
}

// wantAnswered checks an update answered want without error at the given time.
func wantAnswered[T any](t *testing.T, u *updateCall, want T, at time.Duration) {
	t.Helper()
	require.NoError(t, u.rejected, "update rejected")
	require.True(t, u.done, "update answered")
	require.NoError(t, u.err, "update error")
	check(t, "update result", u.result, any(want))
	check(t, "update time", u.at, at)
}

// wantUpdateFailure checks an update failed (in its handler, or its validator when rejected)
// with an application error of type kind.
func wantUpdateFailure(t *testing.T, u *updateCall, kind string, rejected bool) {
	t.Helper()
	err := u.err
	if rejected {
		err = u.rejected
	} else {
		require.NoError(t, u.rejected, "update rejected")
		require.True(t, u.done, "update answered")
	}
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	check(t, "update error type", appErr.Type(), kind)
}

func TestPaymentInitiation(t *testing.T) {
	t.Run("a plan that does not proceed ends without touching anything", func(t *testing.T) {
		r := newPaymentRun(t, activities.PaymentPlan{})
		got := r.execute()
		check(t, "result", got, PaymentResult{})
		r.wantStarted()
		check(t, "CompletePayment calls", len(r.completed), 0)
	})
	t.Run("success at once", func(t *testing.T) {
		ok := attempt(1, gwA, activities.OutcomeSuccess)
		r := newPaymentRun(t, twoGateways(), ok)
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantStarted(startInput(1, gwA))
		r.wantChecked(ok, nil)
		r.wantCompleted(completion(ok, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 0)
	})
	for _, code := range []string{gateway.FailurePayerDeclined, gateway.FailureInvalidNumber} {
		t.Run("a decline at initiation is final: "+code, func(t *testing.T) {
			declined := refused(attempt(1, gwA, ""), code)
			r := newPaymentRun(t, twoGateways(), declined)
			got := r.execute()
			check(t, "result", got, failedWith(code))
			r.wantStarted(startInput(1, gwA))
			r.wantCompleted(completion(declined, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: "+code), 0)
		})
	}
	t.Run("an unavailable gateway falls back to the next one", func(t *testing.T) {
		second := attempt(2, gwB, activities.OutcomePending)
		r := newPaymentRun(t, twoGateways(), unavailable(1, gwA), second)
		r.checks = []activities.CollectionOutcome{as(second, activities.OutcomeSuccess)}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantStarted(startInput(1, gwA), startInput(2, gwB))
		r.wantChecked(second, secs(3))
		r.wantCompleted(completion(second, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-b"), 3*time.Second)
	})
	t.Run("every gateway unavailable fails with no attempt", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), unavailable(1, gwA), unavailable(2, gwB))
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureGatewayUnavailable))
		r.wantStarted(startInput(1, gwA), startInput(2, gwB))
		msg := "Every gateway of this network is unavailable; retry later."
		r.wantCompleted(store.Completion{
			TransactionID: payTx, Run: payRun, Status: sika.StatusFailed, Reason: msg, TriggeredBy: sika.TriggerSystem,
			Attempt: store.AttemptUpdate{Status: sika.AttemptFailed, FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: msg},
		}, 0)
	})
	t.Run("the result is the status the store kept", func(t *testing.T) {
		// The run was ended by another path first: CompletePayment leaves it as it is.
		declined := refused(attempt(1, gwA, ""), gateway.FailurePayerDeclined)
		r := newPaymentRun(t, twoGateways(), declined)
		r.recorded = sika.StatusSuccess
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantCompleted(completion(declined, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: payer_declined"), 0)
	})
}

func TestPaymentCallbacks(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)
	confirmed := pending
	confirmed.GatewayReference = "cb-ref"
	other := attempt(2, gwB, activities.OutcomePending)
	late := trusted(pending, gateway.StatusFailed, "late-ref")
	late.FailureCode = gateway.FailurePayerDeclined

	for _, tc := range []struct {
		name                      string
		startTakes, completeTakes time.Duration
		callbacks                 map[time.Duration][]GatewayCallback // by arrival time
		at                        time.Duration                       // when the end is recorded
	}{
		{
			name:      "a trusted SUCCESS before the first poll ends the run",
			callbacks: map[time.Duration][]GatewayCallback{2 * time.Second: {trusted(pending, gateway.StatusSuccess, "cb-ref")}},
			at:        2 * time.Second,
		},
		{
			name:          "other attempts, PENDING, duplicates and late callbacks are ignored",
			completeTakes: time.Second,
			callbacks: map[time.Duration][]GatewayCallback{
				time.Second: {trusted(other, gateway.StatusSuccess, "other-ref"), trusted(other, gateway.StatusFailed, "other-ref"),
					trusted(pending, gateway.StatusPending, "pending-ref")},
				2 * time.Second: {trusted(pending, gateway.StatusSuccess, "cb-ref"), trusted(pending, gateway.StatusSuccess, "duplicate-ref"),
					late, trusted(pending, gateway.StatusPending, "late-ref")},
				// While the end is being recorded (from 2 s to 3 s).
				2500 * time.Millisecond: {late, trusted(pending, gateway.StatusPending, "late-ref")},
			},
			at: 3 * time.Second,
		},
		{
			// Kept, they are applied together once the attempt is known: the first final one counts.
			name:       "callbacks that outrun StartCollection's answer are kept for the attempt",
			startTakes: 500 * time.Millisecond,
			callbacks: map[time.Duration][]GatewayCallback{0: {trusted(other, gateway.StatusFailed, "other-ref"),
				trusted(pending, gateway.StatusPending, "pending-ref"), trusted(pending, gateway.StatusSuccess, "cb-ref"),
				trusted(pending, gateway.StatusSuccess, "duplicate-ref"), late}},
			at: 500 * time.Millisecond,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPaymentRun(t, twoGateways(), pending)
			r.startTakes, r.completeTakes = tc.startTakes, tc.completeTakes
			for d, cbs := range tc.callbacks {
				r.callback(d, cbs...)
			}
			got := r.execute()
			check(t, "result", got, succeeded)
			r.wantStarted(startInput(1, gwA))
			r.wantChecked(pending, nil)
			r.wantCompleted(completion(confirmed, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback"), tc.at)
		})
	}
	t.Run("a FAILED callback ends the run with its code", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		cb := trusted(pending, gateway.StatusFailed, "cb-ref")
		cb.FailureCode, cb.FailureMessage = gateway.FailureInsufficientFunds, "Balance too low."
		r.callback(2*time.Second, cb)
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureInsufficientFunds))
		r.wantStarted(startInput(1, gwA))
		want := confirmed
		want.FailureCode, want.FailureMessage = gateway.FailureInsufficientFunds, "Balance too low."
		r.wantCompleted(completion(want, sika.StatusFailed, sika.TriggerWebhookCallback, "Refused by sandbox-a: insufficient_funds"), 2*time.Second)
	})
	for _, tc := range []struct {
		name       string
		startTakes time.Duration
		arrives    time.Duration
		at         time.Duration // when the status is read
	}{
		{"an untrusted callback makes the run read the status at once", 0, time.Second, time.Second},
		{"an untrusted callback that outruns StartCollection triggers a read once it answers", 500 * time.Millisecond, 0, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPaymentRun(t, twoGateways(), pending)
			r.startTakes = tc.startTakes
			r.checks = []activities.CollectionOutcome{as(pending, activities.OutcomeSuccess)}
			r.callback(tc.arrives, GatewayCallback{AttemptID: pending.AttemptID, Status: gateway.StatusSuccess, GatewayReference: "unsigned-ref"})
			got := r.execute()
			check(t, "result", got, succeeded)
			r.wantChecked(pending, []time.Duration{tc.at})
			r.wantCompleted(completion(pending, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), tc.at)
		})
	}
	t.Run("a callback that arrives during a status read wins over the read", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checkTakes = time.Second
		r.checks = []activities.CollectionOutcome{as(pending, activities.OutcomeSuccess)}
		r.callback(3500*time.Millisecond, trusted(pending, gateway.StatusSuccess, "cb-ref"))
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantChecked(pending, secs(4))
		r.wantCompleted(completion(confirmed, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback"), 4*time.Second)
	})
}

func TestPaymentPolling(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)
	unknown := as(pending, activities.OutcomeUnknown)

	t.Run("polling with backoff finds SUCCESS", func(t *testing.T) {
		plan := twoGateways()
		plan.PushLifetime = 5 * time.Minute
		r := newPaymentRun(t, plan, pending)
		r.checks = []activities.CollectionOutcome{pending, unknown, pending, pending, pending, unknown, as(pending, activities.OutcomeSuccess)}
		got := r.execute()
		check(t, "result", got, succeeded)
		// 3 s, then doubling up to 30 s: one read per step of the backoff, no more.
		r.wantChecked(pending, secs(3, 9, 21, 45, 75, 105, 135))
		r.wantStarted(startInput(1, gwA))
		r.wantCompleted(completion(pending, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 135*time.Second)
	})
	t.Run("polling finds FAILED", func(t *testing.T) {
		declined := refused(pending, gateway.FailurePayerDeclined)
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending, declined}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailurePayerDeclined))
		r.wantChecked(pending, secs(3, 9))
		r.wantStarted(startInput(1, gwA))
		r.wantCompleted(completion(declined, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: payer_declined"), 9*time.Second)
	})
	t.Run("the push lifetime ends in FAILED expired after a last read", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending, unknown, pending}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		r.wantChecked(pending, secs(3, 9, 21, 45, 75, 105, 120))
		r.wantStarted(startInput(1, gwA))
		r.wantCompleted(expiredUnclear(pending), 2*time.Minute)
	})
	t.Run("a push accepted after its lifetime is read once, then expires", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.startTakes = 3 * time.Minute
		r.checks = []activities.CollectionOutcome{pending}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		r.wantChecked(pending, secs(180))
		r.wantCompleted(expiredUnclear(pending), 3*time.Minute)
	})
}

func TestPaymentAmbiguous(t *testing.T) {
	ambiguous := attempt(1, gwA, activities.OutcomeAmbiguous)
	pending := as(ambiguous, activities.OutcomePending)
	success := as(ambiguous, activities.OutcomeSuccess)
	notFound := as(ambiguous, activities.OutcomeNotFound)

	t.Run("status reads at the same gateway resolve it", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), ambiguous)
		r.checks = []activities.CollectionOutcome{pending, success}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantChecked(ambiguous, secs(1, 3))
		r.wantStarted(startInput(1, gwA))
		r.wantCompleted(completion(success, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 3*time.Second)
	})
	t.Run("NOT_FOUND sends the same request again, never to the next gateway", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), ambiguous, pending)
		r.checks = []activities.CollectionOutcome{notFound, pending, success}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantStarted(startInput(1, gwA), resendInput(1, gwA))
		r.wantChecked(ambiguous, secs(1, 3, 7))
		r.wantCompleted(completion(success, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 7*time.Second)
	})
	t.Run("a final answer to the request sent again ends the run", func(t *testing.T) {
		declined := refused(ambiguous, gateway.FailurePayerDeclined)
		r := newPaymentRun(t, twoGateways(), ambiguous, declined)
		r.checks = []activities.CollectionOutcome{notFound}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailurePayerDeclined))
		r.wantStarted(startInput(1, gwA), resendInput(1, gwA))
		r.wantChecked(ambiguous, secs(1))
		r.wantCompleted(completion(declined, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: payer_declined"), time.Second)
	})
	t.Run("an attempt that stays ambiguous expires without a fallback", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), ambiguous)
		r.checks = []activities.CollectionOutcome{as(ambiguous, activities.OutcomeUnknown)}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		r.wantStarted(startInput(1, gwA))
		r.wantChecked(ambiguous, secs(1, 3, 7, 15, 31, 61, 91, 120))
		r.wantCompleted(expiredUnclear(ambiguous), 2*time.Minute)
	})
}

func TestPaymentOTP(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)
	pending.NextAction = gateway.NextAction{Type: gateway.NextOTPConfirmation}
	success := as(pending, activities.OutcomeSuccess)
	postPush := twoGateways()
	postPush.OTPKind = sika.OTPPostPush

	t.Run("a post-push OTP confirms the attempt", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.otps = []activities.OTPConfirmation{{Outcome: success}}
		u := r.update(5*time.Second, UpdateConfirmOTP, "123456")
		got := r.execute()
		check(t, "result", got, succeeded)
		check(t, "ConfirmCollectionOTP calls", r.confirmed, []activities.ConfirmOTPInput{{AttemptID: pending.AttemptID, OTP: "123456"}})
		wantAnswered(t, u, succeeded, 5*time.Second)
		r.wantChecked(pending, secs(3))
		r.wantCompleted(completion(success, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 5*time.Second)
	})
	t.Run("a refused code fails the update and the payment keeps waiting", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.otps = []activities.OTPConfirmation{{Rejected: true, Outcome: pending}, {Outcome: success}}
		wrong := r.update(5*time.Second, UpdateConfirmOTP, "000000")
		right := r.update(8*time.Second, UpdateConfirmOTP, "123456")
		got := r.execute()
		check(t, "result", got, succeeded)
		wantUpdateFailure(t, wrong, ErrInvalidOTP, false)
		check(t, "refused update time", wrong.at, 5*time.Second)
		wantAnswered(t, right, succeeded, 8*time.Second)
		check(t, "ConfirmCollectionOTP calls", r.confirmed, []activities.ConfirmOTPInput{
			{AttemptID: pending.AttemptID, OTP: "000000"}, {AttemptID: pending.AttemptID, OTP: "123456"}})
		r.wantChecked(pending, secs(3))
		r.wantCompleted(completion(success, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 8*time.Second)
	})
	t.Run("a refused code that ends the push fails the payment", func(t *testing.T) {
		declined := refused(pending, gateway.FailureInvalidOTP)
		r := newPaymentRun(t, postPush, pending)
		r.otps = []activities.OTPConfirmation{{Rejected: true, Outcome: declined}}
		u := r.update(time.Second, UpdateConfirmOTP, "000000")
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureInvalidOTP))
		wantAnswered(t, u, failedWith(gateway.FailureInvalidOTP), time.Second)
		r.wantCompleted(completion(declined, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: invalid_otp"), time.Second)
	})
	t.Run("the last refused code fails the attempt whatever the operator still allows", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		r.checks = []activities.CollectionOutcome{pending}
		wrong := activities.OTPConfirmation{Rejected: true, Outcome: pending} // the push stays alive at the operator
		r.otps = []activities.OTPConfirmation{wrong, wrong, wrong, {Outcome: success}}
		r.cancels = []activities.CollectionOutcome{refused(pending, gateway.FailureCancelled)} // the cancel is confirmed
		var tries []*updateCall
		for i := 1; i <= MaxOTPTries; i++ {
			tries = append(tries, r.update(time.Duration(i)*time.Second, UpdateConfirmOTP, fmt.Sprintf("00000%d", i)))
		}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureInvalidOTP))
		for _, u := range tries[:MaxOTPTries-1] {
			wantUpdateFailure(t, u, ErrInvalidOTP, false)
		}
		wantAnswered(t, tries[MaxOTPTries-1], failedWith(gateway.FailureInvalidOTP), time.Duration(MaxOTPTries)*time.Second)
		check(t, "ConfirmCollectionOTP calls", len(r.confirmed), MaxOTPTries)
		check(t, "CancelCollection calls", r.cancelled, []uuid.UUID{pending.AttemptID})
		capped := refused(pending, gateway.FailureInvalidOTP)
		capped.FailureMessage = fmt.Sprintf("The OTP was refused %d times. The request was withdrawn at the operator.", MaxOTPTries)
		r.wantCompleted(completion(capped, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: invalid_otp"), time.Duration(MaxOTPTries)*time.Second)
	})
	t.Run("parallel codes past the cap never reach the operator", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.otpTakes = 2 * time.Second
		wrong := activities.OTPConfirmation{Rejected: true, Outcome: pending}
		r.otps = []activities.OTPConfirmation{wrong, wrong, wrong, wrong, wrong, wrong}
		var tries []*updateCall
		for i := 0; i < 2*MaxOTPTries; i++ {
			tries = append(tries, r.update(time.Second, UpdateConfirmOTP, fmt.Sprintf("1%05d", i)))
		}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureInvalidOTP))
		check(t, "ConfirmCollectionOTP calls", len(r.confirmed), MaxOTPTries)
		refusedUnsent := 0
		for _, u := range tries {
			var appErr *temporal.ApplicationError
			if errors.As(u.err, &appErr) && appErr.Message() == "too many OTPs were tried for this payment" {
				refusedUnsent++
			}
		}
		check(t, "codes refused without reaching the operator", refusedUnsent, MaxOTPTries)
	})
	t.Run("an OTP sent to a payment that takes none is refused", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		u := r.update(time.Second, UpdateConfirmOTP, "123456")
		r.callback(2*time.Second, trusted(pending, gateway.StatusSuccess, pending.GatewayReference))
		got := r.execute()
		check(t, "result", got, succeeded)
		wantUpdateFailure(t, u, ErrNoOTPExpected, false)
		check(t, "ConfirmCollectionOTP calls", len(r.confirmed), 0)
		r.wantCompleted(completion(pending, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback"), 2*time.Second)
	})
	t.Run("an OTP in flight answers before the run closes; a later one is refused", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		r.otpTakes = 2 * time.Second
		r.otps = []activities.OTPConfirmation{{Outcome: success}}
		inFlight := r.update(time.Second, UpdateConfirmOTP, "123456")
		r.callback(1500*time.Millisecond, trusted(pending, gateway.StatusSuccess, pending.GatewayReference))
		late := r.update(2*time.Second, UpdateConfirmOTP, "123456")
		got := r.execute()
		check(t, "result", got, succeeded)
		wantAnswered(t, inFlight, succeeded, 3*time.Second)
		require.Error(t, late.rejected, "an OTP after the end is rejected")
		check(t, "ConfirmCollectionOTP calls", len(r.confirmed), 1)
		r.wantCompleted(completion(pending, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback"), 1500*time.Millisecond)
	})
	t.Run("an empty OTP is rejected before it reaches the gateway", func(t *testing.T) {
		r := newPaymentRun(t, postPush, pending)
		u := r.update(time.Second, UpdateConfirmOTP, "")
		r.callback(2*time.Second, trusted(pending, gateway.StatusSuccess, pending.GatewayReference))
		r.execute()
		wantUpdateFailure(t, u, ErrInvalidOTP, true)
		check(t, "ConfirmCollectionOTP calls", len(r.confirmed), 0)
	})
}

func TestPaymentGatewayStatusUpdate(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)

	t.Run("a final outcome of the current attempt ends the run", func(t *testing.T) {
		verified := as(pending, activities.OutcomeSuccess)
		verified.GatewayReference = "verify-ref"
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		u := r.update(5*time.Second, UpdateGatewayStatus, verified)
		got := r.execute()
		check(t, "result", got, succeeded)
		wantAnswered(t, u, succeeded, 5*time.Second)
		r.wantChecked(pending, secs(3))
		r.wantCompleted(completion(verified, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 5*time.Second)
	})
	t.Run("a non-final or another attempt's outcome changes nothing", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		stillPending := r.update(2*time.Second, UpdateGatewayStatus, pending)
		other := r.update(2*time.Second, UpdateGatewayStatus, attempt(2, gwB, activities.OutcomeSuccess))
		r.callback(4*time.Second, trusted(pending, gateway.StatusSuccess, pending.GatewayReference))
		got := r.execute()
		check(t, "result", got, succeeded)
		wantAnswered(t, stillPending, PaymentResult{}, 2*time.Second)
		wantAnswered(t, other, PaymentResult{}, 2*time.Second)
		r.wantChecked(pending, secs(3))
		r.wantCompleted(completion(pending, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback"), 4*time.Second)
	})
}

func TestPaymentAwaitInitiation(t *testing.T) {
	redirect := gateway.NextAction{Type: gateway.NextRedirect, URL: "https://pay.example/checkout/42"}
	ussd := gateway.NextAction{Type: gateway.NextUSSDPush}
	redirected := attempt(2, gwB, activities.OutcomePending)
	redirected.NextAction = redirect
	pushed := attempt(1, gwA, activities.OutcomePending)

	for _, tc := range []struct {
		name   string
		plan   activities.PaymentPlan
		starts []activities.CollectionOutcome
		want   gateway.NextAction
		at     time.Duration // StartCollection takes 1 s
	}{
		{"the first accepted attempt's redirect", twoGateways(), []activities.CollectionOutcome{unavailable(1, gwA), redirected}, redirect, 2 * time.Second},
		{"ussd_push when the gateway gave none", twoGateways(), []activities.CollectionOutcome{pushed}, ussd, time.Second},
		{"ussd_push when every gateway is unavailable", twoGateways(), []activities.CollectionOutcome{unavailable(1, gwA), unavailable(2, gwB)}, ussd, 2 * time.Second},
		{"nothing when the run does not proceed", activities.PaymentPlan{}, nil, gateway.NextAction{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPaymentRun(t, tc.plan, tc.starts...)
			r.startTakes = time.Second
			u := r.update(0, UpdateAwaitInitiation)
			if n := len(tc.starts); n > 0 && tc.starts[n-1].Kind == activities.OutcomePending {
				r.callback(2500*time.Millisecond, trusted(tc.starts[n-1], gateway.StatusSuccess, "cb-ref"))
			}
			r.execute()
			wantAnswered(t, u, tc.want, tc.at)
		})
	}
}

func TestPaymentLocalActivityErrors(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)
	for _, activity := range []string{"PreparePayment", "StartCollection", "CheckCollection", "CompletePayment"} {
		t.Run(activity+" failing twice is retried", func(t *testing.T) {
			r := newPaymentRun(t, twoGateways(), pending)
			r.failures[activity] = 2
			r.callback(10*time.Second, trusted(pending, gateway.StatusSuccess, pending.GatewayReference))
			r.checks = []activities.CollectionOutcome{pending}
			got := r.execute()
			check(t, "result", got, succeeded)
			check(t, "failures left", r.failures[activity], 0)
			wantStarts := []activities.StartCollectionInput{startInput(1, gwA)}
			if activity == "StartCollection" {
				wantStarts = append(wantStarts, startInput(1, gwA), startInput(1, gwA))
			}
			r.wantStarted(wantStarts...)
			want := completion(pending, sika.StatusSuccess, sika.TriggerWebhookCallback, "Confirmed by sandbox-a callback")
			wantCompletions := []store.Completion{want}
			if activity == "CompletePayment" {
				wantCompletions = []store.Completion{want, want, want}
			}
			check(t, "CompletePayment calls", r.completed, wantCompletions)
		})
	}
	t.Run("a non-retryable error fails the run without recording an end", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways()) // StartCollection is not scripted: it fails for good
		r.env.ExecuteWorkflow(Payment, activities.PaymentInput{TransactionID: payTx, Run: payRun})
		require.True(t, r.env.IsWorkflowCompleted())
		require.Error(t, r.env.GetWorkflowError())
		r.wantStarted(startInput(1, gwA))
		check(t, "CompletePayment calls", len(r.completed), 0)
	})
}

func TestPaymentAttemptID(t *testing.T) {
	id := activities.AttemptID(payTx, 1, 1)
	check(t, "same run and sequence", activities.AttemptID(payTx, 1, 1), id)
	others := map[string]uuid.UUID{
		"another run":         activities.AttemptID(payTx, 2, 1),
		"another sequence":    activities.AttemptID(payTx, 1, 2),
		"another transaction": activities.AttemptID(uuid.MustParse("0190f3c2-7d1e-7a4b-9c2d-5e6f7a8b9c0e"), 1, 1),
	}
	seen := map[uuid.UUID]string{id: "run 1 sequence 1"}
	for name, other := range others {
		if prev, dup := seen[other]; dup {
			t.Errorf("%s: got %s, the id of %s; want a different id", name, other, prev)
		}
		seen[other] = name
	}
	// Run 1 sequence 12 and run 11 sequence 2 must not share an id.
	assert.NotEqual(t, activities.AttemptID(payTx, 1, 12), activities.AttemptID(payTx, 11, 2))
}
