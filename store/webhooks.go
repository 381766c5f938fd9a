package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

const endpointColumns = `id, merchant_id, payment_link_id, url, description, environment, is_active, disabled_reason,
	created_by_member, created_at, updated_at`

func scanEndpoint(row pgx.Row) (sika.WebhookEndpoint, error) {
	var e sika.WebhookEndpoint
	err := row.Scan(&e.ID, &e.Merchant, &e.PaymentLink, &e.URL, &e.Description, &e.Environment, &e.IsActive, &e.DisabledReason,
		&e.CreatedByMember, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

var endpointTable = table[sika.WebhookEndpoint]{kind: "Webhook endpoint", what: "webhook endpoints", columns: endpointColumns,
	from: "webhook_endpoints", scan: scanEndpoint}

// CreateWebhookEndpoint records an endpoint with its signing secret.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e sika.WebhookEndpoint, secret string) (sika.WebhookEndpoint, error) {
	out, err := scanEndpoint(s.pool.QueryRow(ctx, `INSERT INTO webhook_endpoints (merchant_id, environment, payment_link_id, url,
			description, is_active, signing_secret, created_by_member)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+endpointColumns,
		e.Merchant, e.Environment, e.PaymentLink, e.URL, e.Description, e.IsActive, secret, e.CreatedByMember))
	if err != nil {
		return out, fmt.Errorf("insert webhook endpoint: %w", err)
	}
	out.SigningSecret = secret
	return out, nil
}

// ListWebhookEndpoints returns a page of the merchant's endpoints in an environment.
func (s *Store) ListWebhookEndpoints(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.WebhookEndpoint, int, error) {
	return listPage(ctx, s, "list webhook endpoints", endpointColumns, `FROM webhook_endpoints WHERE merchant_id = $1 AND environment = $2 AND deleted_at IS NULL`,
		`created_at DESC, id DESC`, []any{merchantID, env}, page, scanEndpoint)
}

// WebhookEndpointByID returns an endpoint of the merchant and environment, or not_found.
func (s *Store) WebhookEndpointByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.WebhookEndpoint, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND deleted_at IS NULL`, id, merchantID, env), scanEndpoint, "Webhook endpoint", "select webhook endpoint")
}

// EndpointPatch holds what a PATCH may change; nil leaves a field as it is.
type EndpointPatch struct {
	URL         *string
	Description *string
	IsActive    *bool
}

// UpdateWebhookEndpoint applies a patch; re-activating clears the reason it was disabled.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID, p EndpointPatch) (sika.WebhookEndpoint, error) {
	return one(s.pool.QueryRow(ctx, `UPDATE webhook_endpoints SET url = coalesce($4, url),
			description = coalesce($5, description), is_active = coalesce($6, is_active),
			disabled_reason = CASE WHEN $6 THEN '' ELSE disabled_reason END, updated_at = now()
		WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND deleted_at IS NULL RETURNING `+endpointColumns,
		id, merchantID, env, p.URL, p.Description, p.IsActive), scanEndpoint, "Webhook endpoint", "update webhook endpoint")
}

// DeleteWebhookEndpoint removes an endpoint from use (kept for the deliveries log).
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) error {
	return endpointTable.softDelete(ctx, s, merchantID, env, id)
}

// RotateWebhookSecret gives an endpoint a new secret; the old one keeps signing until overlap
// has passed. A previous secret still within its own overlap keeps signing too, until that ends
// (the merchant may have lost the answer of the rotation before and still run with it): at most
// three secrets sign a delivery.
func (s *Store) RotateWebhookSecret(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID, secret string, overlap time.Duration) (sika.WebhookEndpoint, error) {
	e, err := one(s.pool.QueryRow(ctx, `UPDATE webhook_endpoints SET
			older_secret = CASE WHEN previous_secret_expires_at > now() THEN previous_secret END,
			older_secret_expires_at = CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END,
			previous_secret = signing_secret,
			previous_secret_expires_at = now() + $5 * interval '1 millisecond', signing_secret = $4, updated_at = now()
		WHERE id = $1 AND merchant_id = $2 AND environment = $3 AND deleted_at IS NULL RETURNING `+endpointColumns,
		id, merchantID, env, secret, overlap.Milliseconds()), scanEndpoint, "Webhook endpoint", "rotate webhook secret")
	if err != nil {
		return e, err
	}
	e.SigningSecret = secret
	return e, nil
}

// DeliveryJob is what one delivery attempt needs: the endpoint's address and live secrets, and
// the event's payload.
type DeliveryJob struct {
	Endpoint    sika.WebhookEndpoint
	Deleted     bool
	Secrets     []string
	Payload     []byte
	Merchant    uuid.UUID
	Environment sika.Environment
	// EventCreatedAt is when the event was recorded (the delivery lag metric starts there).
	EventCreatedAt time.Time
}

// DeliveryJob loads an event and an endpoint for a delivery attempt.
func (s *Store) DeliveryJob(ctx context.Context, target DeliveryTarget) (DeliveryJob, error) {
	var j DeliveryJob
	var secret string
	var previous, older *string
	var previousUntil, olderUntil *time.Time
	var deletedAt *time.Time
	err := s.pool.QueryRow(ctx, `SELECT `+endpointColumns+`, signing_secret, previous_secret, previous_secret_expires_at,
			older_secret, older_secret_expires_at, deleted_at
		FROM webhook_endpoints WHERE id = $1`, target.EndpointID).Scan(&j.Endpoint.ID, &j.Endpoint.Merchant, &j.Endpoint.PaymentLink,
		&j.Endpoint.URL, &j.Endpoint.Description, &j.Endpoint.Environment, &j.Endpoint.IsActive, &j.Endpoint.DisabledReason,
		&j.Endpoint.CreatedByMember, &j.Endpoint.CreatedAt, &j.Endpoint.UpdatedAt, &secret, &previous, &previousUntil,
		&older, &olderUntil, &deletedAt)
	if err != nil {
		return j, fmt.Errorf("load webhook endpoint: %w", err)
	}
	j.Deleted = deletedAt != nil
	j.Secrets = []string{secret}
	now := time.Now()
	for _, old := range []struct {
		secret *string
		until  *time.Time
	}{{previous, previousUntil}, {older, olderUntil}} {
		if old.secret != nil && old.until != nil && now.Before(*old.until) {
			j.Secrets = append(j.Secrets, *old.secret)
		}
	}
	if err := s.pool.QueryRow(ctx, `SELECT payload, merchant_id, environment, created_at FROM events WHERE event_id = $1`, target.EventID).
		Scan(&j.Payload, &j.Merchant, &j.Environment, &j.EventCreatedAt); err != nil {
		return j, fmt.Errorf("load event: %w", err)
	}
	return j, nil
}

// RecordDelivery stores one delivery attempt; a 410 disables the endpoint in the same
// transaction.
func (s *Store) RecordDelivery(ctx context.Context, d sika.WebhookDelivery, merchant uuid.UUID, env sika.Environment, disable string) error {
	return s.InTx(ctx, func(tx pgx.Tx) error { return recordDelivery(ctx, tx, d, merchant, env, disable) })
}

// RecordFinalOutboxDelivery stores a first attempt made from the outbox that needs no retry
// (delivered, or the endpoint is gone) and removes its outbox row in the same transaction, so
// that a delivery recorded as done is never sent again from the outbox.
func (s *Store) RecordFinalOutboxDelivery(ctx context.Context, outboxID int64, d sika.WebhookDelivery, merchant uuid.UUID, env sika.Environment, disable string) error {
	return s.InTx(ctx, func(tx pgx.Tx) error {
		if err := recordDelivery(ctx, tx, d, merchant, env, disable); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM workflow_outbox WHERE id = $1`, outboxID); err != nil {
			return fmt.Errorf("delete outbox %d: %w", outboxID, err)
		}
		return nil
	})
}

func recordDelivery(ctx context.Context, tx pgx.Tx, d sika.WebhookDelivery, merchant uuid.UUID, env sika.Environment, disable string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, merchant_id, environment, attempt,
			succeeded, status_code, latency_ms, response_excerpt, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
		d.ID, d.Event, d.Endpoint, merchant, env, d.Attempt, d.Succeeded, d.StatusCode, d.LatencyMS, d.ResponseExcerpt, d.Error); err != nil {
		return fmt.Errorf("insert delivery: %w", err)
	}
	if disable != "" {
		if _, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET is_active = false, disabled_reason = $2, updated_at = now()
			WHERE id = $1`, d.Endpoint, disable); err != nil {
			return fmt.Errorf("disable endpoint: %w", err)
		}
	}
	return nil
}

// EventKey is an event with its ordering key, for cursor pages.
type EventKey struct {
	sika.Event
	Key uuid.UUID
}

func scanEvent(row pgx.Row) (EventKey, error) {
	var payload []byte
	var ev EventKey
	if err := row.Scan(&ev.Key, &payload); err != nil {
		return ev, err
	}
	err := json.Unmarshal(payload, &ev.Event)
	return ev, err
}

// eventScopeSQL is the API-key scope an event needs to be seen (e is the events row), the one
// rule of the event list, the event routes and the live stream: PAYOUT for payouts, payout
// batches and settlements and the transaction events of a payout (RETRAIT), PAYIN for collections
// (PAIEMENT, read from the transaction's transaction_type in the event's data) and checkout sessions, BOTH for the transaction events of other types (wallet
// transfers, refunds); ” (any key) for the rest (refund.*, KYC decisions).
const eventScopeSQL = `(CASE
	WHEN e.type LIKE 'payout.%' OR e.type LIKE 'payout\_batch.%' OR e.type LIKE 'settlement.%' THEN 'PAYOUT'
	WHEN e.type LIKE 'checkout_session.%' THEN 'PAYIN'
	WHEN e.type LIKE 'transaction.%' THEN CASE e.payload->'data'->>'transaction_type' WHEN 'PAIEMENT' THEN 'PAYIN' WHEN 'RETRAIT' THEN 'PAYOUT' ELSE 'BOTH' END
	ELSE '' END)`

// scopeAllows is the condition that an event e may be seen by a caller of scope $n (a key's
// scope; BOTH, or ” for a dashboard session, sees every event): sika.Scope.Allows on
// eventScopeSQL.
func scopeAllows(n int) string {
	return fmt.Sprintf(`($%d IN ('', 'BOTH') OR %s IN ('', $%d))`, n, eventScopeSQL, n)
}

// ListEvents returns a cursor page of the merchant's events, newest first, that a caller of
// scope may see ("" or BOTH: all).
func (s *Store) ListEvents(ctx context.Context, merchantID uuid.UUID, env sika.Environment, scope sika.Scope, req KeysetRequest) ([]EventKey, bool, error) {
	items, more, err := queryKeyset(ctx, s, `e.id, e.payload`, `FROM events e WHERE e.merchant_id = $1 AND e.environment = $2 AND `+scopeAllows(3),
		"e.", []any{merchantID, env, scope}, req, scanEvent)
	if err != nil {
		return nil, false, fmt.Errorf("list events: %w", err)
	}
	return items, more, nil
}

// EventByID returns an event of the merchant and environment that a caller of scope may see
// ("" or BOTH: any), or not_found.
func (s *Store) EventByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, scope sika.Scope, id string) (sika.Event, error) {
	ev, err := scanEvent(s.pool.QueryRow(ctx, `SELECT e.id, e.payload FROM events e WHERE e.event_id = $1 AND e.merchant_id = $2 AND e.environment = $3
		AND `+scopeAllows(4), id, merchantID, env, scope))
	return ev.Event, rowErr(err, "Event", "select event")
}

// EventDeliveries lists the delivery attempts of an event, oldest first.
func (s *Store) EventDeliveries(ctx context.Context, eventID string) ([]sika.WebhookDelivery, error) {
	return collect(ctx, s.pool, "deliveries", func(r pgx.Row) (sika.WebhookDelivery, error) {
		var d sika.WebhookDelivery
		err := r.Scan(&d.ID, &d.Event, &d.Endpoint, &d.Attempt, &d.Succeeded, &d.StatusCode, &d.LatencyMS, &d.ResponseExcerpt, &d.Error, &d.CreatedAt)
		return d, err
	}, `SELECT id, event_id, endpoint_id, attempt, succeeded, status_code, latency_ms, response_excerpt,
		error, created_at FROM webhook_deliveries WHERE event_id = $1 ORDER BY created_at, id`, eventID)
}

// Redeliver queues a new delivery of an event to every endpoint that matches it now, or to
// the one endpoint named when it matches. Each redelivery is a workflow of its own (its id
// carries a suffix), so that a finished delivery does not block it.
func (s *Store) Redeliver(ctx context.Context, ev sika.Event, suffix string, endpoint *uuid.UUID) (int, error) {
	n := 0
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var link *uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT payment_link_id FROM events WHERE event_id = $1`, ev.ID).Scan(&link); err != nil {
			return fmt.Errorf("read event: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT id FROM webhook_endpoints
			WHERE merchant_id = $1 AND environment = $2 AND is_active AND deleted_at IS NULL
			  AND (payment_link_id IS NULL OR payment_link_id = $3) AND ($4::uuid IS NULL OR id = $4)`,
			ev.Merchant, ev.Environment, link, endpoint)
		if err != nil {
			return fmt.Errorf("match webhook endpoints: %w", err)
		}
		endpoints, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return err
		}
		for _, ep := range endpoints {
			if _, err := insertOutbox(ctx, tx, WorkflowStart{ID: WebhookDeliveryWorkflowID(ev.ID, ep) + ":" + suffix,
				Type: WebhookDeliveryWorkflowType, Input: DeliveryTarget{EventID: ev.ID, EndpointID: ep}}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// EndpointDelivery is a delivery attempt with the type of the event it carried.
type EndpointDelivery struct {
	sika.WebhookDelivery
	EventType string
}

// EndpointDeliveries returns a keyset page of the delivery attempts to one endpoint of the
// merchant and environment, newest first: the endpoint's delivery log. Another merchant's
// endpoint has none.
func (s *Store) EndpointDeliveries(ctx context.Context, merchantID uuid.UUID, env sika.Environment, endpointID uuid.UUID, req KeysetRequest) ([]EndpointDelivery, bool, error) {
	items, more, err := queryKeyset(ctx, s, `d.id, d.event_id, d.endpoint_id, d.attempt, d.succeeded, d.status_code, d.latency_ms,
			d.response_excerpt, d.error, d.created_at, e.type`,
		`FROM webhook_deliveries d JOIN events e ON e.event_id = d.event_id
		WHERE d.endpoint_id = $1 AND d.merchant_id = $2 AND d.environment = $3`, "d.", []any{endpointID, merchantID, env}, req,
		func(r pgx.Row) (EndpointDelivery, error) {
			var d EndpointDelivery
			err := r.Scan(&d.ID, &d.Event, &d.Endpoint, &d.Attempt, &d.Succeeded, &d.StatusCode, &d.LatencyMS, &d.ResponseExcerpt,
				&d.Error, &d.CreatedAt, &d.EventType)
			return d, err
		})
	if err != nil {
		return nil, false, fmt.Errorf("list endpoint deliveries: %w", err)
	}
	return items, more, nil
}
