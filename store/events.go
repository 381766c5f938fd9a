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

// WebhookDeliveryWorkflowType is the outbox type of one event's delivery to one endpoint.
const WebhookDeliveryWorkflowType = "WebhookDelivery"

// WebhookDeliveryWorkflowID is the id of the delivery of an event to an endpoint.
func WebhookDeliveryWorkflowID(eventID string, endpointID uuid.UUID) string {
	return "webhook:" + eventID + ":" + endpointID.String()
}

// DeliveryTarget names one delivery: an event to an endpoint.
type DeliveryTarget struct {
	EventID    string
	EndpointID uuid.UUID
}

// recordEvent writes an event in the caller's Postgres transaction, with one outbox row per
// active endpoint that must receive it: every global endpoint of the merchant's environment,
// and the endpoints scoped to the event's payment link. The deliveries start once the
// transaction commits, and never if it rolls back.
func recordEvent(ctx context.Context, tx pgx.Tx, typ sika.EventType, merchant uuid.UUID, env sika.Environment, link, transaction *uuid.UUID, data any) (sika.Event, error) {
	id, err := sika.NewEventID()
	if err != nil {
		return sika.Event{}, err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return sika.Event{}, fmt.Errorf("encode event data: %w", err)
	}
	ev := sika.Event{ID: id, Type: typ, CreatedAt: time.Now().UTC().Truncate(time.Microsecond), Environment: env, Data: raw,
		Merchant: merchant, PaymentLink: link, Transaction: transaction}
	payload, err := json.Marshal(ev)
	if err != nil {
		return ev, fmt.Errorf("encode event: %w", err)
	}
	key, err := uuid.NewV7()
	if err != nil {
		return ev, err
	}
	// The event and the endpoints it goes to, in one round trip: the insert runs to its end
	// whatever the select reads, and both see the transaction's own writes.
	rows, err := tx.Query(ctx, `WITH event AS (
			INSERT INTO events (id, event_id, merchant_id, environment, type, payload, payment_link_id, transaction_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9))
		SELECT id FROM webhook_endpoints
		WHERE merchant_id = $3 AND environment = $4 AND is_active AND deleted_at IS NULL
		  AND (payment_link_id IS NULL OR payment_link_id = $7)`,
		key, ev.ID, merchant, env, typ, payload, link, transaction, ev.CreatedAt)
	if err != nil {
		return ev, fmt.Errorf("insert event: %w", err)
	}
	endpoints, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return ev, fmt.Errorf("insert event and match webhook endpoints: %w", err)
	}
	return ev, queueDeliveries(ctx, tx, ev, endpoints)
}

// queueDeliveries writes the outbox rows of an event's deliveries to its matching endpoints.
func queueDeliveries(ctx context.Context, tx pgx.Tx, ev sika.Event, endpoints []uuid.UUID) error {
	for _, ep := range endpoints {
		if _, err := insertOutbox(ctx, tx, WorkflowStart{ID: WebhookDeliveryWorkflowID(ev.ID, ep), Type: WebhookDeliveryWorkflowType,
			Input: DeliveryTarget{EventID: ev.ID, EndpointID: ep}}); err != nil {
			return err
		}
	}
	return nil
}

// refundEvents are the refund.* events of a refund's statuses.
var refundEvents = map[sika.TransactionStatus]sika.EventType{sika.StatusPending: sika.EventRefundPending,
	sika.StatusSuccess: sika.EventRefundSucceeded, sika.StatusFailed: sika.EventRefundFailed}

// transactionEvents records the events of a transaction's status: transaction.pending,
// .succeeded or .failed, plus payout.* for payouts, refund.* for refunds and settlement.* for
// settlements.
func transactionEvents(ctx context.Context, tx pgx.Tx, t sika.Transaction) error {
	var types []sika.EventType
	switch t.Status {
	case sika.StatusPending:
		types = []sika.EventType{sika.EventTransactionPending}
	case sika.StatusSuccess:
		types = []sika.EventType{sika.EventTransactionSucceeded}
		if t.Type == sika.TypePayout {
			types = append(types, sika.EventPayoutSucceeded)
		}
	case sika.StatusFailed:
		types = []sika.EventType{sika.EventTransactionFailed}
		if t.Type == sika.TypePayout {
			types = append(types, sika.EventPayoutFailed)
		}
	}
	if typ, ok := refundEvents[t.Status]; ok && t.Type == sika.TypeRefund {
		types = append(types, typ)
	}
	for _, typ := range types {
		if _, err := recordEvent(ctx, tx, typ, t.Merchant, t.Environment, t.PaymentLink, &t.ID, t); err != nil {
			return err
		}
	}
	if t.Type != sika.TypePayout || !t.Status.Final() {
		return nil
	}
	st, err := scanSettlement(tx.QueryRow(ctx, `SELECT `+settlementColumns+` FROM settlements s
		JOIN transactions t ON t.id = s.transaction_id WHERE s.transaction_id = $1`, t.ID))
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read settlement: %w", err)
	}
	typ := sika.EventSettlementSucceeded
	if t.Status == sika.StatusFailed {
		typ = sika.EventSettlementFailed
	}
	_, err = recordEvent(ctx, tx, typ, t.Merchant, t.Environment, nil, &t.ID, st)
	return err
}
