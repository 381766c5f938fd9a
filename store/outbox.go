package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// outboxChannel is the Postgres notification channel raised when an outbox row commits.
const outboxChannel = "sika_outbox"

// ListenOutbox calls wake whenever a webhook delivery is committed to the outbox (and every
// fallback interval, in case a notification was missed while reconnecting), until ctx ends.
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

// ClaimWebhookOutbox claims up to limit due webhook deliveries, oldest first, for the caller to
// make their first attempt: each claimed row is leased (its next attempt pushed lease away), so
// that no other worker replica claims it meanwhile, and rows another replica is claiming right
// now are skipped rather than waited for. A claimant that dies leaves its rows to be claimed
// again once the lease has run out: a delivery may then be sent twice, which at-least-once
// delivery allows (the webhook-id is the event id on every try).
func (s *Store) ClaimWebhookOutbox(ctx context.Context, limit int, lease time.Duration) ([]OutboxEntry, error) {
	rows, err := s.pool.Query(ctx, `UPDATE workflow_outbox o SET next_attempt_at = now() + $2 * interval '1 millisecond'
		FROM (SELECT id FROM workflow_outbox WHERE workflow_type = $3 AND next_attempt_at <= now()
			ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) due
		WHERE o.id = due.id
		RETURNING o.id, o.workflow_id, o.workflow_type, o.input, o.attempts`, limit, lease.Milliseconds(), WebhookDeliveryWorkflowType)
	if err != nil {
		return nil, fmt.Errorf("claim webhook outbox: %w", err)
	}
	out, err := collectOutbox(rows, "claimed webhook outbox")
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b OutboxEntry) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
