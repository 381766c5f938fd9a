package workflows

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

func TestWebhookDeliveryBranches(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	var a *activities.Activities
	target := store.DeliveryTarget{EventID: "evt_test", EndpointID: uuid.New()}
	schedule := []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute}
	try := func(n int) activities.DeliveryAttempt { return activities.DeliveryAttempt{Target: target, Attempt: n} }

	run := func(t *testing.T, in WebhookInput, setup func(env *testsuite.TestWorkflowEnvironment)) (WebhookResult, time.Duration) {
		t.Helper()
		env := s.NewTestWorkflowEnvironment()
		start := env.Now()
		setup(env)
		in.Target, in.Schedule = target, schedule
		env.ExecuteWorkflow(WebhookDelivery, in)
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var got WebhookResult
		require.NoError(t, env.GetWorkflowResult(&got))
		env.AssertExpectations(t)
		return got, env.Now().Sub(start)
	}
	// within says a wait took the schedule's step plus at most its 10 % jitter.
	within := func(t *testing.T, took, step time.Duration) {
		t.Helper()
		assert.GreaterOrEqual(t, took, step)
		assert.LessOrEqual(t, took, step+step/10+time.Second)
	}

	t.Run("from the start: delivered at the first try, at once", func(t *testing.T) {
		got, took := run(t, WebhookInput{}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(1)).Return(activities.DeliveryResult{Delivered: true}, nil).Once()
		})
		assert.Equal(t, WebhookResult{Delivered: true, Attempts: 1}, got)
		assert.Less(t, took, time.Second)
	})
	t.Run("after the sender's failed first try: resumes at the second step", func(t *testing.T) {
		got, took := run(t, WebhookInput{Tried: 1}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(2)).Return(activities.DeliveryResult{}, nil).Once()
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(3)).Return(activities.DeliveryResult{Delivered: true}, nil).Once()
		})
		assert.Equal(t, WebhookResult{Delivered: true, Attempts: 3}, got)
		within(t, took, 5*time.Second+5*time.Minute)
	})
	t.Run("the first try's Retry-After delays the second when longer than the step", func(t *testing.T) {
		got, took := run(t, WebhookInput{Tried: 1, RetryAfter: time.Hour}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(2)).Return(activities.DeliveryResult{Delivered: true}, nil).Once()
		})
		assert.Equal(t, WebhookResult{Delivered: true, Attempts: 2}, got)
		assert.Equal(t, time.Hour, took.Round(time.Second))
	})
	t.Run("a Retry-After shorter than the step changes nothing", func(t *testing.T) {
		_, took := run(t, WebhookInput{Tried: 1}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(2)).Return(activities.DeliveryResult{RetryAfter: time.Second}, nil).Once()
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(3)).Return(activities.DeliveryResult{Delivered: true}, nil).Once()
		})
		within(t, took, 5*time.Second+5*time.Minute)
	})
	t.Run("Retry-After is bounded by a day", func(t *testing.T) {
		_, took := run(t, WebhookInput{Tried: 1, RetryAfter: 30 * 24 * time.Hour}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(2)).Return(activities.DeliveryResult{Delivered: true}, nil).Once()
		})
		assert.Equal(t, maxRetryAfter, took.Round(time.Second))
	})
	t.Run("410 Gone, or an endpoint disabled or deleted, stops the retries", func(t *testing.T) {
		got, _ := run(t, WebhookInput{Tried: 1}, func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(a.DeliverWebhook, mock.Anything, try(2)).Return(activities.DeliveryResult{Stop: true}, nil).Once()
		})
		assert.Equal(t, WebhookResult{Stopped: true, Attempts: 2}, got)
	})
	t.Run("every step failed: the delivery ends undelivered after the last", func(t *testing.T) {
		got, took := run(t, WebhookInput{Tried: 1}, func(env *testsuite.TestWorkflowEnvironment) {
			for n := 2; n <= len(schedule); n++ {
				env.OnActivity(a.DeliverWebhook, mock.Anything, try(n)).Return(activities.DeliveryResult{}, nil).Once()
			}
		})
		assert.Equal(t, WebhookResult{Attempts: len(schedule)}, got)
		within(t, took, 5*time.Second+5*time.Minute+30*time.Minute)
	})
}
