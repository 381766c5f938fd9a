package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika/activities"
)

// PurgeIdempotencyKeysResult reports one purge run.
type PurgeIdempotencyKeysResult struct {
	Deleted int64
}

// PurgeIdempotencyKeys deletes Idempotency-Keys past their 24-hour retention. It runs from the
// IdempotencyPurgeScheduleID schedule, hourly; a key is also refused as expired by the claim
// itself, so a late purge changes nothing a merchant can see, it only bounds the table.
func PurgeIdempotencyKeys(ctx workflow.Context) (PurgeIdempotencyKeysResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 5},
	})
	var a *activities.Activities
	var deleted int64
	if err := workflow.ExecuteActivity(ctx, a.PurgeExpiredIdempotencyKeys).Get(ctx, &deleted); err != nil {
		return PurgeIdempotencyKeysResult{}, err
	}
	return PurgeIdempotencyKeysResult{Deleted: deleted}, nil
}
