package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// batchTx is the payout transaction of item i of the test batch.
func batchTx(i int) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i)}) }

// TestPayoutBatchContinuesAsNew runs a batch of 7 items, 3 per run and 2 at once: each run sends
// its items in index order, waits for its children, and continues as new from the next index;
// the last run ends the batch. Every item is dispatched and paid exactly once, in order.
func TestPayoutBatchContinuesAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	id := uuid.New()
	const items, perRun, concurrency = 7, 3, 2
	var dispatched []int
	var paid []uuid.UUID
	in := PayoutBatchInput{BatchID: id, Concurrency: concurrency, PerRun: perRun}
	runs := 0
	for {
		runs++
		require.LessOrEqual(t, runs, 3, "7 items at 3 per run take 3 runs")
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(Payout)
		env.OnActivity(a.PayoutBatchState, mock.Anything, id).Return(store.PayoutBatchState{Status: sika.BatchProcessing, ItemCount: items}, nil)
		env.OnActivity(a.DispatchPayoutBatchItem, mock.Anything, mock.Anything).Return(
			func(_ context.Context, ref activities.BatchItemRef) (store.BatchDispatch, error) {
				dispatched = append(dispatched, ref.Index)
				return store.BatchDispatch{Transaction: batchTx(ref.Index), Sent: true}, nil
			})
		env.OnWorkflow(Payout, mock.Anything, mock.Anything).After(time.Minute).Return(
			func(_ workflow.Context, p activities.PaymentInput) (PaymentResult, error) {
				paid = append(paid, p.TransactionID)
				return PaymentResult{Status: sika.StatusSuccess}, nil
			})
		last := in.Next+perRun >= items
		if last {
			env.OnActivity(a.EndPayoutBatch, mock.Anything, id).Return(sika.BatchCompleted, nil).Once()
		}
		start := env.Now()
		env.ExecuteWorkflow(PayoutBatch, in)
		require.True(t, env.IsWorkflowCompleted())
		took := env.Now().Sub(start)
		if last {
			require.NoError(t, env.GetWorkflowError())
			var got sika.PayoutBatchStatus
			require.NoError(t, env.GetWorkflowResult(&got))
			assert.Equal(t, sika.BatchCompleted, got)
			assert.Equal(t, time.Minute, took.Round(time.Second), "the last item alone")
			env.AssertExpectations(t)
			break
		}
		var next *workflow.ContinueAsNewError
		require.ErrorAs(t, env.GetWorkflowError(), &next)
		assert.Equal(t, 2*time.Minute, took.Round(time.Second), "3 items 2 at a time: two rounds of children, all ended before continuing")
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(next.Input, &in))
		assert.Equal(t, runs*perRun, in.Next)
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6}, dispatched, "each item once, in order")
	want := make([]uuid.UUID, items)
	for i := range want {
		want[i] = batchTx(i)
	}
	assert.ElementsMatch(t, want, paid, "each item's payout run once")
}

// TestPayoutBatchStopsAtCancel: the dispatch that finds the batch cancelled sends nothing more.
func TestPayoutBatchStopsAtCancel(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Payout)
	id := uuid.New()
	env.OnActivity(a.PayoutBatchState, mock.Anything, id).Return(store.PayoutBatchState{Status: sika.BatchProcessing, ItemCount: 5}, nil)
	env.OnActivity(a.DispatchPayoutBatchItem, mock.Anything, activities.BatchItemRef{Batch: id, Index: 0}).
		Return(store.BatchDispatch{Transaction: batchTx(0), Sent: true}, nil).Once()
	env.OnActivity(a.DispatchPayoutBatchItem, mock.Anything, activities.BatchItemRef{Batch: id, Index: 1}).
		Return(store.BatchDispatch{Stop: true}, nil).Once()
	env.OnWorkflow(Payout, mock.Anything, activities.PaymentInput{TransactionID: batchTx(0), Run: 1}).
		Return(PaymentResult{Status: sika.StatusSuccess}, nil).Once()
	env.OnActivity(a.EndPayoutBatch, mock.Anything, id).Return(sika.BatchCancelled, nil).Once()
	env.ExecuteWorkflow(PayoutBatch, PayoutBatchInput{BatchID: id})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got sika.PayoutBatchStatus
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, sika.BatchCancelled, got)
	env.AssertExpectations(t)
}

// TestPayoutBatchApproval: a batch awaiting approval waits (durably) until it is approved, then
// sends; one nobody approves expires at approval_expires_at and sends nothing.
func TestPayoutBatchApproval(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	id := uuid.New()
	t.Run("approved after 100 minutes", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(Payout)
		expires := env.Now().Add(24 * time.Hour)
		awaiting := store.PayoutBatchState{Status: sika.BatchAwaitingApproval, ItemCount: 1, ApprovalExpiresAt: &expires}
		approved := store.PayoutBatchState{Status: sika.BatchProcessing, ItemCount: 1, ApprovalExpiresAt: &expires}
		// The first read, then the 15-minute reads until the signal (6 of them in 100 minutes).
		env.OnActivity(a.PayoutBatchState, mock.Anything, id).Return(awaiting, nil).Times(7)
		env.OnActivity(a.PayoutBatchState, mock.Anything, id).Return(approved, nil).Once()
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalPayoutBatchChanged, nil) }, 100*time.Minute)
		env.OnActivity(a.DispatchPayoutBatchItem, mock.Anything, activities.BatchItemRef{Batch: id, Index: 0}).
			Return(store.BatchDispatch{Transaction: batchTx(0), Sent: true}, nil).Once()
		env.OnWorkflow(Payout, mock.Anything, mock.Anything).Return(PaymentResult{Status: sika.StatusSuccess}, nil).Once()
		env.OnActivity(a.EndPayoutBatch, mock.Anything, id).Return(sika.BatchCompleted, nil).Once()
		start := env.Now()
		env.ExecuteWorkflow(PayoutBatch, PayoutBatchInput{BatchID: id})
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, 100*time.Minute, env.Now().Sub(start).Round(time.Minute))
		env.AssertExpectations(t)
	})
	t.Run("expires unapproved", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(Payout)
		expires := env.Now().Add(time.Hour)
		awaiting := store.PayoutBatchState{Status: sika.BatchAwaitingApproval, ItemCount: 3, ApprovalExpiresAt: &expires}
		env.OnActivity(a.PayoutBatchState, mock.Anything, id).Return(awaiting, nil)
		env.OnActivity(a.ExpirePayoutBatch, mock.Anything, id).Return(store.PayoutBatchState{Status: sika.BatchExpired, ItemCount: 3}, nil).Once()
		start := env.Now()
		env.ExecuteWorkflow(PayoutBatch, PayoutBatchInput{BatchID: id})
		require.NoError(t, env.GetWorkflowError())
		var got sika.PayoutBatchStatus
		require.NoError(t, env.GetWorkflowResult(&got))
		assert.Equal(t, sika.BatchExpired, got)
		assert.Equal(t, time.Hour, env.Now().Sub(start).Round(time.Minute), "the durable timer to approval_expires_at")
		env.AssertExpectations(t)
	})
}
