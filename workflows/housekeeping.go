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
	// RequestLogsDeleted counts the API request logs past their retention that the run deleted.
	RequestLogsDeleted int64
}

// PurgeIdempotencyKeys deletes Idempotency-Keys past their 24-hour retention. It runs from the
// IdempotencyPurgeScheduleID schedule, hourly; a key is also refused as expired by the claim
// itself, so a late purge changes nothing a merchant can see, it only bounds the table. The same
// hourly run purges the API request logs past activities.RequestLogRetention.
func PurgeIdempotencyKeys(ctx workflow.Context) (PurgeIdempotencyKeysResult, error) {
	ctx = withSweepOptions(ctx)
	var a *activities.Activities
	var deleted int64
	if err := workflow.ExecuteActivity(ctx, a.PurgeExpiredIdempotencyKeys).Get(ctx, &deleted); err != nil {
		return PurgeIdempotencyKeysResult{}, err
	}
	res := PurgeIdempotencyKeysResult{Deleted: deleted}
	// Runs started before the request log existed replay without its purge.
	if workflow.GetVersion(ctx, "purge-request-logs", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return res, nil
	}
	if err := workflow.ExecuteActivity(ctx, a.PurgeAPIRequestLogs).Get(ctx, &res.RequestLogsDeleted); err != nil {
		return res, err
	}
	return res, nil
}

// RecheckEndedAttempts re-reads at their gateways the collection attempts that ended without
// the operator's final word (activities.RecheckEndedAttempts), so that a success whose callback
// never comes is still credited. It runs from the RecheckScheduleID schedule, every
// RecheckInterval; an attempt is read at most once per interval, within its operator's
// late-success window.
func RecheckEndedAttempts(ctx workflow.Context, interval time.Duration) (activities.RecheckSweepResult, error) {
	ctx = withSweepOptions(ctx)
	var a *activities.Activities
	var res activities.RecheckSweepResult
	err := workflow.ExecuteActivity(ctx, a.RecheckEndedAttempts, interval).Get(ctx, &res)
	return res, err
}

// withSweepOptions sets how a scheduled sweep's activities run: five minutes each, five tries
// (the next scheduled run sweeps again).
func withSweepOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, MaximumAttempts: 5},
	})
}
