package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
)

// purgeBatch is how many expired keys one DELETE removes.
const purgeBatch = 1000

// PurgeExpiredIdempotencyKeys deletes expired Idempotency-Keys and returns how many.
func (a *Activities) PurgeExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	n, err := a.Store.PurgeExpiredIdempotencyKeys(ctx, purgeBatch)
	if err != nil {
		return n, fmt.Errorf("purge idempotency keys: %w", err)
	}
	activity.GetLogger(ctx).Info("purged expired idempotency keys", "deleted", n)
	return n, nil
}

// RequestLogRetention is how long the API request logs of `sika logs tail` are kept.
const RequestLogRetention = 7 * 24 * time.Hour

// PurgeAPIRequestLogs deletes the API request logs older than RequestLogRetention and returns
// how many.
func (a *Activities) PurgeAPIRequestLogs(ctx context.Context) (int64, error) {
	n, err := a.Store.PurgeAPIRequestLogs(ctx, time.Now().Add(-RequestLogRetention), purgeBatch)
	if err != nil {
		return n, fmt.Errorf("purge api request logs: %w", err)
	}
	activity.GetLogger(ctx).Info("purged api request logs", "deleted", n)
	return n, nil
}
