package sika

import (
	"time"

	"github.com/google/uuid"
)

// MaxPayoutBatchItems is the most payouts one batch may hold.
const MaxPayoutBatchItems = 1000

// PayoutBatchStatus is where a payout batch stands.
type PayoutBatchStatus string

// Payout batch statuses. A batch waits for a second member's approval when the merchant's
// settings ask for one (AWAITING_APPROVAL, its money held), sends its items (PROCESSING) and
// ends COMPLETED once every item sent has ended, CANCELLED when it was cancelled before every
// item was sent, REJECTED or EXPIRED when its approval was refused or not given in time.
const (
	BatchAwaitingApproval PayoutBatchStatus = "AWAITING_APPROVAL"
	BatchProcessing       PayoutBatchStatus = "PROCESSING"
	BatchCompleted        PayoutBatchStatus = "COMPLETED"
	BatchCancelled        PayoutBatchStatus = "CANCELLED"
	BatchRejected         PayoutBatchStatus = "REJECTED"
	BatchExpired          PayoutBatchStatus = "EXPIRED"
)

// Final reports whether the batch has ended.
func (s PayoutBatchStatus) Final() bool {
	return s == BatchCompleted || s == BatchCancelled || s == BatchRejected || s == BatchExpired
}

// PayoutBatchItemStatus is where one payout of a batch stands: QUEUED until it is sent, then
// the status of its payout transaction (PENDING, SUCCESS, FAILED), or CANCELLED when the batch
// was cancelled, rejected or expired before it was sent.
type PayoutBatchItemStatus string

// Payout batch item statuses.
const (
	ItemQueued    PayoutBatchItemStatus = "QUEUED"
	ItemPending   PayoutBatchItemStatus = "PENDING"
	ItemSucceeded PayoutBatchItemStatus = "SUCCESS"
	ItemFailed    PayoutBatchItemStatus = "FAILED"
	ItemCancelled PayoutBatchItemStatus = "CANCELLED"
)

// PayoutBatchItemStatuses lists the item statuses in the order the progress shows them.
var PayoutBatchItemStatuses = []PayoutBatchItemStatus{ItemQueued, ItemPending, ItemSucceeded, ItemFailed, ItemCancelled}

// PayoutBatch is a set of payouts sent as one order: accepted (and its total held) whole or
// refused whole, then sent item by item, each item a payout transaction of its own.
type PayoutBatch struct {
	ID          uuid.UUID         `json:"id"`
	Reference   string            `json:"reference"`
	Merchant    uuid.UUID         `json:"merchant"`
	Environment Environment       `json:"environment"`
	Status      PayoutBatchStatus `json:"status"`
	Description string            `json:"description"`
	ItemCount   int               `json:"item_count"`
	// Totals are what the batch moves, per currency: what leaves the wallets (fees included)
	// and what the beneficiaries receive.
	Totals []PayoutBatchTotal `json:"totals"`
	// Progress counts the items and sums their debited amounts per item status.
	Progress          []PayoutBatchProgress `json:"progress"`
	CreatedByMember   *uuid.UUID            `json:"created_by_member"`
	CreatedByAPIKey   *uuid.UUID            `json:"created_by_api_key"`
	ApprovalExpiresAt *time.Time            `json:"approval_expires_at"`
	DecidedBy         *uuid.UUID            `json:"decided_by"`
	DecidedAt         *time.Time            `json:"decided_at"`
	DecisionNote      string                `json:"decision_note"`
	CancelRequestedAt *time.Time            `json:"cancel_requested_at"`
	CreatedAt         time.Time             `json:"created_at"`
	UpdatedAt         time.Time             `json:"updated_at"`
	CompletedAt       *time.Time            `json:"completed_at"`
}

// PayoutBatchTotal is what a batch moves in one currency.
type PayoutBatchTotal struct {
	Currency      string `json:"currency"`
	DebitedAmount Amount `json:"debited_amount"`
	NetAmount     Amount `json:"net_amount"`
}

// PayoutBatchProgress is the number of items of one status and currency and what they debit.
type PayoutBatchProgress struct {
	Status        PayoutBatchItemStatus `json:"status"`
	Currency      string                `json:"currency"`
	Count         int                   `json:"count"`
	DebitedAmount Amount                `json:"debited_amount"`
}

// PayoutBatchItem is one payout of a batch, priced when the batch was accepted.
type PayoutBatchItem struct {
	ID              uuid.UUID             `json:"id"`
	Batch           uuid.UUID             `json:"batch"`
	Index           int                   `json:"index"`
	Reference       string                `json:"reference"`
	Status          PayoutBatchItemStatus `json:"status"`
	RequestedAmount Amount                `json:"amount"`
	ClientFee       Amount                `json:"client_fee"`
	GatewayFee      Amount                `json:"-"`
	PlatformFee     Amount                `json:"-"`
	DebitedAmount   Amount                `json:"debited_amount"`
	NetAmount       Amount                `json:"net_amount"`
	FeeChargeMode   FeeChargeMode         `json:"fee_charge_mode"`
	Currency        string                `json:"currency"`
	Country         string                `json:"country"`
	NetworkID       uuid.UUID             `json:"-"`
	Network         string                `json:"network"`
	Phone           string                `json:"phone"`
	Description     string                `json:"description"`
	Transaction     *uuid.UUID            `json:"transaction"`
	FailureCode     string                `json:"failure_code"`
	FailureMessage  string                `json:"failure_message"`
	CreatedAt       time.Time             `json:"created_at"`
	UpdatedAt       time.Time             `json:"updated_at"`
}

// EventPayoutBatchCompleted is sent once a batch has ended (COMPLETED, CANCELLED, REJECTED or
// EXPIRED); its data is the batch with its final progress.
const EventPayoutBatchCompleted EventType = "payout_batch.completed"
