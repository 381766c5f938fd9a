package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// BatchItemRef names one item of a payout batch by its index.
type BatchItemRef struct {
	Batch uuid.UUID
	Index int
}

// PayoutBatchState reads what a batch's workflow needs to decide its next step.
func (a *Activities) PayoutBatchState(ctx context.Context, batch uuid.UUID) (store.PayoutBatchState, error) {
	return a.Store.PayoutBatchStateOf(ctx, batch)
}

// DispatchPayoutBatchItem sends one item of a batch: its payout transaction is created with its
// part of the batch's hold (store.DispatchPayoutBatchItem); run again, it answers the same
// transaction.
func (a *Activities) DispatchPayoutBatchItem(ctx context.Context, item BatchItemRef) (store.BatchDispatch, error) {
	d, err := a.Store.DispatchPayoutBatchItem(ctx, item.Batch, item.Index)
	if err != nil {
		return d, fmt.Errorf("dispatch item %d of payout batch %s: %w", item.Index, item.Batch, err)
	}
	return d, nil
}

// EndPayoutBatch ends a batch whose items sent have all ended (store.EndPayoutBatch).
func (a *Activities) EndPayoutBatch(ctx context.Context, batch uuid.UUID) (sika.PayoutBatchStatus, error) {
	status, _, err := a.Store.EndPayoutBatch(ctx, batch)
	return status, err
}

// ExpirePayoutBatch ends a batch whose approval has expired (store.ExpirePayoutBatch).
func (a *Activities) ExpirePayoutBatch(ctx context.Context, batch uuid.UUID) (store.PayoutBatchState, error) {
	return a.Store.ExpirePayoutBatch(ctx, batch)
}

// ExpirePayoutApproval ends a payout whose approval window has passed without a decision
// (store.ExpirePayoutApproval) and answers its status.
func (a *Activities) ExpirePayoutApproval(ctx context.Context, transaction uuid.UUID) (sika.TransactionStatus, error) {
	return a.Store.ExpirePayoutApproval(ctx, transaction)
}
