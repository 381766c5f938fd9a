package workflows

import (
	"context"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// PayoutBatchWorkflowType is the outbox type of a payout batch's workflow.
const PayoutBatchWorkflowType = "PayoutBatch"

// PayoutBatchWorkflowID is the id of a batch's workflow: one per batch.
func PayoutBatchWorkflowID(batchID uuid.UUID) string { return "payout-batch:" + batchID.String() }

// SignalPayoutBatchChanged tells a batch's workflow that its batch was approved, rejected or
// cancelled: it reads the batch again.
const SignalPayoutBatchChanged = "payout-batch-changed"

// Bounds of a batch's run.
const (
	// BatchConcurrency is how many of a batch's payouts run at once.
	BatchConcurrency = 20
	// BatchItemsPerRun is how many items one workflow run sends before it continues as new, so
	// that a batch of 1,000 never grows one history past Temporal's limits.
	BatchItemsPerRun = 200
	// decisionCheckEvery bounds each wait for an approval (of a batch or a payout): what waits
	// is read again between two waits, in case a signal was lost.
	decisionCheckEvery = 15 * time.Minute
)

// PayoutBatchInput names the batch and where its run starts; Concurrency and PerRun default to
// BatchConcurrency and BatchItemsPerRun.
type PayoutBatchInput struct {
	BatchID     uuid.UUID
	Next        int
	Concurrency int
	PerRun      int
}

// PayoutBatchStart is the outbox entry that starts a batch's workflow.
func PayoutBatchStart(in PayoutBatchInput) store.WorkflowStart {
	return store.WorkflowStart{ID: PayoutBatchWorkflowID(in.BatchID), Type: PayoutBatchWorkflowType, Input: in}
}

// StartPayoutBatch starts a batch's workflow; one already started under the id (by the API or
// the outbox sweeper) is fine.
func StartPayoutBatch(ctx context.Context, c client.Client, in PayoutBatchInput) error {
	return startOnce(ctx, c, PayoutBatchWorkflowID(in.BatchID), TaskQueue, PayoutBatch, in)
}

// PayoutBatch runs a payout batch. A batch that waits for a second member's approval waits
// (its money held) for the decision, or until its approval expires (durable timer), when it
// ends EXPIRED and releases its hold. An approved batch sends its items in index order: each
// is made a payout transaction by an activity (idempotent: asked again it answers the same
// transaction) and run as a child Payout workflow (id payout:<transaction>, abandoned rather
// than cancelled if the batch's run ends), at most Concurrency at once. After PerRun items,
// once those it started have ended, it continues as new from the next index: a worker crash
// replays the run to the same items and the same children, so no item is skipped or sent twice.
// A cancel stops the sending (the items not sent are cancelled by the API, under the batch
// row's lock). Once every item sent has ended, the batch ends (payout_batch.completed).
func PayoutBatch(ctx workflow.Context, in PayoutBatchInput) (sika.PayoutBatchStatus, error) {
	ctx = withStoreStepOptions(ctx)
	if in.Concurrency <= 0 {
		in.Concurrency = BatchConcurrency
	}
	if in.PerRun <= 0 {
		in.PerRun = BatchItemsPerRun
	}
	b := &payoutBatch{in: in, changed: workflow.GetSignalChannel(ctx, SignalPayoutBatchChanged)}
	st, err := b.state(ctx)
	if err != nil {
		return "", err
	}
	if st.Status == sika.BatchAwaitingApproval {
		if st, err = b.awaitDecision(ctx, st); err != nil {
			return "", err
		}
	}
	if st.Status != sika.BatchProcessing {
		return st.Status, nil
	}
	next, done, err := b.send(ctx, st.ItemCount)
	if err != nil {
		return "", err
	}
	if !done {
		in.Next = next
		return "", workflow.NewContinueAsNewError(ctx, PayoutBatch, in)
	}
	var status sika.PayoutBatchStatus
	err = workflow.ExecuteActivity(ctx, a.EndPayoutBatch, in.BatchID).Get(ctx, &status)
	return status, err
}

type payoutBatch struct {
	in      PayoutBatchInput
	changed workflow.ReceiveChannel
}

func (b *payoutBatch) state(ctx workflow.Context) (store.PayoutBatchState, error) {
	var st store.PayoutBatchState
	err := workflow.ExecuteActivity(ctx, a.PayoutBatchState, b.in.BatchID).Get(ctx, &st)
	return st, err
}

// awaitDecision waits for the batch to leave AWAITING_APPROVAL: a signal (approved, rejected,
// cancelled) or a periodic read says it did, or its approval expires and it ends EXPIRED (the
// store decides under the batch's lock, so an approval that committed first wins).
func (b *payoutBatch) awaitDecision(ctx workflow.Context, st store.PayoutBatchState) (store.PayoutBatchState, error) {
	for st.Status == sika.BatchAwaitingApproval {
		remaining := time.Duration(0)
		if st.ApprovalExpiresAt != nil {
			remaining = st.ApprovalExpiresAt.Sub(workflow.Now(ctx))
		}
		var err error
		if remaining <= 0 {
			if err = workflow.ExecuteActivity(ctx, a.ExpirePayoutBatch, b.in.BatchID).Get(ctx, &st); err != nil || st.Status != sika.BatchAwaitingApproval {
				return st, err
			}
			// Not due yet by the database's clock (the worker's runs ahead): again shortly.
			remaining = 10 * time.Second
		}
		b.wait(ctx, min(remaining, decisionCheckEvery))
		if st, err = b.state(ctx); err != nil {
			return st, err
		}
	}
	return st, nil
}

// wait sleeps for d or until the batch's changed signal, whichever comes first; the timer is
// cancelled when the signal wins.
func (b *payoutBatch) wait(ctx workflow.Context, d time.Duration) {
	waitSignalOrTimer(ctx, b.changed, d)
}

// send dispatches the items of this run from in.Next, in index order, with at most
// in.Concurrency child payouts running, and waits for those it started. It answers the next
// index to send and whether the batch has nothing left to send (its last item reached, or a
// cancel stopped it).
func (b *payoutBatch) send(ctx workflow.Context, count int) (next int, done bool, err error) {
	running := 0
	children := workflow.NewSelector(ctx)
	last := min(count, b.in.Next+b.in.PerRun)
	stopped := false
	i := b.in.Next
	for ; i < last && !stopped; i++ {
		for running >= b.in.Concurrency {
			children.Select(ctx)
			running--
		}
		var d store.BatchDispatch
		if err := workflow.ExecuteActivity(ctx, a.DispatchPayoutBatchItem, activities.BatchItemRef{Batch: b.in.BatchID, Index: i}).Get(ctx, &d); err != nil {
			return i, false, err
		}
		stopped = d.Stop
		if !d.Sent {
			continue
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: PayoutWorkflowID(d.Transaction),
			// The payout goes on whatever happens to the batch's run: its hold and its
			// operator's answer are its own.
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		})
		f := workflow.ExecuteChildWorkflow(cctx, Payout, activities.PaymentInput{TransactionID: d.Transaction, Run: 1})
		running++
		item := i
		children.AddFuture(f, func(f workflow.Future) {
			var r PaymentResult
			if err := f.Get(ctx, &r); err != nil {
				workflow.GetLogger(ctx).Warn("payout of batch item ended with an error", "batch", b.in.BatchID, "index", item, "err", err)
			}
		})
	}
	for ; running > 0; running-- {
		children.Select(ctx)
	}
	return i, stopped || i >= count, nil
}
