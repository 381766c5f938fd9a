package activities

import (
	"context"
	"fmt"

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
