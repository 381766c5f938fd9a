package sika

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// TransactionType is what a transaction is for; its flow direction follows from it.
type TransactionType string

// Transaction types of the spec.
const (
	TypePayment  TransactionType = "PAIEMENT"  // softpay or hosted checkout
	TypeTopUp    TransactionType = "RECHARGE"  // balance top-up
	TypePayout   TransactionType = "RETRAIT"   // payout
	TypeTransfer TransactionType = "TRANSFERT" // between two wallets of a merchant
	// TypeRefund gives a customer back (part of) a successful collection: OUTBOUND, held and
	// settled like a payout, pointing at the collection it refunds (RefundedTransaction).
	TypeRefund TransactionType = "REMBOURSEMENT"
)

// Valid reports whether t is a known type.
func (t TransactionType) Valid() bool {
	return t == TypePayment || t == TypeTopUp || t == TypePayout || t == TypeTransfer || t == TypeRefund
}

// HoldsFunds reports whether a transaction of type t holds its debited amount on the wallet
// while it is in flight and settles or releases the hold when it ends: payouts (settlements
// included) and refunds.
func (t TransactionType) HoldsFunds() bool { return t == TypePayout || t == TypeRefund }

// FlowDirection is always derived from the type: PAIEMENT and RECHARGE are INBOUND.
func (t TransactionType) FlowDirection() Direction {
	if t == TypePayment || t == TypeTopUp {
		return DirectionInbound
	}
	return DirectionOutbound
}

// TransactionStatus is where a transaction stands.
type TransactionStatus string

// Transaction statuses. CANCELLED exists in the data model but no flow reaches it.
// AWAITING_APPROVAL is a payout over the merchant's approval threshold: its money is held and
// nothing is sent until a second member approves it (it then becomes PENDING); rejected or
// not approved in time it ends FAILED (approval_rejected, approval_expired).
const (
	StatusAwaitingApproval TransactionStatus = "AWAITING_APPROVAL"
	StatusPending          TransactionStatus = "PENDING"
	StatusSuccess          TransactionStatus = "SUCCESS"
	StatusFailed           TransactionStatus = "FAILED"
	StatusCancelled        TransactionStatus = "CANCELLED"
)

// The failure codes of a payout that waited for approval and was not sent.
const (
	FailureApprovalRejected = "approval_rejected"
	FailureApprovalExpired  = "approval_expired"
)

// Valid reports whether s is a known status.
func (s TransactionStatus) Valid() bool {
	return s == StatusAwaitingApproval || s == StatusPending || s == StatusSuccess || s == StatusFailed || s == StatusCancelled
}

// Final reports whether s ends the transaction (a FAILED payment may still be retried).
func (s TransactionStatus) Final() bool { return s != StatusPending && s != StatusAwaitingApproval }

// Trigger says who caused a status change.
type Trigger string

// Triggers of status changes.
const (
	TriggerSystem          Trigger = "SYSTEM"
	TriggerAdmin           Trigger = "ADMIN"
	TriggerClient          Trigger = "CLIENT"
	TriggerWebhookCallback Trigger = "WEBHOOK_CALLBACK"
)

// Valid reports whether t is a known trigger.
func (t Trigger) Valid() bool {
	return t == TriggerSystem || t == TriggerAdmin || t == TriggerClient || t == TriggerWebhookCallback
}

// Transaction is the record of one collection, payout or transfer (contract §8).
type Transaction struct {
	ID               uuid.UUID         `json:"id"`
	Reference        string            `json:"reference"`
	GatewayReference string            `json:"gateway_reference"`
	Merchant         uuid.UUID         `json:"merchant"`
	Environment      Environment       `json:"environment"`
	Type             TransactionType   `json:"transaction_type"`
	FlowDirection    Direction         `json:"flow_direction"`
	Status           TransactionStatus `json:"status"`
	// The amounts, all in Currency, each with one meaning for every type and fee mode (issue
	// 21; the OpenAPI's Transaction schema says the same, TestAmountFieldsMeanOneThing checks
	// it against what really moved):
	//
	//   - RequestedAmount (and Amount, the same): what was asked, after conversion.
	//   - ClientFee: the fee Sika charged, GatewayFee + PlatformFee (0 for settlements and
	//     wallet transfers).
	//   - DebitedAmount: what the paying side gives: the customer (INBOUND), the merchant's
	//     wallet (OUTBOUND: held at creation, debited on success).
	//   - NetAmount: what the receiving side gets: the merchant's wallet (INBOUND, credited on
	//     success), the beneficiary (OUTBOUND: what the operator is sent; the customer for a
	//     refund; for a wallet transfer, what goes to the other wallet before conversion).
	//
	// So DebitedAmount − NetAmount = ClientFee always; ADD_ON: NetAmount = RequestedAmount,
	// DEDUCTED: DebitedAmount = RequestedAmount (sika.ComputeFees).
	Amount          Amount `json:"amount"`
	RequestedAmount Amount `json:"requested_amount"`
	ClientFee       Amount `json:"client_fee"`
	DebitedAmount   Amount `json:"debited_amount"`
	GatewayFee      Amount `json:"gateway_fee"`
	PlatformFee     Amount `json:"platform_fee"`
	NetAmount       Amount `json:"net_amount"`
	Currency        string `json:"currency"`
	// OriginalAmount and OriginalCurrency are what the merchant asked when Currency differs from
	// the country's (collections are converted at ExchangeRate); null otherwise.
	OriginalAmount   *Amount          `json:"original_amount"`
	OriginalCurrency *string          `json:"original_currency"`
	ExchangeRate     *decimal.Decimal `json:"exchange_rate"`
	Country          string           `json:"country"`
	Network          string           `json:"network"`
	CustomerName     string           `json:"customer_name"`
	CustomerEmail    string           `json:"customer_email"`
	CustomerPhone    string           `json:"customer_phone"`
	Recipient        string           `json:"recipient"`
	Description      string           `json:"description"`
	Metadata         json.RawMessage  `json:"metadata"`
	FeeChargeMode    FeeChargeMode    `json:"fee_charge_mode"`
	CheckoutSession  *uuid.UUID       `json:"checkout_session"`
	PaymentLink      *uuid.UUID       `json:"payment_link"`
	FailureCode      string           `json:"failure_code"`
	FailureMessage   string           `json:"failure_message"`
	// RefundedTransaction, on a refund, is the collection it gives back; null otherwise.
	RefundedTransaction *uuid.UUID `json:"refunded_transaction"`
	// AmountRefunded, on a collection, is what its succeeded refunds gave back (in Currency);
	// RefundStatus says whether that is none, part or all of what the customer paid (null on
	// other transactions).
	AmountRefunded Amount        `json:"amount_refunded"`
	RefundStatus   *RefundStatus `json:"refund_status"`
	// PendingReason says why a PENDING transaction waits for the operator rather than the
	// customer (a payout whose send was unclear); "" otherwise.
	PendingReason string     `json:"pending_reason"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	CompletedAt   *time.Time `json:"completed_at"`

	// NetworkID is the network's id, for routing.
	NetworkID uuid.UUID `json:"-"`
	// Run counts the runs of the payment (1, then +1 per retry); a workflow run acts only on
	// the transaction's current run.
	Run int `json:"-"`
}

// RefundStatus says how much of a collection was given back.
type RefundStatus string

// Refund statuses of a collection.
const (
	RefundNone    RefundStatus = "NOT_REFUNDED"
	RefundPartial RefundStatus = "PARTIALLY_REFUNDED"
	RefundFull    RefundStatus = "REFUNDED"
)

// String is the status's name (templates print it).
func (s RefundStatus) String() string { return string(s) }

// Refundable reports whether a refund may be asked of t: a successful collection (PAIEMENT).
func (t Transaction) Refundable() bool {
	return t.Type == TypePayment && t.Status == StatusSuccess
}

// SetRefundStatus fills RefundStatus from AmountRefunded for a collection (what the customer
// paid is DebitedAmount); other transactions have none.
func (t *Transaction) SetRefundStatus() {
	if t.Type != TypePayment {
		t.RefundStatus = nil
		return
	}
	st := RefundNone
	switch {
	case !t.AmountRefunded.IsPositive():
	case t.AmountRefunded.LessThan(t.DebitedAmount.Decimal):
		st = RefundPartial
	default:
		st = RefundFull
	}
	t.RefundStatus = &st
}

// HasInvoice reports whether the transaction has a PDF invoice: only a successful inbound one
// (GET /transactions/{id}/invoice/ answers invoice_unavailable otherwise).
func (t Transaction) HasInvoice() bool {
	return t.FlowDirection == DirectionInbound && t.Status == StatusSuccess
}

// Retryable reports whether the merchant may retry the payment (POST /payments/{id}/retry/):
// an inbound payment that FAILED.
func (t Transaction) Retryable() bool {
	return t.FlowDirection == DirectionInbound && t.Status == StatusFailed
}

// AttemptStatus is the state of one gateway attempt.
type AttemptStatus string

// Attempt statuses.
const (
	AttemptPending AttemptStatus = "PENDING"
	AttemptSuccess AttemptStatus = "SUCCESS"
	AttemptFailed  AttemptStatus = "FAILED"
)

// TransactionAttempt is one gateway routing attempt of a transaction.
type TransactionAttempt struct {
	ID               uuid.UUID     `json:"id"`
	Transaction      uuid.UUID     `json:"transaction"`
	Gateway          string        `json:"gateway"`
	Priority         int           `json:"priority"`
	Run              int           `json:"run"`
	Sequence         int           `json:"sequence"`
	Status           AttemptStatus `json:"status"`
	GatewayReference string        `json:"gateway_reference"`
	FailureCode      string        `json:"failure_code"`
	FailureMessage   string        `json:"failure_message"`
	CreatedAt        time.Time     `json:"created_at"`
	UpdatedAt        time.Time     `json:"updated_at"`
	CompletedAt      *time.Time    `json:"completed_at"`
	// LastAnswer is what the operator last said about an attempt it has not decided
	// (NOT_FOUND, UNKNOWN, AMBIGUOUS, UNAVAILABLE, a cancel's answer), for support.
	LastAnswer   string     `json:"last_answer"`
	LastAnswerAt *time.Time `json:"last_answer_at"`
}

// TransactionStatusLog is one entry of a transaction's append-only status history.
type TransactionStatusLog struct {
	ID          uuid.UUID          `json:"id"`
	Transaction uuid.UUID          `json:"transaction"`
	FromStatus  *TransactionStatus `json:"from_status"`
	ToStatus    TransactionStatus  `json:"to_status"`
	Reason      string             `json:"reason"`
	TriggeredBy Trigger            `json:"triggered_by"`
	CreatedAt   time.Time          `json:"created_at"`
}

// CheckAmounts returns an error when t's amounts break their meanings (see Transaction): a
// negative amount, ClientFee ≠ GatewayFee + PlatformFee, DebitedAmount − NetAmount ≠
// ClientFee, or by fee mode ADD_ON with NetAmount ≠ RequestedAmount, DEDUCTED with
// DebitedAmount ≠ RequestedAmount. The store refuses to record such a transaction.
func (t Transaction) CheckAmounts() error {
	for name, a := range map[string]Amount{"requested_amount": t.RequestedAmount, "client_fee": t.ClientFee,
		"debited_amount": t.DebitedAmount, "gateway_fee": t.GatewayFee, "platform_fee": t.PlatformFee, "net_amount": t.NetAmount} {
		if a.IsNegative() {
			return fmt.Errorf("amounts of %s: %s is negative (%s)", t.Reference, name, a)
		}
	}
	switch {
	case !t.ClientFee.Equal(t.GatewayFee.Add(t.PlatformFee.Decimal)):
		return fmt.Errorf("amounts of %s: client_fee %s is not gateway_fee %s + platform_fee %s", t.Reference, t.ClientFee, t.GatewayFee, t.PlatformFee)
	case !t.DebitedAmount.Sub(t.NetAmount.Decimal).Equal(t.ClientFee.Decimal):
		return fmt.Errorf("amounts of %s: debited_amount %s − net_amount %s is not client_fee %s", t.Reference, t.DebitedAmount, t.NetAmount, t.ClientFee)
	case t.FeeChargeMode == FeeAddOn && !t.NetAmount.Equal(t.RequestedAmount.Decimal):
		return fmt.Errorf("amounts of %s: ADD_ON net_amount %s is not requested_amount %s", t.Reference, t.NetAmount, t.RequestedAmount)
	case t.FeeChargeMode == FeeDeducted && !t.DebitedAmount.Equal(t.RequestedAmount.Decimal):
		return fmt.Errorf("amounts of %s: DEDUCTED debited_amount %s is not requested_amount %s", t.Reference, t.DebitedAmount, t.RequestedAmount)
	}
	return nil
}

// TransactionDetail is a transaction with its attempts and status history.
type TransactionDetail struct {
	Transaction
	Attempts   []TransactionAttempt   `json:"attempts"`
	StatusLogs []TransactionStatusLog `json:"status_logs"`
}

// Wallet is a merchant's balance in one country and environment (MerchantBalance in the API).
// PendingAmount is money held for outbound operations in flight.
type Wallet struct {
	ID              uuid.UUID   `json:"id"`
	Merchant        uuid.UUID   `json:"merchant"`
	Environment     Environment `json:"environment"`
	Country         string      `json:"country"`
	Currency        string      `json:"currency"`
	AvailableAmount Amount      `json:"available_amount"`
	PendingAmount   Amount      `json:"pending_amount"`
	IsFrozen        bool        `json:"is_frozen"`
	CreatedAt       time.Time   `json:"created_at"`
	UpdatedAt       time.Time   `json:"updated_at"`
}

// LedgerType is what a wallet movement is for.
type LedgerType string

// Ledger entry types.
const (
	LedgerCollection     LedgerType = "COLLECTION"      // a successful collection, credited
	LedgerPayoutHold     LedgerType = "PAYOUT_HOLD"     // available moved to pending for an outbound operation
	LedgerPayout         LedgerType = "PAYOUT"          // the hold settled: money left
	LedgerPayoutReversal LedgerType = "PAYOUT_REVERSAL" // the hold released back to available
	LedgerTransferOut    LedgerType = "TRANSFER_OUT"
	LedgerTransferIn     LedgerType = "TRANSFER_IN"
	LedgerAdjustment     LedgerType = "ADJUSTMENT"
)

// LedgerDirection says whether an entry adds to or takes from the wallet's available amount (or,
// for a settled hold, from its pending amount).
type LedgerDirection string

// Ledger directions.
const (
	Credit LedgerDirection = "CREDIT"
	Debit  LedgerDirection = "DEBIT"
)

// LedgerEntry is one wallet movement (MerchantLedgerEntry in the API). BalanceBefore and
// BalanceAfter are the available amount around the entry.
type LedgerEntry struct {
	ID             uuid.UUID       `json:"id"`
	Merchant       uuid.UUID       `json:"merchant"`
	Environment    Environment     `json:"environment"`
	Wallet         uuid.UUID       `json:"wallet"`
	Country        string          `json:"country"`
	Currency       string          `json:"currency"`
	Type           LedgerType      `json:"type"`
	Amount         Amount          `json:"amount"`
	Direction      LedgerDirection `json:"direction"`
	BalanceBefore  Amount          `json:"balance_before"`
	BalanceAfter   Amount          `json:"balance_after"`
	PendingBefore  Amount          `json:"pending_before"`
	PendingAfter   Amount          `json:"pending_after"`
	Transaction    *uuid.UUID      `json:"transaction"`
	Settlement     *uuid.UUID      `json:"settlement"`
	WalletTransfer *uuid.UUID      `json:"wallet_transfer"`
	Description    string          `json:"description"`
	CreatedAt      time.Time       `json:"created_at"`
}
