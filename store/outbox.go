package store

import (
	"context"
	"fmt"
	"time"
)

// outboxChannel is the Postgres notification channel raised when an outbox row commits.
const outboxChannel = "sika_outbox"

// ListenOutbox calls wake whenever an outbox row is committed (and every fallback interval,
// in case a notification was missed while reconnecting), until ctx ends.
func (s *Store) ListenOutbox(ctx context.Context, fallback time.Duration, wake func()) error {
	for ctx.Err() == nil {
		if err := s.listenOnce(ctx, fallback, wake); err != nil && ctx.Err() == nil {
			wake()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return ctx.Err()
}

func (s *Store) listenOnce(ctx context.Context, fallback time.Duration, wake func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire listen connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+outboxChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+outboxChannel) }()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, fallback)
		_, err := conn.Conn().WaitForNotification(waitCtx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && waitCtx.Err() == nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		wake()
	}
}
