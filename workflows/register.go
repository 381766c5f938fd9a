package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika/activities"
)

// StickyScheduleToStart is how long a workflow task waits on the worker's sticky queue (the
// worker that has the workflow in its cache) before the server moves it to the normal queue:
// the SDK's default, 5 s. A 30 s wait was tried against the sticky-timeout spiral on a starved
// machine (TestDevServerKeepsUp at load 30) and measured worse where it matters: on an idle
// machine, make bench at the 60/s cap completed 38.3 payments/s with 30 s against 45.9/s with
// 5 s, and with 30 s about 190 payouts' first workflow tasks were still undelivered a minute
// after the load (docs/performance.md).
const StickyScheduleToStart = 5 * time.Second

// WorkerOptions are the options of the workers of TaskQueue (sika worker, sika dev, the bench).
func WorkerOptions() worker.Options {
	return worker.Options{StickyScheduleToStartTimeout: StickyScheduleToStart}
}

// Register puts every workflow and the activities on the worker of TaskQueue. WebhookDelivery
// stays on it for the retries started on TaskQueue before they had a queue of their own.
func Register(w worker.Registry, a *activities.Activities) {
	w.RegisterWorkflow(PurgeIdempotencyKeys)
	w.RegisterWorkflow(Payment)
	w.RegisterWorkflow(Payout)
	w.RegisterWorkflow(Refund)
	w.RegisterWorkflow(PayoutBatch)
	w.RegisterWorkflow(WebhookDelivery)
	w.RegisterWorkflow(CheckoutExpiry)
	w.RegisterWorkflow(RecheckEndedAttempts)
	w.RegisterActivity(a)
}

// RegisterWebhookRetries puts WebhookDelivery and the activities on the worker of
// WebhookTaskQueue (SweepOutbox runs it).
func RegisterWebhookRetries(w worker.Registry, a *activities.Activities) {
	w.RegisterWorkflow(WebhookDelivery)
	w.RegisterActivity(a)
}

// EnsureSchedules creates the service's Temporal schedules when they do not exist yet; two
// workers starting together are fine (the second sees AlreadyExists).
func EnsureSchedules(ctx context.Context, c client.Client) error {
	schedules := []client.ScheduleOptions{{
		ID:      IdempotencyPurgeScheduleID,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{
			ID:                 IdempotencyPurgeScheduleID,
			Workflow:           PurgeIdempotencyKeys,
			TaskQueue:          TaskQueue,
			WorkflowRunTimeout: 30 * time.Minute,
			RetryPolicy:        &temporal.RetryPolicy{MaximumAttempts: 1},
		},
	}, {
		ID:      RecheckScheduleID,
		Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: RecheckInterval}}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{
			ID:                 RecheckScheduleID,
			Workflow:           RecheckEndedAttempts,
			Args:               []any{RecheckInterval},
			TaskQueue:          TaskQueue,
			WorkflowRunTimeout: 30 * time.Minute,
			RetryPolicy:        &temporal.RetryPolicy{MaximumAttempts: 1},
		},
	}}
	for _, opts := range schedules {
		_, err := c.ScheduleClient().Create(ctx, opts)
		var exists *serviceerror.AlreadyExists
		if err != nil && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) && !errors.As(err, &exists) {
			return fmt.Errorf("create schedule %s: %w", opts.ID, err)
		}
	}
	return nil
}
