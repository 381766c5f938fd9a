package workflows

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
)

// TestPayoutAwaitsApproval: a payout over the approval threshold waits (durably, sending
// nothing) until a second member decides: approved, it is sent; rejected, it ends without a
// gateway call; undecided, it is expired at its approval's end by the store and ends.
func TestPayoutAwaitsApproval(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	txID := uuid.New()
	in := activities.PaymentInput{TransactionID: txID, Run: 1}
	awaiting := func(until time.Time) activities.PaymentPlan {
		return activities.PaymentPlan{AwaitApprovalUntil: &until}
	}
	t.Run("approved after 100 minutes, then sent", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		plan := awaiting(env.Now().Add(24 * time.Hour))
		// The first read, then a read every 15 minutes until the signal (6 in 100 minutes).
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(plan, nil).Times(7)
		cand := gateway.Candidate{Gateway: "sandbox-a", Priority: 1}
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(activities.PaymentPlan{Proceed: true, Gateways: []gateway.Candidate{cand}}, nil).Once()
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalPayoutApprovalDecided, nil) }, 100*time.Minute)
		var sentAt time.Duration
		start := env.Now()
		env.OnActivity(a.StartDisbursement, mock.Anything, activities.StartCollectionInput{TransactionID: txID, Run: 1, Sequence: 1, Candidate: cand}).
			Run(func(mock.Arguments) { sentAt = env.Now().Sub(start) }).
			Return(activities.CollectionOutcome{Kind: activities.OutcomeSuccess, Gateway: "sandbox-a"}, nil).Once()
		env.OnActivity(a.CompletePayment, mock.Anything, mock.Anything).Return(sika.StatusSuccess, nil).Once()
		env.ExecuteWorkflow(Payout, in)
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, 100*time.Minute, sentAt.Round(time.Minute), "sent when the decision came, not before")
		env.AssertExpectations(t)
	})
	t.Run("rejected: nothing sent", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(awaiting(env.Now().Add(24*time.Hour)), nil).Once()
		// Rejected: the store ended it FAILED with the decision; the next read has nothing to do.
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(activities.PaymentPlan{}, nil).Once()
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalPayoutApprovalDecided, nil) }, 10*time.Minute)
		start := env.Now()
		env.ExecuteWorkflow(Payout, in)
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, 10*time.Minute, env.Now().Sub(start).Round(time.Minute))
		env.AssertExpectations(t)
	})
	t.Run("expires undecided", func(t *testing.T) {
		env := s.NewTestWorkflowEnvironment()
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(awaiting(env.Now().Add(time.Hour)), nil).Times(5)
		env.OnActivity(a.ExpirePayoutApproval, mock.Anything, txID).Return(sika.StatusFailed, nil).Once()
		env.OnActivity(a.PreparePayment, mock.Anything, in).Return(activities.PaymentPlan{}, nil).Once()
		start := env.Now()
		env.ExecuteWorkflow(Payout, in)
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, time.Hour, env.Now().Sub(start).Round(time.Minute), "the durable timer to the approval's end")
		env.AssertExpectations(t)
	})
}
