package sika

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Country is a country the service operates in.
type Country struct {
	ID              uuid.UUID `json:"id"`
	ISOCode         string    `json:"iso_code"`
	Name            string    `json:"name"`
	DefaultCurrency string    `json:"default_currency"`
	// CallingCode is the international dialling prefix without "+", e.g. "229" (the numbering
	// plans' own decides; see NormalizePhone).
	CallingCode string `json:"-"`
	// NationalNumberLengths are the digit counts of national numbers in the catalogue's own
	// plan: NormalizePhone accepts a number of these lengths beside the numbering plans' valid
	// numbers (Benin's 8-digit numbers, which the plan dropped in 2024, the sandbox's numbers).
	NationalNumberLengths []int     `json:"-"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
}

// OTPKind says whether and when a network asks the customer for a one-time code.
type OTPKind string

// OTP kinds. PRE_PAYMENT: the customer dials a USSD code first and the merchant sends `otp` with
// the payment. POST_PUSH: the network sends a code after the push, confirmed by confirm-otp.
const (
	OTPNone       OTPKind = "NONE"
	OTPPrePayment OTPKind = "PRE_PAYMENT"
	OTPPostPush   OTPKind = "POST_PUSH"
)

// Network is a mobile-money operator in one country; Code is its API identifier (MTN_BJ).
type Network struct {
	ID              uuid.UUID `json:"id"`
	Country         uuid.UUID `json:"country"`
	Code            string    `json:"code"`
	Name            string    `json:"name"`
	IsActive        bool      `json:"is_active"`
	OTPKind         OTPKind   `json:"-"`
	OTPInstructions string    `json:"-"`
	// Redirect networks are paid in an app the customer opens from a link (Wave).
	Redirect bool `json:"-"`
	// MinAmount and MaxAmount bound one collection or payout, in the country's currency.
	MinAmount decimal.Decimal `json:"-"`
	MaxAmount decimal.Decimal `json:"-"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// ExchangeRate converts one unit of FromCurrency into Rate units of ToCurrency.
type ExchangeRate struct {
	ID           uuid.UUID       `json:"id"`
	FromCurrency string          `json:"from_currency"`
	ToCurrency   string          `json:"to_currency"`
	Rate         decimal.Decimal `json:"rate"`
	AutoUpdate   bool            `json:"auto_update"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
}

// FeeRule prices one direction of one network: a percentage plus a fixed part, bounded by
// optional minimum and maximum. Amounts are in the network's currency.
type FeeRule struct {
	Percentage decimal.Decimal  `json:"percentage"`
	Fixed      decimal.Decimal  `json:"fixed"`
	MinFee     *decimal.Decimal `json:"min_fee"`
	MaxFee     *decimal.Decimal `json:"max_fee"`
}

// Pricing is the effective price of a network for a merchant: what the merchant is charged
// (Fee) and the operator's cost inside it (GatewayCost; the rest is the platform's).
type Pricing struct {
	Network     uuid.UUID
	Direction   Direction
	Fee         FeeRule
	GatewayCost FeeRule
	// Custom is true when the merchant has its own row rather than the default price.
	Custom bool
}
