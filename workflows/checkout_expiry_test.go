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
)

func TestCheckoutExpiryBranches(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	var a *activities.Activities
	id := uuid.New()

	run := func(t *testing.T, ttl time.Duration, setup func(env *testsuite.TestWorkflowEnvironment)) (sika.CheckoutStatus, time.Duration) {
		t.Helper()
		env := s.NewTestWorkflowEnvironment()
		start := env.Now()
		setup(env)
		env.ExecuteWorkflow(CheckoutExpiry, CheckoutExpiryInput{SessionID: id, ExpiresAt: start.Add(ttl)})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var got sika.CheckoutStatus
		require.NoError(t, env.GetWorkflowResult(&got))
		env.AssertExpectations(t)
		return got, env.Now().Sub(start)
	}

	t.Run("expires a pending session at expires_at", func(t *testing.T) {
		got, took := run(t, 30*time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.ExpireCheckoutSession, mock.Anything, id).Return(sika.CheckoutExpired, nil).Once()
		})
		assert.Equal(t, sika.CheckoutExpired, got)
		assert.Equal(t, 30*time.Minute, took.Round(time.Second))
	})
	t.Run("a long session checks its status hourly and expires at the end", func(t *testing.T) {
		got, took := run(t, 3*time.Hour+10*time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.CheckoutSessionStatus, mock.Anything, id).Return(sika.CheckoutPending, nil).Times(3)
			env.OnActivity(a.ExpireCheckoutSession, mock.Anything, id).Return(sika.CheckoutExpired, nil).Once()
		})
		assert.Equal(t, sika.CheckoutExpired, got)
		assert.Equal(t, 3*time.Hour+10*time.Minute, took.Round(time.Second))
	})
	t.Run("a cancel signal ends it early without expiring", func(t *testing.T) {
		got, took := run(t, 24*time.Hour, func(env *testsuite.TestWorkflowEnvironment) {
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalCheckoutSessionClosed, nil) }, 10*time.Minute)
			env.OnActivity(a.CheckoutSessionStatus, mock.Anything, id).Return(sika.CheckoutCancelled, nil).Once()
		})
		assert.Equal(t, sika.CheckoutCancelled, got)
		assert.Equal(t, 10*time.Minute, took.Round(time.Second))
	})
	t.Run("a paid session is seen at the next status check", func(t *testing.T) {
		got, took := run(t, 24*time.Hour, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.CheckoutSessionStatus, mock.Anything, id).Return(sika.CheckoutPaid, nil).Once()
		})
		assert.Equal(t, sika.CheckoutPaid, got)
		assert.Equal(t, time.Hour, took.Round(time.Second))
	})
	t.Run("a spurious signal keeps the session waiting", func(t *testing.T) {
		got, took := run(t, 20*time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalCheckoutSessionClosed, nil) }, 5*time.Minute)
			env.OnActivity(a.CheckoutSessionStatus, mock.Anything, id).Return(sika.CheckoutPending, nil).Once()
			env.OnActivity(a.ExpireCheckoutSession, mock.Anything, id).Return(sika.CheckoutExpired, nil).Once()
		})
		assert.Equal(t, sika.CheckoutExpired, got)
		assert.Equal(t, 20*time.Minute, took.Round(time.Second))
	})
	t.Run("the expiry loses to a payment that committed first", func(t *testing.T) {
		got, _ := run(t, 5*time.Minute, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.ExpireCheckoutSession, mock.Anything, id).Return(sika.CheckoutPaid, nil).Once()
		})
		assert.Equal(t, sika.CheckoutPaid, got)
	})
}
