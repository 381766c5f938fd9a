package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// GatewayCallback is a gateway's report about one attempt, already authenticated by the API.
type GatewayCallback struct {
	AttemptID        uuid.UUID
	Status           gateway.Status
	GatewayReference string
	FailureCode      string
	FailureMessage   string
	// Trusted is false for unsigned callbacks: they only make the payment ask the gateway now.
	Trusted bool
}

// PaymentResult is how a payment run ended.
type PaymentResult struct {
	Status      sika.TransactionStatus
	FailureCode string
}

// ErrInvalidOTP is the update failure type of a refused post-push OTP.
const ErrInvalidOTP = "invalid_otp"

// MaxOTPTries is how many post-push OTPs one payment sends its operator: the try that reaches it
// and is refused fails the attempt FAILED invalid_otp, whatever the operator would still allow,
// and a code past it is refused without reaching the operator (parallel tries included: a try
// is counted before it is sent).
const MaxOTPTries = 3

// ErrNoOTPExpected is the update failure type of an OTP sent to a payment that takes none.
const ErrNoOTPExpected = "no_otp_expected"

// Polling after a push: first read after pollStart, then doubling up to pollMax. A callback
// usually ends the wait long before.
const (
	// continueAsNewAfter bounds the history of a payout that waits long for its gateway.
	continueAsNewAfter = 2000
	pollStart          = 3 * time.Second
	pollAmbiguous      = time.Second
	pollMax            = 30 * time.Second
)

// Payment collects one payment run: it tries the routed gateways in order, falling back only
// when a gateway did not accept the request; waits for the outcome by callback, polling or the
// merchant's verify, whichever comes first; and records the end exactly once. A decline is
// final; an ambiguous answer is resolved by status reads at the same gateway, never by trying
// another (that is how customers get charged twice).
func Payment(ctx workflow.Context, in activities.PaymentInput) (PaymentResult, error) {
	return runOperation(ctx, &payment{in: in, start: workflow.Now(ctx), ops: collection(), expires: true})
}

// operationOps are the gateway steps of one kind of operation.
type operationOps struct {
	start func(context.Context, activities.StartCollectionInput) (activities.CollectionOutcome, error)
	check func(context.Context, uuid.UUID) (activities.CollectionOutcome, error)
}

func collection() operationOps {
	return operationOps{start: a.StartCollection, check: a.CheckCollection}
}

// runOperation runs a payment or a payout and lets in-flight updates answer before it closes.
func runOperation(ctx workflow.Context, p *payment) (PaymentResult, error) {
	ctx = withGatewayCallOptions(ctx)
	if err := p.listen(ctx); err != nil {
		return PaymentResult{}, err
	}
	result, err := p.run(ctx)
	p.done = true
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	if err != nil {
		return result, err
	}
	return result, p.reconcileLate(ctx)
}

// reconcileLate hands every success that arrived after the run's end (or about another
// attempt) to ReconcileLateAnswer, until none is left: a late success is credited once or
// flagged, never lost with the closing workflow.
func (p *payment) reconcileLate(ctx workflow.Context) error {
	for len(p.late) > 0 {
		cb := p.late[0]
		p.late = p.late[1:]
		if p.recorded.Kind == activities.OutcomeSuccess && cb.AttemptID == p.recorded.AttemptID {
			continue // the success the run recorded, reported again
		}
		in := activities.LateAnswer{AttemptID: cb.AttemptID, Status: cb.Status, GatewayReference: cb.GatewayReference,
			Trusted: cb.Trusted, Source: "callback after the run ended"}
		if cb.Trusted {
			in.Source = "signed callback after the run ended"
		}
		if err := workflow.ExecuteLocalActivity(ctx, a.ReconcileLateAnswer, in).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// payment is the state of one payment or payout run.
type payment struct {
	in    activities.PaymentInput
	start time.Time
	plan  activities.PaymentPlan
	ops   operationOps
	// expires is true for collections: a push the customer never approves ends FAILED expired.
	// A payout never expires on our side: only the gateway's final answer may release its hold.
	expires bool

	attempt    *activities.CollectionOutcome // the attempt waiting for its outcome
	initiated  bool
	nextAction gateway.NextAction
	// outcome is a final answer received by callback, update or poll; trigger says from where.
	outcome *activities.CollectionOutcome
	trigger sika.Trigger
	// pollNow asks the wait loop to read the status at once (an unsigned callback).
	pollNow bool
	// early holds callbacks received before the attempt they concern was known.
	early []GatewayCallback
	// late holds successes reported after the run recorded its end, or about another attempt:
	// they are reconciled before the workflow closes (ReconcileLateAnswer), never dropped.
	late []GatewayCallback
	// staff is the audited support action that ends the run, when support ended it, and
	// staffNote the status log's reason.
	staff     *store.StaffAction
	staffNote string
	// otpTries counts the post-push OTPs sent to the operator (MaxOTPTries).
	otpTries int
	// ended is true once the run's end is recorded; recorded is the attempt it was recorded on.
	ended    bool
	recorded activities.CollectionOutcome
	done     bool
	result   PaymentResult
}

var a *activities.Activities

// listen registers the signal and update handlers.
func (p *payment) listen(ctx workflow.Context) error {
	callbacks := workflow.GetSignalChannel(ctx, SignalGatewayCallback)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var cb GatewayCallback
			callbacks.Receive(ctx, &cb)
			p.onCallback(cb)
		}
	})
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateConfirmOTP, p.confirmOTP, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, otp string) error {
			if p.done {
				return errors.New("the payment is no longer waiting")
			}
			if otp == "" {
				return temporal.NewApplicationError("an OTP is required", ErrInvalidOTP)
			}
			return nil
		},
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateGatewayStatus, func(ctx workflow.Context, out activities.CollectionOutcome) (PaymentResult, error) {
		if p.done || p.attempt == nil || out.AttemptID != p.attempt.AttemptID || !final(out.Kind) {
			return p.result, nil // nothing to decide: the caller reads the record as it is
		}
		if p.outcome == nil {
			p.outcome, p.trigger = &out, sika.TriggerSystem
		}
		err := workflow.Await(ctx, func() bool { return p.done || p.outcome == nil })
		return p.result, err
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSupportResolution, p.resolveBySupport, workflow.UpdateHandlerOptions{
		Validator: func(ctx workflow.Context, r SupportResolution) error {
			switch {
			case p.done || p.ended:
				return errors.New("the run has already ended")
			case p.attempt == nil:
				return errors.New("nothing was sent to an operator yet")
			case r.Status != sika.StatusFailed && r.Status != sika.StatusSuccess:
				return temporal.NewApplicationError("status must be SUCCESS or FAILED", ErrBadResolution)
			case strings.TrimSpace(r.Reason) == "":
				return temporal.NewApplicationError("a reason is required", ErrBadResolution)
			}
			return nil
		},
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, UpdateAwaitInitiation, func(ctx workflow.Context) (gateway.NextAction, error) {
		err := workflow.Await(ctx, func() bool { return p.initiated || p.done })
		return p.nextAction, err
	})
}

func (p *payment) onCallback(cb GatewayCallback) {
	if p.attempt == nil && !p.ended {
		// The callback outran the gateway call's own answer: keep it for the attempt.
		p.early = append(p.early, cb)
		return
	}
	if p.ended || cb.AttemptID != p.attempt.AttemptID {
		if cb.Status == gateway.StatusSuccess || !cb.Trusted {
			p.late = append(p.late, cb) // reconciled before the workflow closes
		}
		return
	}
	if p.outcome != nil {
		return // a duplicate: the outcome is already being recorded
	}
	if !cb.Trusted {
		p.pollNow = true
		return
	}
	out := *p.attempt
	out.GatewayReference = cb.GatewayReference
	switch cb.Status {
	case gateway.StatusSuccess:
		out.Kind = activities.OutcomeSuccess
	case gateway.StatusFailed:
		out.Kind, out.FailureCode, out.FailureMessage = activities.OutcomeFailed, cb.FailureCode, cb.FailureMessage
	default:
		return // PENDING (possibly late, out of order): nothing to decide
	}
	p.outcome, p.trigger = &out, sika.TriggerWebhookCallback
}

// confirmOTP sends a post-push OTP to the waiting attempt.
func (p *payment) confirmOTP(ctx workflow.Context, otp string) (PaymentResult, error) {
	if err := workflow.Await(ctx, func() bool { return p.attempt != nil || p.done }); err != nil {
		return p.result, err
	}
	if p.done || p.plan.OTPKind != sika.OTPPostPush {
		return p.result, temporal.NewApplicationError("this payment does not take an OTP confirmation", ErrNoOTPExpected)
	}
	capped := workflow.GetVersion(ctx, "otp-tries-cap", workflow.DefaultVersion, 1) == 1
	if capped {
		if p.otpTries >= MaxOTPTries {
			return p.result, temporal.NewApplicationError("too many OTPs were tried for this payment", ErrInvalidOTP)
		}
		p.otpTries++
	}
	var conf activities.OTPConfirmation
	if err := workflow.ExecuteLocalActivity(withGatewayCallOptions(ctx), a.ConfirmCollectionOTP, activities.ConfirmOTPInput{AttemptID: p.attempt.AttemptID, OTP: otp}).Get(ctx, &conf); err != nil {
		return p.result, err
	}
	if final(conf.Outcome.Kind) && p.outcome == nil {
		p.outcome, p.trigger = &conf.Outcome, sika.TriggerSystem
	}
	if conf.Rejected && !final(conf.Outcome.Kind) && capped && p.otpTries >= MaxOTPTries && p.outcome == nil {
		// The last try was refused: the request is withdrawn at the operator and the attempt
		// fails, as an expired push does (withdraw).
		out, err := p.withdraw(withGatewayCallOptions(ctx), gateway.FailureInvalidOTP, fmt.Sprintf("The OTP was refused %d times.", MaxOTPTries))
		if err != nil {
			return p.result, err
		}
		if p.outcome == nil {
			p.outcome, p.trigger = &out, sika.TriggerSystem
		}
	} else if conf.Rejected && !final(conf.Outcome.Kind) {
		return p.result, temporal.NewApplicationError("the OTP was refused", ErrInvalidOTP)
	}
	err := workflow.Await(ctx, func() bool { return p.done || p.outcome == nil })
	return p.result, err
}

// SupportResolution is support's decision on a run that the operator leaves unclear, taken
// after a status read that did not decide it.
type SupportResolution struct {
	Status sika.TransactionStatus
	Reason string
	// Staff and StaffEmail say who decided; OperatorAnswer is what the status read said.
	Staff          uuid.UUID
	StaffEmail     string
	OperatorAnswer string
}

// ErrBadResolution is the update failure type of a support resolution without a valid status
// or a reason.
const ErrBadResolution = "bad_resolution"

// resolveBySupport ends the waiting attempt as support decided, audited with the completion.
func (p *payment) resolveBySupport(ctx workflow.Context, r SupportResolution) (PaymentResult, error) {
	if p.outcome == nil {
		out := *p.attempt
		out.Kind = activities.OutcomeSuccess
		// The operator never gave its final word: keep reading it, so that a payment it still
		// makes after a FAILED (store.ReconcileSuccess), or a failure it reports after a
		// SUCCESS (store.ReconcileFailure), is flagged for support.
		out.RecheckFor = gateway.DefaultLateSuccess
		if r.Status == sika.StatusFailed {
			out.Kind, out.FailureCode = activities.OutcomeFailed, FailureEndedBySupport
			out.FailureMessage = "Ended by support: " + r.Reason
		}
		p.outcome, p.trigger = &out, sika.TriggerAdmin
		p.staff = &store.StaffAction{Staff: r.Staff, Action: "end_unclear_run", Transaction: &p.in.TransactionID, Reason: r.Reason,
			Detail: map[string]string{"status": string(r.Status), "staff_email": r.StaffEmail, "operator_answer": r.OperatorAnswer,
				"attempt": out.AttemptID.String(), "gateway": out.Gateway}}
		p.staffNote = fmt.Sprintf("Ended %s by support (%s) after a status read that answered %s: %s", r.Status, r.StaffEmail, r.OperatorAnswer, r.Reason)
	}
	err := workflow.Await(ctx, func() bool { return p.ended })
	return p.result, err
}

// FailureEndedBySupport is the failure code of a run support ended FAILED.
const FailureEndedBySupport = "ended_by_support"

// withGatewayCallOptions sets how the payment's local activities run: a gateway call or a
// store write gets 30 s, and is retried with backoff for as long as a day, because giving up
// would leave the payment PENDING with nobody deciding it. Update handlers run on a context of
// their own and set them again.
func withGatewayCallOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	})
}

// withStoreStepOptions sets how the activities of a workflow made of store steps run (a
// session's expiry, a payout batch): 30 s each, retried every second up to every minute and
// without end, since a store that is down comes back and the step must happen.
func withStoreStepOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	})
}

func final(k activities.OutcomeKind) bool {
	return k == activities.OutcomeSuccess || k == activities.OutcomeFailed
}

// run tries the gateways in routing order.
func (p *payment) run(ctx workflow.Context) (PaymentResult, error) {
	if err := workflow.ExecuteLocalActivity(ctx, a.PreparePayment, p.in).Get(ctx, &p.plan); err != nil {
		return PaymentResult{}, err
	}
	if err := p.awaitApproval(ctx); err != nil {
		return PaymentResult{}, err
	}
	if !p.plan.Proceed {
		return PaymentResult{}, nil
	}
	if r := p.in.Resume; r != nil {
		// A long wait continued as new: go on waiting for the same attempt.
		var out activities.CollectionOutcome
		if err := workflow.ExecuteLocalActivity(ctx, p.ops.check, activities.AttemptID(r.TransactionID, r.Run, r.Sequence)).Get(ctx, &out); err != nil {
			return PaymentResult{}, err
		}
		p.initiate(gateway.NextAction{})
		p.attempt = &out
		if final(out.Kind) {
			return p.complete(ctx, out, sika.TriggerSystem)
		}
		return p.await(ctx, *r, false)
	}
	for seq, cand := range p.plan.Gateways {
		var out activities.CollectionOutcome
		in := activities.StartCollectionInput{TransactionID: p.in.TransactionID, Run: p.in.Run, Sequence: seq + 1, Candidate: cand}
		if err := workflow.ExecuteLocalActivity(ctx, p.ops.start, in).Get(ctx, &out); err != nil {
			return PaymentResult{}, err
		}
		switch out.Kind {
		case activities.OutcomeUnavailable:
			continue
		case activities.OutcomeSuccess, activities.OutcomeFailed:
			p.initiate(out.NextAction)
			return p.complete(ctx, out, sika.TriggerSystem)
		}
		p.initiate(out.NextAction)
		p.attempt = &out
		for _, cb := range p.early {
			p.onCallback(cb)
		}
		p.early = nil
		return p.await(ctx, in, out.Kind == activities.OutcomeAmbiguous)
	}
	p.initiate(gateway.NextAction{})
	return p.complete(ctx, activities.CollectionOutcome{Kind: activities.OutcomeFailed, FailureCode: gateway.FailureGatewayUnavailable,
		FailureMessage: "Every gateway of this network is unavailable; retry later."}, sika.TriggerSystem)
}

func (p *payment) initiate(next gateway.NextAction) {
	if next.Type == "" {
		next.Type = gateway.NextUSSDPush
	}
	p.initiated, p.nextAction = true, next
}

// await waits for the attempt's outcome: a callback, an update, or a status read when the poll
// timer fires. A collection ends at its push lifetime (expire); a payout waits for the
// operator's final word however long it takes. A NOT_FOUND read sends the attempt again with
// the same reference; it is final only when read at least the operator's settle window after
// the last send and the re-send is not accepted either: before that, the first send may still
// be in the operator's hands, and the run goes on waiting.
func (p *payment) await(ctx workflow.Context, start activities.StartCollectionInput, ambiguous bool) (PaymentResult, error) {
	deadline := p.start.Add(p.plan.PushLifetime)
	lastSend := workflow.Now(ctx)
	delay := pollStart
	if ambiguous {
		delay = pollAmbiguous
	}
	for {
		wait := delay
		if p.expires {
			wait = min(delay, deadline.Sub(workflow.Now(ctx)))
		}
		if wait > 0 {
			if _, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return p.outcome != nil || p.pollNow }); err != nil {
				return PaymentResult{}, err
			}
		}
		if p.outcome != nil {
			return p.complete(ctx, *p.outcome, p.trigger)
		}
		p.pollNow = false
		var st activities.CollectionOutcome
		if err := workflow.ExecuteLocalActivity(ctx, p.ops.check, p.attempt.AttemptID).Get(ctx, &st); err != nil {
			return PaymentResult{}, err
		}
		if p.outcome != nil { // a callback or an update arrived during the read
			return p.complete(ctx, *p.outcome, p.trigger)
		}
		switch {
		case final(st.Kind):
			return p.complete(ctx, st, sika.TriggerSystem)
		case st.Kind == activities.OutcomeNotFound:
			settled := !workflow.Now(ctx).Before(lastSend.Add(st.NotFoundSettle))
			resend := start
			resend.Resend = true
			var out activities.CollectionOutcome
			if err := workflow.ExecuteLocalActivity(ctx, p.ops.start, resend).Get(ctx, &out); err != nil {
				return PaymentResult{}, err
			}
			switch {
			case final(out.Kind):
				return p.complete(ctx, out, sika.TriggerSystem)
			case out.Kind == activities.OutcomeUnavailable && settled:
				// The operator has had its settle window and knows nothing of the first send,
				// and it did not accept this one: nothing is in its hands. A definite failure.
				out.Kind = activities.OutcomeFailed
				out.FailureMessage = "The operator has no record of the request after its settle window and did not accept it again."
				return p.complete(ctx, out, sika.TriggerSystem)
			case out.Kind != activities.OutcomeUnavailable:
				lastSend = workflow.Now(ctx) // accepted or unclear: a new send to wait for
			}
		}
		if p.expires && !workflow.Now(ctx).Before(deadline) {
			return p.expire(ctx)
		}
		// A payout's long wait starts afresh so that its history stays small.
		if !p.expires && workflow.GetInfo(ctx).GetCurrentHistoryLength() > continueAsNewAfter {
			in := p.in
			in.Resume = &start
			return PaymentResult{}, workflow.NewContinueAsNewError(ctx, workflow.GetInfo(ctx).WorkflowType.Name, in)
		}
		delay = min(delay*2, pollMax)
	}
}

// expire ends a collection whose push lifetime has passed. The request is first withdrawn at
// the operator where it can be (CancelCollection): a confirmed cancel ends it FAILED for good;
// a customer who approved first makes it SUCCESS; an unclear or impossible cancel ends it
// FAILED expired with the attempt re-read for the operator's late-success window, so that a
// payment that still goes through is reconciled and credited.
func (p *payment) expire(ctx workflow.Context) (PaymentResult, error) {
	out, err := p.withdraw(ctx, gateway.FailureExpired, "The customer did not approve the payment in time.")
	if err != nil {
		return PaymentResult{}, err
	}
	if p.outcome != nil { // a callback or an update arrived during the cancel
		return p.complete(ctx, *p.outcome, p.trigger)
	}
	return p.complete(ctx, out, sika.TriggerSystem)
}

// withdraw cancels the waiting attempt at the operator (CancelCollection) and returns the
// outcome to record: SUCCESS when the customer approved first, else FAILED with code and
// message, re-read for the operator's late-success window when the cancel was not confirmed.
func (p *payment) withdraw(ctx workflow.Context, code, message string) (activities.CollectionOutcome, error) {
	var c activities.CollectionOutcome
	if err := workflow.ExecuteLocalActivity(ctx, a.CancelCollection, p.attempt.AttemptID).Get(ctx, &c); err != nil {
		return c, err
	}
	if c.Kind == activities.OutcomeSuccess {
		return c, nil
	}
	out := *p.attempt
	out.Kind, out.FailureCode, out.FailureMessage = activities.OutcomeFailed, code, message
	if c.Kind == activities.OutcomeFailed {
		out.FailureMessage += " The request was withdrawn at the operator."
	} else {
		out.RecheckFor = c.RecheckFor
	}
	return out, nil
}

// complete records the run's end (idempotent in the store) and returns it.
func (p *payment) complete(ctx workflow.Context, out activities.CollectionOutcome, by sika.Trigger) (PaymentResult, error) {
	status := sika.StatusFailed
	attemptStatus := sika.AttemptFailed
	reason := fmt.Sprintf("Refused by %s: %s", out.Gateway, out.FailureCode)
	if out.Kind == activities.OutcomeSuccess {
		status, attemptStatus = sika.StatusSuccess, sika.AttemptSuccess
		reason = "Confirmed by " + out.Gateway
		if by == sika.TriggerWebhookCallback {
			reason += " callback"
		}
	} else if out.Gateway == "" {
		reason = out.FailureMessage
	}
	if out.RecheckFor > 0 {
		reason += fmt.Sprintf(" (cancel not confirmed: re-read at %s for %s)", out.Gateway, out.RecheckFor)
	}
	c := store.Completion{
		TransactionID: p.in.TransactionID, Run: p.in.Run, Gateway: out.Gateway, Status: status, Reason: reason, TriggeredBy: by,
		Attempt: store.AttemptUpdate{ID: out.AttemptID, Status: attemptStatus, GatewayReference: out.GatewayReference,
			FailureCode: out.FailureCode, FailureMessage: out.FailureMessage},
		RecheckFor: out.RecheckFor,
	}
	if by == sika.TriggerAdmin && p.staff != nil {
		c.Staff, c.Reason = p.staff, p.staffNote
	}
	var recorded sika.TransactionStatus
	if err := workflow.ExecuteLocalActivity(ctx, a.CompletePayment, c).Get(ctx, &recorded); err != nil {
		return PaymentResult{}, err
	}
	p.result = PaymentResult{Status: recorded, FailureCode: out.FailureCode}
	if recorded != status {
		p.result.FailureCode = ""
	}
	if o := p.outcome; o != nil && o.Kind == activities.OutcomeSuccess && recorded != sika.StatusSuccess {
		// A success arrived while the end was being recorded: it is reconciled before the
		// workflow closes (reconcileLate), never dropped.
		p.late = append(p.late, GatewayCallback{AttemptID: o.AttemptID, Status: gateway.StatusSuccess, GatewayReference: o.GatewayReference, Trusted: true})
	}
	p.outcome, p.ended, p.recorded = nil, true, out
	return p.result, nil
}
