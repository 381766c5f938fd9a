package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// PaymentInput starts one run of a payment.
type PaymentInput struct {
	TransactionID uuid.UUID
	// Run is the transaction's run this workflow run acts on (1, then +1 per retry).
	Run int
	// Resume, when set, continues waiting for that attempt (a long payout wait continued as
	// new) instead of starting one.
	Resume *StartCollectionInput `json:",omitempty"`
}

// PaymentPlan is what a payment run will do.
type PaymentPlan struct {
	// Proceed is false when the transaction is no longer PENDING in this run (a duplicate start
	// from the outbox, or a run replaced by a retry): the run ends without touching anything.
	Proceed bool
	// AwaitApprovalUntil is set on a payout that waits for a second member's approval
	// (AWAITING_APPROVAL, Proceed false): the run waits for the decision until then, when the
	// approval expires (ExpirePayoutApproval), and prepares again.
	AwaitApprovalUntil *time.Time
	Gateways           []gateway.Candidate
	OTPKind            sika.OTPKind
	Redirect           bool
	PushLifetime       time.Duration
}

// PreparePayment reads the transaction and orders its gateways.
func (a *Activities) PreparePayment(ctx context.Context, in PaymentInput) (PaymentPlan, error) {
	t, err := a.Store.Transaction(ctx, in.TransactionID)
	if err != nil {
		return PaymentPlan{}, fmt.Errorf("prepare payment: %w", err)
	}
	if t.Status == sika.StatusAwaitingApproval && t.Run == in.Run {
		approval, err := a.Store.PayoutApprovalOf(ctx, t.ID)
		if err != nil {
			return PaymentPlan{}, fmt.Errorf("prepare payment: %w", err)
		}
		return PaymentPlan{AwaitApprovalUntil: &approval.ExpiresAt}, nil
	}
	if t.Status != sika.StatusPending || t.Run != in.Run {
		return PaymentPlan{}, nil
	}
	if t.Type == sika.TypeRefund {
		return a.prepareRefund(ctx, t)
	}
	network, err := a.Store.NetworkByID(ctx, t.NetworkID)
	if err != nil {
		return PaymentPlan{}, fmt.Errorf("prepare payment: %w", err)
	}
	routes, err := a.Store.GatewayRoutes(ctx, t.NetworkID, t.Environment)
	if err != nil {
		return PaymentPlan{}, fmt.Errorf("prepare payment: %w", err)
	}
	cands := make([]gateway.Candidate, len(routes))
	for i, r := range routes {
		cands[i] = gateway.Candidate{Gateway: r.Gateway, Priority: r.Priority}
	}
	return PaymentPlan{
		Proceed: true, Gateways: a.Gateways.Order(cands), OTPKind: network.OTPKind,
		Redirect: network.Redirect, PushLifetime: a.pushLifetime(),
	}, nil
}

// AttemptID is the deterministic id of a payment's attempt: the same run and sequence give the
// same id, which is also the reference the gateway dedupes on.
func AttemptID(txID uuid.UUID, run, sequence int) uuid.UUID {
	return uuid.NewSHA1(txID, fmt.Appendf(nil, "attempt:%d:%d", run, sequence))
}

// OutcomeKind is what a gateway call means for the workflow.
type OutcomeKind string

// Outcome kinds.
const (
	OutcomePending     OutcomeKind = "PENDING"     // accepted; wait for the customer
	OutcomeSuccess     OutcomeKind = "SUCCESS"     // money moved
	OutcomeFailed      OutcomeKind = "FAILED"      // refused: final, no fallback
	OutcomeUnavailable OutcomeKind = "UNAVAILABLE" // not accepted: try the next gateway
	OutcomeAmbiguous   OutcomeKind = "AMBIGUOUS"   // may be accepted: ask this gateway
	OutcomeNotFound    OutcomeKind = "NOT_FOUND"   // the gateway never received it
	OutcomeUnknown     OutcomeKind = "UNKNOWN"     // the gateway could not be asked now
)

// CollectionOutcome is the result of a gateway call about one attempt.
type CollectionOutcome struct {
	Kind             OutcomeKind
	AttemptID        uuid.UUID
	Gateway          string
	GatewayReference string
	FailureCode      string
	FailureMessage   string
	NextAction       gateway.NextAction
	// NotFoundSettle, on a NOT_FOUND read, is the gateway's settle window: the answer is final
	// only when read at least that long after the last send (gateway.Windows).
	NotFoundSettle time.Duration `json:",omitempty"`
	// RecheckFor, on a cancel that was not confirmed, is how long the operator may still report
	// the collection paid (gateway.Windows.LateSuccess): the attempt is re-read that long.
	RecheckFor time.Duration `json:",omitempty"`
}

// StartCollectionInput names the attempt to start.
type StartCollectionInput struct {
	TransactionID uuid.UUID
	Run           int
	Sequence      int
	Candidate     gateway.Candidate
	// Resend is true when the attempt is sent again after a NOT_FOUND read: a gateway that does
	// not accept the re-send leaves the attempt undecided (the first send may still be in the
	// operator's hands), where a first send it refuses closes the attempt for the next gateway.
	Resend bool `json:",omitempty"`
}

// StartCollection records the attempt (once) and asks its gateway to debit the customer with
// the attempt id as reference. Running it again (a retried activity, a restarted worker, a
// re-send after an ambiguous answer) sends the same reference, which the gateway dedupes.
func (a *Activities) StartCollection(ctx context.Context, in StartCollectionInput) (CollectionOutcome, error) {
	return a.startAttempt(ctx, in, func(gw gateway.Gateway, t sika.Transaction, ref, otp string) (gateway.CollectResult, error) {
		return gw.Collect(ctx, gateway.CollectRequest{
			Reference: ref, Amount: t.DebitedAmount.Decimal, Currency: t.Currency, Country: t.Country,
			Network: t.Network, Phone: t.CustomerPhone, OTP: otp, CustomerName: t.CustomerName,
			Description: t.Description, CallbackURL: a.callbackURL(gw.Name()),
		})
	})
}

// StartDisbursement records the attempt (once) and asks its gateway to pay the beneficiary what
// the payout sends (the wallet debit less the fee), with the attempt id as reference: the same
// reference sent again never pays twice.
func (a *Activities) StartDisbursement(ctx context.Context, in StartCollectionInput) (CollectionOutcome, error) {
	return a.startAttempt(ctx, in, func(gw gateway.Gateway, t sika.Transaction, ref, _ string) (gateway.CollectResult, error) {
		st, err := gw.Disburse(ctx, gateway.DisburseRequest{
			Reference: ref, Amount: t.DebitedAmount.Sub(t.ClientFee.Decimal), Currency: t.Currency, Country: t.Country,
			Network: t.Network, Phone: t.Recipient, RecipientName: t.CustomerName, Description: t.Description,
			CallbackURL: a.callbackURL(gw.Name()),
		})
		return gateway.CollectResult{GatewayReference: st.GatewayReference, Status: st.Status,
			FailureCode: st.FailureCode, FailureMessage: st.FailureMessage}, err
	})
}

// sendFunc makes the gateway call of an attempt.
type sendFunc func(gw gateway.Gateway, t sika.Transaction, reference, otp string) (gateway.CollectResult, error)

// startAttempt records an attempt and sends it, mapping the gateway's answer to an outcome.
func (a *Activities) startAttempt(ctx context.Context, in StartCollectionInput, send sendFunc) (CollectionOutcome, error) {
	t, otp, attempt, err := a.Store.StartAttempt(ctx, in.TransactionID, sika.TransactionAttempt{
		ID: AttemptID(in.TransactionID, in.Run, in.Sequence), Run: in.Run, Sequence: in.Sequence,
		Gateway: in.Candidate.Gateway, Priority: in.Candidate.Priority,
	})
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("start attempt: %w", err)
	}
	out := CollectionOutcome{AttemptID: attempt.ID, Gateway: attempt.Gateway, GatewayReference: attempt.GatewayReference}
	switch attempt.Status {
	case sika.AttemptSuccess:
		out.Kind = OutcomeSuccess
		return out, nil
	case sika.AttemptFailed:
		out.Kind, out.FailureCode, out.FailureMessage = OutcomeFailed, attempt.FailureCode, attempt.FailureMessage
		if attempt.FailureCode == gateway.FailureGatewayUnavailable {
			out.Kind = OutcomeUnavailable
		}
		return out, nil
	}
	gw, err := a.Gateways.Gateway(attempt.Gateway)
	if err != nil {
		return a.unavailable(ctx, in, out, err)
	}
	res, err := send(gw, t, attempt.ID.String(), otp)
	a.Gateways.Observe(attempt.Gateway, err)
	if err != nil {
		logger := activity.GetLogger(ctx)
		switch gateway.KindOf(err) {
		case gateway.KindUnavailable, gateway.KindAuth:
			logger.Warn("gateway unavailable", "gateway", attempt.Gateway, "attempt", attempt.ID, "err", err)
			return a.unavailable(ctx, in, out, err)
		case gateway.KindDeclined, gateway.KindInvalid:
			out.Kind, out.FailureCode, out.FailureMessage = OutcomeFailed, gateway.CodeOf(err), declineMessage(err)
			return out, a.forgetOTP(ctx, t.ID, otp)
		default:
			logger.Warn("ambiguous gateway answer", "gateway", attempt.Gateway, "attempt", attempt.ID, "err", err)
			out.Kind = OutcomeAmbiguous
			if err := a.noteAnswer(ctx, t, attempt.ID, OutcomeAmbiguous); err != nil {
				return CollectionOutcome{}, err
			}
			return out, a.forgetOTP(ctx, t.ID, otp)
		}
	}
	out.GatewayReference, out.NextAction = res.GatewayReference, res.NextAction
	switch res.Status {
	case gateway.StatusSuccess:
		out.Kind = OutcomeSuccess
	case gateway.StatusFailed:
		out.Kind, out.FailureCode, out.FailureMessage = OutcomeFailed, res.FailureCode, res.FailureMessage
	default:
		out.Kind = OutcomePending
		if err := a.Store.UpdateAttempt(ctx, store.AttemptUpdate{ID: attempt.ID, Status: sika.AttemptPending, GatewayReference: res.GatewayReference}); err != nil {
			return CollectionOutcome{}, err
		}
	}
	return out, a.forgetOTP(ctx, t.ID, otp)
}

// unavailable closes an attempt the gateway did not accept, so the workflow may try the next.
// A re-send it did not accept closes nothing: the first send may still be in the operator's
// hands, so only the answer is noted.
func (a *Activities) unavailable(ctx context.Context, in StartCollectionInput, out CollectionOutcome, cause error) (CollectionOutcome, error) {
	out.Kind, out.FailureCode, out.FailureMessage = OutcomeUnavailable, gateway.FailureGatewayUnavailable, "The gateway did not accept the request."
	if in.Resend {
		t, err := a.Store.Transaction(ctx, in.TransactionID)
		if err != nil {
			return CollectionOutcome{}, errors.Join(err, cause)
		}
		return out, a.noteAnswer(ctx, t, out.AttemptID, OutcomeUnavailable)
	}
	// An operator that answers 503 did not take the request, by its word; one that took it all
	// the same reports it by callback (kept, store.ReconcileSuccess), and in case that report is
	// lost the attempt is re-read for the operator's late-success window, until a final answer
	// or a NOT_FOUND read after its settle window (nothing was created: RecheckEndedAttempts).
	// Such a re-read never holds up a retry (the run failed on a definite answer).
	recheck := gateway.DefaultLateSuccess
	if gw, err := a.Gateways.Gateway(out.Gateway); err == nil {
		recheck = gateway.WindowsOf(gw).LateSuccess
	}
	err := a.Store.UpdateAttempt(ctx, store.AttemptUpdate{ID: out.AttemptID, Status: sika.AttemptFailed,
		FailureCode: out.FailureCode, FailureMessage: out.FailureMessage, RecheckFor: recheck})
	if err != nil {
		return CollectionOutcome{}, errors.Join(err, cause)
	}
	return out, nil
}

// forgetOTP drops a pre-payment OTP once a gateway has seen it: it is single-use.
func (a *Activities) forgetOTP(ctx context.Context, txID uuid.UUID, otp string) error {
	if otp == "" {
		return nil
	}
	return a.Store.ClearOTP(ctx, txID)
}

func declineMessage(err error) string {
	var ge *gateway.Error
	if errors.As(err, &ge) && ge.Message != "" {
		return ge.Message
	}
	return "The operator refused the payment."
}

// CheckCollection reads a collection attempt's state at its gateway. A gateway that cannot be
// asked now answers OutcomeUnknown: the workflow asks again later.
func (a *Activities) CheckCollection(ctx context.Context, attemptID uuid.UUID) (CollectionOutcome, error) {
	return a.checkAttempt(ctx, attemptID, gateway.Gateway.CollectionStatus)
}

// CheckDisbursement reads a payout attempt's state at its gateway (see CheckCollection).
func (a *Activities) CheckDisbursement(ctx context.Context, attemptID uuid.UUID) (CollectionOutcome, error) {
	return a.checkAttempt(ctx, attemptID, gateway.Gateway.DisbursementStatus)
}

func (a *Activities) checkAttempt(ctx context.Context, attemptID uuid.UUID, read func(gateway.Gateway, context.Context, string) (gateway.OperationStatus, error)) (CollectionOutcome, error) {
	attempt, err := a.Store.Attempt(ctx, attemptID)
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("check attempt: %w", err)
	}
	out := CollectionOutcome{AttemptID: attempt.ID, Gateway: attempt.Gateway, GatewayReference: attempt.GatewayReference}
	gw, err := a.Gateways.Gateway(attempt.Gateway)
	if err != nil {
		out.Kind = OutcomeUnknown
		return out, nil
	}
	st, err := read(gw, ctx, attempt.ID.String())
	if err != nil {
		activity.GetLogger(ctx).Warn("status unavailable", "gateway", attempt.Gateway, "attempt", attempt.ID, "err", err)
		out.Kind = OutcomeUnknown
	} else {
		out = outcomeOf(out, st)
	}
	if out.Kind == OutcomeNotFound || out.Kind == OutcomeUnknown {
		out.NotFoundSettle = gateway.WindowsOf(gw).NotFoundSettle
		t, err := a.Store.Transaction(ctx, attempt.Transaction)
		if err != nil {
			return CollectionOutcome{}, fmt.Errorf("check attempt: %w", err)
		}
		if err := a.noteAnswer(ctx, t, attempt.ID, out.Kind); err != nil {
			return CollectionOutcome{}, err
		}
	}
	return out, nil
}

// awaitingOperator is what a merchant reads on a payout whose send was unclear.
const awaitingOperator = "Awaiting the operator's final answer: the payout was sent but the operator has not confirmed it yet. " +
	"The amount stays held until the operator answers."

// noteAnswer records an operator's undecided answer on the attempt and, for a payout, tells
// the merchant that it awaits the operator.
func (a *Activities) noteAnswer(ctx context.Context, t sika.Transaction, attempt uuid.UUID, kind OutcomeKind) error {
	reason := ""
	if t.FlowDirection == sika.DirectionOutbound {
		reason = awaitingOperator
	}
	return a.Store.NoteAttemptAnswer(ctx, attempt, string(kind), reason)
}

// CancelCollection withdraws, at its gateway, a collection whose push lifetime ended, before
// the run records it FAILED, and records the cancel's answer on the attempt. FAILED (the cancel
// confirmed, or an earlier refusal) and SUCCESS (the customer approved first) are final;
// anything else, including a gateway that cannot cancel, answers PENDING with RecheckFor, the
// operator's late-success window, during which the attempt is re-read.
func (a *Activities) CancelCollection(ctx context.Context, attemptID uuid.UUID) (CollectionOutcome, error) {
	attempt, err := a.Store.Attempt(ctx, attemptID)
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("cancel collection: %w", err)
	}
	out := CollectionOutcome{AttemptID: attempt.ID, Gateway: attempt.Gateway, GatewayReference: attempt.GatewayReference, Kind: OutcomePending,
		RecheckFor: gateway.DefaultLateSuccess}
	gw, err := a.Gateways.Gateway(attempt.Gateway)
	if err != nil {
		return out, a.Store.NoteAttemptAnswer(ctx, attempt.ID, "CANCEL_UNCLEAR", "")
	}
	out.RecheckFor = gateway.WindowsOf(gw).LateSuccess
	c, ok := gateway.CancellerOf(gw)
	answer := "CANCEL_UNSUPPORTED"
	if ok {
		st, err := c.CancelCollection(ctx, attempt.ID.String())
		switch {
		case err != nil:
			activity.GetLogger(ctx).Warn("cancel unclear", "gateway", attempt.Gateway, "attempt", attempt.ID, "err", err)
			answer = "CANCEL_UNCLEAR"
		case st.Status.Final():
			out = outcomeOf(out, st)
			out.RecheckFor = 0
			answer = "CANCEL_CONFIRMED"
			if st.Status == gateway.StatusSuccess {
				answer = "CANCEL_TOO_LATE_PAID"
			}
		default:
			answer = "CANCEL_UNCLEAR"
		}
	}
	return out, a.Store.NoteAttemptAnswer(ctx, attempt.ID, answer, "")
}

// outcomeOf turns a gateway status into an outcome.
func outcomeOf(out CollectionOutcome, st gateway.OperationStatus) CollectionOutcome {
	if st.GatewayReference != "" {
		out.GatewayReference = st.GatewayReference
	}
	switch st.Status {
	case gateway.StatusSuccess:
		out.Kind = OutcomeSuccess
	case gateway.StatusFailed:
		out.Kind, out.FailureCode, out.FailureMessage = OutcomeFailed, st.FailureCode, st.FailureMessage
	case gateway.StatusNotFound:
		out.Kind = OutcomeNotFound
	default:
		out.Kind = OutcomePending
	}
	return out
}

// ConfirmOTPInput carries a post-push OTP to its attempt.
type ConfirmOTPInput struct {
	AttemptID uuid.UUID
	OTP       string
}

// ConfirmCollectionOTP sends a post-push OTP to the attempt's gateway. A wrong code is
// OutcomeFailed with code invalid_otp when the gateway gave up on the push, and Rejected when
// the customer may try again.
func (a *Activities) ConfirmCollectionOTP(ctx context.Context, in ConfirmOTPInput) (OTPConfirmation, error) {
	attempt, err := a.Store.Attempt(ctx, in.AttemptID)
	if err != nil {
		return OTPConfirmation{}, fmt.Errorf("confirm otp: %w", err)
	}
	gw, err := a.Gateways.Gateway(attempt.Gateway)
	if err != nil {
		return OTPConfirmation{}, err
	}
	out := CollectionOutcome{AttemptID: attempt.ID, Gateway: attempt.Gateway, GatewayReference: attempt.GatewayReference}
	st, err := gw.ConfirmOTP(ctx, attempt.ID.String(), in.OTP)
	if err != nil {
		if gateway.KindOf(err) == gateway.KindDeclined || gateway.KindOf(err) == gateway.KindInvalid {
			// The code was refused; whether the push is still alive is the gateway's to say.
			check, cerr := a.CheckCollection(ctx, in.AttemptID)
			if cerr != nil {
				return OTPConfirmation{}, cerr
			}
			return OTPConfirmation{Rejected: true, Outcome: check}, nil
		}
		return OTPConfirmation{}, fmt.Errorf("confirm otp at %s: %w", attempt.Gateway, err)
	}
	return OTPConfirmation{Outcome: outcomeOf(out, st)}, nil
}

// OTPConfirmation is the answer to a post-push OTP.
type OTPConfirmation struct {
	// Rejected is true when the gateway refused the code.
	Rejected bool
	Outcome  CollectionOutcome
}

// CompletePayment records the end of a payment or payout run (see store.CompletePayment):
// idempotent.
func (a *Activities) CompletePayment(ctx context.Context, c store.Completion) (sika.TransactionStatus, error) {
	t, _, err := a.Store.CompletePayment(ctx, c)
	if err != nil {
		return "", fmt.Errorf("complete payment: %w", err)
	}
	return t.Status, nil
}
