package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// WorkflowIDOf is the workflow that decides a transaction: payment:<id> for collections,
// payout:<id> for payouts and settlements, refund:<id> for refunds ("" for transfers, which complete at once).
func WorkflowIDOf(t sika.Transaction) string {
	switch t.Type {
	case sika.TypePayment, sika.TypeTopUp:
		return PaymentWorkflowID(t.ID)
	case sika.TypePayout:
		return PayoutWorkflowID(t.ID)
	case sika.TypeRefund:
		return RefundWorkflowID(t.ID)
	}
	return ""
}

// ErrGatewayUnreachable is returned when the gateway could not be asked.
var ErrGatewayUnreachable = errors.New("the gateway could not be reached")

// Recheck is what a re-check at the gateway found.
type Recheck struct {
	// Asked is false when the transaction was never sent to a gateway.
	Asked   bool
	Gateway gateway.OperationStatus
	// Disagrees is true when the record is final and the gateway says otherwise: support must
	// look at it (the record is never rewritten behind the workflow's back). A late success of
	// a collection is not a disagreement: it is reconciled (Reconciled says how).
	Disagrees  bool
	Reconciled store.ReconcileOutcome
}

// RecheckAtGateway reads the state of a transaction's latest attempt at its gateway. A final
// answer that the record does not show yet goes to the transaction's workflow, as an update that
// returns once the workflow has recorded it; the workflow stays the only writer of outcomes.
// Used by verify, the admin re-verify and the CLI.
func RecheckAtGateway(ctx context.Context, c client.Client, st *store.Store, gws *gateway.Router, t sika.Transaction) (Recheck, error) {
	var out Recheck
	attempt, err := st.LatestAttempt(ctx, t.ID)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	gw, err := gws.Gateway(attempt.Gateway)
	if err != nil {
		return out, err
	}
	read, err := activities.StatusReader(ctx, st, gw, t)
	if err != nil {
		return out, err
	}
	st2, err := read(ctx, attempt.ID.String())
	if err != nil {
		return out, fmt.Errorf("%w: %v", ErrGatewayUnreachable, err)
	}
	out.Asked, out.Gateway = true, st2
	switch {
	case st2.Status.Final() && t.Status == sika.StatusPending:
		if st2.Status == gateway.StatusSuccess {
			// Kept first (the operators' inbox): an update the workflow does not take loses
			// nothing, the run's end processes it.
			if _, out.Reconciled, err = st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: attempt.ID, GatewayReference: st2.GatewayReference,
				Source: "status read by a re-check"}); err != nil {
				return out, err
			}
			if out.Reconciled != store.ReconcileInFlight {
				out.Disagrees = out.Reconciled == store.ReconcilePayoutFlagged
				return out, nil
			}
			out.Reconciled = ""
		}
		outcome := activities.CollectionOutcome{AttemptID: attempt.ID, Gateway: attempt.Gateway, GatewayReference: st2.GatewayReference,
			FailureCode: st2.FailureCode, FailureMessage: st2.FailureMessage, Kind: activities.OutcomeFailed}
		if st2.Status == gateway.StatusSuccess {
			outcome.Kind = activities.OutcomeSuccess
		}
		uctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := UpdateOperation(uctx, c, t, UpdateGatewayStatus, outcome, nil); err != nil {
			return out, fmt.Errorf("hand the gateway's answer to %s: %w", WorkflowIDOf(t), err)
		}
	case st2.Status == gateway.StatusSuccess && t.Status != sika.StatusSuccess:
		// The run ended (FAILED, or replaced by a retry) and the operator says the customer
		// paid: reconciled, credited once (activities.ReconcileLateAnswer).
		rec, err := activities.ReconcileLateAnswer(ctx, st, gws, activities.LateAnswer{AttemptID: attempt.ID, Status: st2.Status,
			GatewayReference: st2.GatewayReference, Trusted: true, Source: "status read by a re-check"})
		if err != nil {
			return out, err
		}
		out.Reconciled = rec
		out.Disagrees = rec == store.ReconcilePayoutFlagged
	case st2.Status.Final() && string(st2.Status) != string(t.Status):
		out.Disagrees = true
	}
	return out, nil
}
