package sika

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// CheckoutStatus is where a checkout session stands.
type CheckoutStatus string

// Checkout session statuses. PENDING is the only state that moves: to PAID (a payment of the
// session succeeded), CANCELLED (the merchant cancelled it) or EXPIRED (expires_at passed).
const (
	CheckoutPending   CheckoutStatus = "PENDING"
	CheckoutPaid      CheckoutStatus = "PAID"
	CheckoutExpired   CheckoutStatus = "EXPIRED"
	CheckoutCancelled CheckoutStatus = "CANCELLED"
)

// Valid reports whether s is a known status.
func (s CheckoutStatus) Valid() bool {
	return s == CheckoutPending || s == CheckoutPaid || s == CheckoutExpired || s == CheckoutCancelled
}

// CheckoutSession is a single-use hosted payment page for one amount.
type CheckoutSession struct {
	ID              uuid.UUID       `json:"id"`
	Merchant        uuid.UUID       `json:"merchant"`
	CreatedByMember *uuid.UUID      `json:"created_by_member"`
	Slug            string          `json:"slug"`
	CheckoutURL     string          `json:"checkout_url"`
	Amount          Amount          `json:"amount"`
	Currency        string          `json:"currency"`
	Description     string          `json:"description"`
	Country         string          `json:"country"`
	CustomerEmail   string          `json:"customer_email"`
	CustomerName    string          `json:"customer_name"`
	CustomerPhone   string          `json:"customer_phone"`
	ReturnURL       string          `json:"return_url"`
	Metadata        json.RawMessage `json:"metadata"`
	Status          CheckoutStatus  `json:"status"`
	ExpiresAt       *time.Time      `json:"expires_at"`
	Transaction     *uuid.UUID      `json:"transaction"`
	PaymentLink     *uuid.UUID      `json:"payment_link"`
	PaidAt          *time.Time      `json:"paid_at"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`

	// Environment is the session's environment (a TEST session is paid in the sandbox).
	Environment Environment `json:"-"`
	// FeeChargeMode is the mode asked at creation ("" for the merchant's default); the API shows
	// it only in the creation response (spec).
	FeeChargeMode FeeChargeMode `json:"-"`
}

// Payable reports whether a new payment may be started for the session at now.
func (c CheckoutSession) Payable(now time.Time) bool {
	return c.Status == CheckoutPending && (c.ExpiresAt == nil || now.Before(*c.ExpiresAt))
}
