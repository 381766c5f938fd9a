package sika

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// PayoutMethodType is how a merchant receives its settlements.
type PayoutMethodType string

// Payout method types.
const (
	PayoutMobileMoney PayoutMethodType = "MOBILE_MONEY"
	PayoutBank        PayoutMethodType = "BANK"
)

// Valid reports whether t is a known type.
func (t PayoutMethodType) Valid() bool { return t == PayoutMobileMoney || t == PayoutBank }

// PayoutMethod is an account of the merchant's own where settlements go; an admin verifies it
// before any money is sent there.
type PayoutMethod struct {
	ID                uuid.UUID        `json:"id"`
	Merchant          uuid.UUID        `json:"merchant"`
	Type              PayoutMethodType `json:"type"`
	Label             string           `json:"label"`
	IsActive          bool             `json:"is_active"`
	IsVerified        bool             `json:"is_verified"`
	VerifiedByAdmin   *uuid.UUID       `json:"verified_by_admin"`
	VerifiedAt        *time.Time       `json:"verified_at"`
	Network           *uuid.UUID       `json:"network"`
	PhoneNumber       *string          `json:"phone_number"`
	BankName          *string          `json:"bank_name"`
	AccountHolderName *string          `json:"account_holder_name"`
	AccountNumber     *string          `json:"account_number"`
	IBAN              *string          `json:"iban"`
	SwiftBIC          *string          `json:"swift_bic"`
	BankCode          *string          `json:"bank_code"`
	BranchCode        *string          `json:"branch_code"`
	CreatedAt         time.Time        `json:"created_at"`
	UpdatedAt         time.Time        `json:"updated_at"`
	Environment       Environment      `json:"-"`
}

// Settlement moves available balance to a verified payout method through a RETRAIT
// transaction; its status is the transaction's.
type Settlement struct {
	ID           uuid.UUID         `json:"id"`
	Merchant     uuid.UUID         `json:"merchant"`
	PayoutMethod uuid.UUID         `json:"payout_method"`
	Transaction  uuid.UUID         `json:"transaction"`
	Amount       Amount            `json:"amount"`
	Currency     string            `json:"currency"`
	Country      string            `json:"country"`
	Status       TransactionStatus `json:"status"`
	CreatedAt    time.Time         `json:"created_at"`
}

// WalletTransfer moves money between two wallets of one merchant at the current rate.
type WalletTransfer struct {
	ID             uuid.UUID         `json:"id"`
	Merchant       uuid.UUID         `json:"merchant"`
	Transaction    uuid.UUID         `json:"transaction"`
	FromCountry    string            `json:"from_country"`
	ToCountry      string            `json:"to_country"`
	FromCurrency   string            `json:"from_currency"`
	ToCurrency     string            `json:"to_currency"`
	Amount         Amount            `json:"amount"`
	CreditedAmount Amount            `json:"credited_amount"`
	ExchangeRate   decimal.Decimal   `json:"exchange_rate"`
	Status         TransactionStatus `json:"status"`
	CreatedAt      time.Time         `json:"created_at"`
}
