package sika

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// EventType names what happened (contract §9).
type EventType string

// Event types.
const (
	EventTransactionPending      EventType = "transaction.pending"
	EventTransactionSucceeded    EventType = "transaction.succeeded"
	EventTransactionFailed       EventType = "transaction.failed"
	EventCheckoutSessionPaid     EventType = "checkout_session.paid"
	EventCheckoutSessionExpired  EventType = "checkout_session.expired"
	EventCheckoutSessionCanceled EventType = "checkout_session.cancelled"
	EventPayoutSucceeded         EventType = "payout.succeeded"
	EventPayoutFailed            EventType = "payout.failed"
	EventSettlementSucceeded     EventType = "settlement.succeeded"
	EventSettlementFailed        EventType = "settlement.failed"
	EventRefundPending           EventType = "refund.pending"
	EventRefundSucceeded         EventType = "refund.succeeded"
	EventRefundFailed            EventType = "refund.failed"
	EventKYCApproved             EventType = "kyc.approved"
	EventKYCRejected             EventType = "kyc.rejected"
)

// Event is something that happened to a merchant's resource, delivered to its webhook
// endpoints. The payload is the envelope sent: {id, type, created_at, environment, data}.
type Event struct {
	ID          string          `json:"id"`
	Type        EventType       `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	Environment Environment     `json:"environment"`
	Data        json.RawMessage `json:"data"`

	Merchant    uuid.UUID  `json:"-"`
	PaymentLink *uuid.UUID `json:"-"`
	Transaction *uuid.UUID `json:"-"`
}

// NewEventID returns an event id: "evt_" and 26 base62 characters.
func NewEventID() (string, error) {
	r, err := RandomBase62(26)
	return "evt_" + r, err
}

// WebhookEndpoint is where a merchant receives its events. A global endpoint (PaymentLink nil)
// gets every event of its environment; a link-scoped one gets its link's events too.
type WebhookEndpoint struct {
	ID              uuid.UUID   `json:"id"`
	Merchant        uuid.UUID   `json:"merchant"`
	PaymentLink     *uuid.UUID  `json:"payment_link"`
	URL             string      `json:"url"`
	Description     string      `json:"description"`
	Environment     Environment `json:"environment"`
	IsActive        bool        `json:"is_active"`
	DisabledReason  string      `json:"disabled_reason"`
	CreatedByMember *uuid.UUID  `json:"created_by_member"`
	CreatedAt       time.Time   `json:"created_at"`
	UpdatedAt       time.Time   `json:"updated_at"`
	// SigningSecret is shown only at creation and rotation.
	SigningSecret string `json:"signing_secret,omitempty"`
}

// WebhookDelivery is one attempt to deliver an event to an endpoint.
type WebhookDelivery struct {
	ID              uuid.UUID `json:"id"`
	Event           string    `json:"event"`
	Endpoint        uuid.UUID `json:"endpoint"`
	Attempt         int       `json:"attempt"`
	Succeeded       bool      `json:"succeeded"`
	StatusCode      *int      `json:"status_code"`
	LatencyMS       int       `json:"latency_ms"`
	ResponseExcerpt string    `json:"response_excerpt"`
	Error           string    `json:"error"`
	CreatedAt       time.Time `json:"created_at"`
}
