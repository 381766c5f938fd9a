package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika/activities"
)

// PayoutWorkflowID is the id of a payout's workflow: one per transaction.
func PayoutWorkflowID(txID uuid.UUID) string { return "payout:" + txID.String() }

// Payout pays a beneficiary from the merchant's held balance: it tries the routed gateways in
// order with the rules of collections (a refusal is final; only "not accepted" falls back; an
// ambiguous answer is settled by status reads at the same gateway, never by another gateway:
// paying a beneficiary twice is the worst bug there is), then settles the hold on success or
// releases it on failure. It never gives up on its own: only the gateway's final answer ends a
// payout whose disbursement was accepted.
func Payout(ctx workflow.Context, in activities.PaymentInput) (PaymentResult, error) {
	return runOperation(ctx, &payment{in: in, start: workflow.Now(ctx), ops: disbursement()})
}

func disbursement() operationOps {
	return operationOps{start: a.StartDisbursement, check: a.CheckDisbursement}
}
