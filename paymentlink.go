package sika

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// AmountType says who decides a payment link's amount.
type AmountType string

// Amount types. A FIXED link charges its amount (a FIXED link without amount lets the customer
// type it); a FREE link lets the customer choose, at least MinAmount when set.
const (
	AmountFixed AmountType = "FIXED"
	AmountFree  AmountType = "FREE"
)

// Valid reports whether t is a known amount type.
func (t AmountType) Valid() bool { return t == AmountFixed || t == AmountFree }

// PaymentLink is a reusable hosted payment page: each payment made on it is a transaction.
type PaymentLink struct {
	ID              uuid.UUID       `json:"id"`
	Merchant        uuid.UUID       `json:"merchant"`
	CreatedByMember *uuid.UUID      `json:"created_by_member"`
	Name            string          `json:"name"`
	Slug            string          `json:"slug"`
	URL             string          `json:"url"`
	Description     string          `json:"description"`
	AmountType      AmountType      `json:"amount_type"`
	Amount          *Amount         `json:"amount"`
	MinAmount       *Amount         `json:"min_amount"`
	Currency        string          `json:"currency"`
	Country         string          `json:"country"`
	UsageLimit      *int            `json:"usage_limit"`
	UsageCount      int             `json:"usage_count"`
	IsActive        bool            `json:"is_active"`
	Metadata        json.RawMessage `json:"metadata"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`

	// Environment is the link's environment (a TEST link is paid in the sandbox).
	Environment Environment `json:"-"`
}

// UsedUp reports whether the link has generated its usage_limit transactions: its page takes no
// more payments (409 usage_limit_reached).
func (l PaymentLink) UsedUp() bool {
	return l.UsageLimit != nil && l.UsageCount >= *l.UsageLimit
}

// CustomerChoosesAmount reports whether the payer types the amount on the link's page.
func (l PaymentLink) CustomerChoosesAmount() bool {
	return l.AmountType == AmountFree || l.Amount == nil
}
