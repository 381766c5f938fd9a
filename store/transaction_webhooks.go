package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// TransactionDelivery is a delivery attempt of one of a transaction's events, with the event's
// type and the endpoint it went to.
type TransactionDelivery struct {
	sika.WebhookDelivery
	EventType   sika.EventType
	EndpointURL string
}

// maxTransactionDeliveries bounds the attempts one transaction page lists (a few events, each
// retried at most ten times to each endpoint).
const maxTransactionDeliveries = 200

// TransactionDeliveries lists the webhook delivery attempts of the events of a transaction of
// the merchant and environment, oldest first; another merchant's transaction has none.
func (s *Store) TransactionDeliveries(ctx context.Context, merchantID uuid.UUID, env sika.Environment, transactionID uuid.UUID) ([]TransactionDelivery, error) {
	return collect(ctx, s.pool, "transaction deliveries", func(r pgx.Row) (TransactionDelivery, error) {
		var d TransactionDelivery
		err := r.Scan(&d.ID, &d.Event, &d.Endpoint, &d.Attempt, &d.Succeeded, &d.StatusCode, &d.LatencyMS, &d.ResponseExcerpt,
			&d.Error, &d.CreatedAt, &d.EventType, &d.EndpointURL)
		return d, err
	}, `SELECT d.id, d.event_id, d.endpoint_id, d.attempt, d.succeeded, d.status_code, d.latency_ms,
			d.response_excerpt, d.error, d.created_at, e.type, w.url
		FROM events e
		JOIN webhook_deliveries d ON d.event_id = e.event_id
		JOIN webhook_endpoints w ON w.id = d.endpoint_id
		WHERE e.transaction_id = $3 AND e.merchant_id = $1 AND e.environment = $2
		ORDER BY d.created_at, d.id LIMIT $4`, merchantID, env, transactionID, maxTransactionDeliveries)
}
