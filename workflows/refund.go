package workflows

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// RefundWorkflowID is the id of a refund's workflow: one per refund transaction.
func RefundWorkflowID(txID uuid.UUID) string { return "refund:" + txID.String() }

// RefundWorkflowType is the refund's workflow type as written in the outbox.
const RefundWorkflowType = "Refund"

// Refund gives a customer back (part of) a collection from the merchant's held balance, under
// the payout's rules (see Payout): the operator's own refund of the collection, or a payout to
// the payer's number, tried on the planned gateways (activities.PreparePayment); a refusal is
// final, only "not accepted" falls back, an ambiguous send is settled by status reads at the
// same gateway; the hold is settled on success and released only on a definite failure. It
// never gives up on its own.
func Refund(ctx workflow.Context, in activities.PaymentInput) (PaymentResult, error) {
	return runOperation(ctx, &payment{in: in, start: workflow.Now(ctx), ops: operationOps{start: a.StartRefund, check: a.CheckRefund}})
}

// RefundStart is the outbox entry that starts a refund.
func RefundStart(in activities.PaymentInput) store.WorkflowStart {
	return store.WorkflowStart{ID: RefundWorkflowID(in.TransactionID), Type: RefundWorkflowType, Input: in}
}

// StartRefund starts a refund (see StartPayment for why a duplicate start is harmless).
func StartRefund(ctx context.Context, c client.Client, in activities.PaymentInput) error {
	return startOperation(ctx, c, RefundWorkflowID(in.TransactionID), Refund, in)
}
