package workflows

import (
	"context"
	"errors"
	"fmt"
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
	return result, err
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
	early  []GatewayCallback
	done   bool
	result PaymentResult
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
	return workflow.SetUpdateHandler(ctx, UpdateAwaitInitiation, func(ctx workflow.Context) (gateway.NextAction, error) {
		err := workflow.Await(ctx, func() bool { return p.initiated || p.done })
		return p.nextAction, err
	})
}

func (p *payment) onCallback(cb GatewayCallback) {
	if p.attempt == nil {
		// The callback outran the gateway call's own answer: keep it for the attempt.
		p.early = append(p.early, cb)
		return
	}
	if cb.AttemptID != p.attempt.AttemptID || p.outcome != nil {
		return // a late or duplicate callback, or one about another attempt
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
	var conf activities.OTPConfirmation
	if err := workflow.ExecuteLocalActivity(withGatewayCallOptions(ctx), a.ConfirmCollectionOTP, activities.ConfirmOTPInput{AttemptID: p.attempt.AttemptID, OTP: otp}).Get(ctx, &conf); err != nil {
		return p.result, err
	}
	if final(conf.Outcome.Kind) && p.outcome == nil {
		p.outcome, p.trigger = &conf.Outcome, sika.TriggerSystem
	}
	if conf.Rejected && !final(conf.Outcome.Kind) {
		return p.result, temporal.NewApplicationError("the OTP was refused", ErrInvalidOTP)
	}
	err := workflow.Await(ctx, func() bool { return p.done || p.outcome == nil })
	return p.result, err
}

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

func final(k activities.OutcomeKind) bool {
	return k == activities.OutcomeSuccess || k == activities.OutcomeFailed
}

// run tries the gateways in routing order.
func (p *payment) run(ctx workflow.Context) (PaymentResult, error) {
	if err := workflow.ExecuteLocalActivity(ctx, a.PreparePayment, p.in).Get(ctx, &p.plan); err != nil {
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
// timer fires, until the push lifetime ends in FAILED expired.
func (p *payment) await(ctx workflow.Context, start activities.StartCollectionInput, ambiguous bool) (PaymentResult, error) {
	deadline := p.start.Add(p.plan.PushLifetime)
	delay := pollStart
	if ambiguous {
		delay = pollAmbiguous
	}
	for {
		wait := min(delay, deadline.Sub(workflow.Now(ctx)))
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
			// The request never reached the gateway: send it again, with the same reference.
			var out activities.CollectionOutcome
			if err := workflow.ExecuteLocalActivity(ctx, p.ops.start, start).Get(ctx, &out); err != nil {
				return PaymentResult{}, err
			}
			if final(out.Kind) {
				return p.complete(ctx, out, sika.TriggerSystem)
			}
			if out.Kind == activities.OutcomeUnavailable {
				// The gateway that never received the push now refuses it: no customer was
				// charged anywhere, so the run ends and the merchant may retry.
				out.Kind = activities.OutcomeFailed
				return p.complete(ctx, out, sika.TriggerSystem)
			}
		}
		if !workflow.Now(ctx).Before(deadline) {
			if p.expires {
				expired := *p.attempt
				expired.Kind, expired.FailureCode = activities.OutcomeFailed, gateway.FailureExpired
				expired.FailureMessage = "The customer did not approve the payment in time."
				return p.complete(ctx, expired, sika.TriggerSystem)
			}
			// A payout waits for the gateway's word however long it takes; a long wait starts
			// afresh so that its history stays small.
			if workflow.GetInfo(ctx).GetCurrentHistoryLength() > continueAsNewAfter {
				in := p.in
				in.Resume = &start
				return PaymentResult{}, workflow.NewContinueAsNewError(ctx, workflow.GetInfo(ctx).WorkflowType.Name, in)
			}
		}
		delay = min(delay*2, pollMax)
	}
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
	c := store.Completion{
		TransactionID: p.in.TransactionID, Run: p.in.Run, Gateway: out.Gateway, Status: status, Reason: reason, TriggeredBy: by,
		Attempt: store.AttemptUpdate{ID: out.AttemptID, Status: attemptStatus, GatewayReference: out.GatewayReference,
			FailureCode: out.FailureCode, FailureMessage: out.FailureMessage},
	}
	var recorded sika.TransactionStatus
	if err := workflow.ExecuteLocalActivity(ctx, a.CompletePayment, c).Get(ctx, &recorded); err != nil {
		return PaymentResult{}, err
	}
	p.result = PaymentResult{Status: recorded, FailureCode: out.FailureCode}
	if recorded != status {
		p.result.FailureCode = ""
	}
	p.outcome = nil
	return p.result, nil
}
