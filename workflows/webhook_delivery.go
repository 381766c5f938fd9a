package workflows

import (
	"math/rand/v2"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
)

// DefaultWebhookSchedule is when deliveries are tried (contract §9): at once, then after 5 s,
// 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each with up to 10 % jitter.
var DefaultWebhookSchedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// WebhookSchedule is the schedule given to new deliveries; set once at startup (tests shorten
// it, SIKA_WEBHOOK_SCHEDULE).
var WebhookSchedule = DefaultWebhookSchedule

// WebhookInput is one event to deliver to one endpoint, with its retry schedule.
type WebhookInput struct {
	Target   store.DeliveryTarget
	Schedule []time.Duration
	// Tried is how many tries of the schedule were made before the workflow started: 1 when the
	// webhook sender's first attempt failed (SendWebhooks), 0 when the workflow makes them all.
	Tried int
	// RetryAfter is the endpoint's Retry-After answered to the last of those tries.
	RetryAfter time.Duration
}

// WebhookResult says how a delivery ended.
type WebhookResult struct {
	Delivered bool
	Attempts  int
	// Stopped: the endpoint was disabled, deleted or answered 410.
	Stopped bool
}

// maxRetryAfter bounds how long an endpoint's Retry-After may delay the next try.
const maxRetryAfter = 24 * time.Hour

// WebhookDelivery delivers one event to one endpoint (id webhook:<event>:<endpoint>): a try on
// each step of the schedule until a 2xx, honouring the endpoint's Retry-After when it asks for
// more time than the schedule gives, and stopping for good when the endpoint answers 410 or is
// disabled or deleted. Every try is recorded by the activity. It is started only for the
// deliveries whose first try from the outbox failed (then it resumes the schedule after
// in.Tried) or could not be made there (SendWebhooks).
func WebhookDelivery(ctx workflow.Context, in WebhookInput) (WebhookResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute, MaximumAttempts: 10},
	})
	schedule := in.Schedule
	if len(schedule) == 0 {
		schedule = DefaultWebhookSchedule
	}
	res := WebhookResult{Attempts: in.Tried}
	retryAfter := in.RetryAfter
	for i := in.Tried; i < len(schedule); i++ {
		delay := schedule[i]
		if delay > 0 || retryAfter > 0 {
			var jitter float64
			_ = workflow.SideEffect(ctx, func(workflow.Context) any { return rand.Float64() * 0.1 }).Get(&jitter)
			wait := delay + time.Duration(float64(delay)*jitter)
			if retryAfter > wait {
				wait = min(retryAfter, maxRetryAfter)
			}
			if err := workflow.Sleep(ctx, wait); err != nil {
				return res, err
			}
		}
		var out activities.DeliveryResult
		if err := workflow.ExecuteActivity(ctx, a.DeliverWebhook, activities.DeliveryAttempt{Target: in.Target, Attempt: i + 1}).Get(ctx, &out); err != nil {
			return res, err
		}
		res.Attempts = i + 1
		if out.Delivered {
			res.Delivered = true
			return res, nil
		}
		if out.Stop {
			res.Stopped = true
			return res, nil
		}
		retryAfter = out.RetryAfter
	}
	return res, nil
}
