// Package gateway is the port to mobile-money operators: the Gateway interface every operator
// adapter implements (sandbox/, later mtnmomo/, wave/, orange/), the typed error taxonomy on
// which routing decisions are made, and the routing table that orders gateways per network.
package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/shopspring/decimal"
)

// Status is an operation's state as the operator reports it.
type Status string

// Operation states.
const (
	// StatusPending: accepted by the operator, waiting for the customer or the network.
	StatusPending Status = "PENDING"
	// StatusSuccess: money moved.
	StatusSuccess Status = "SUCCESS"
	// StatusFailed: refused or failed; FailureCode says why.
	StatusFailed Status = "FAILED"
	// StatusNotFound: the operator has no operation with this reference (the request never
	// reached it). Only status reads answer it.
	StatusNotFound Status = "NOT_FOUND"
)

// Final reports whether s will not change any more.
func (s Status) Final() bool { return s == StatusSuccess || s == StatusFailed }

// Failure codes shared by every adapter (operators' own reasons are mapped onto these).
const (
	FailurePayerDeclined      = "payer_declined"
	FailureInsufficientFunds  = "insufficient_funds"
	FailureInvalidNumber      = "invalid_number"
	FailureExpired            = "expired"
	FailureInvalidOTP         = "invalid_otp"
	FailureRecipientNotFound  = "recipient_not_found"
	FailureRecipientLimit     = "recipient_limit_reached"
	FailureGatewayUnavailable = "gateway_unavailable"
	FailureGatewayError       = "gateway_error"
)

// NextActionType tells the merchant what the customer must do after initiation.
type NextActionType string

// Next actions of a collection.
const (
	NextUSSDPush        NextActionType = "ussd_push"        // approve the push on the phone
	NextOTPConfirmation NextActionType = "otp_confirmation" // send the code received to confirm-otp
	NextRedirect        NextActionType = "redirect"         // open URL (an app or a payment page)
)

// NextAction is the customer's next step.
type NextAction struct {
	Type NextActionType `json:"type"`
	URL  string         `json:"url,omitempty"`
}

// CollectRequest asks the operator to debit a customer.
type CollectRequest struct {
	// Reference is our idempotency reference (derived from the attempt id): the same reference
	// sent twice must never debit the customer twice.
	Reference string
	Amount    decimal.Decimal // what the customer is debited, in Currency
	Currency  string
	Country   string // ISO 3166 alpha-2
	Network   string // network code, e.g. MTN_BJ
	Phone     string // E.164, e.g. +22997000000
	// OTP is the pre-payment code the customer obtained by USSD (networks that need one).
	OTP          string
	CustomerName string
	Description  string
	// CallbackURL is where the operator reports the outcome.
	CallbackURL string
}

// CollectResult is the operator's answer to an accepted collection.
type CollectResult struct {
	GatewayReference string
	Status           Status // usually PENDING; FAILED or SUCCESS when the operator decides at once
	FailureCode      string
	FailureMessage   string
	NextAction       NextAction
}

// DisburseRequest asks the operator to credit a beneficiary.
type DisburseRequest struct {
	Reference     string
	Amount        decimal.Decimal // what the beneficiary receives, in Currency
	Currency      string
	Country       string
	Network       string
	Phone         string // E.164
	RecipientName string
	Description   string
	CallbackURL   string
}

// OperationStatus is an operation's state read from the operator.
type OperationStatus struct {
	Reference        string
	GatewayReference string
	Status           Status
	FailureCode      string
	FailureMessage   string
}

// CallbackKind says which kind of operation a callback reports.
type CallbackKind string

// Callback kinds.
const (
	CallbackCollection   CallbackKind = "collection"
	CallbackDisbursement CallbackKind = "disbursement"
)

// Callback is an operator's report of an outcome, already authenticated by ParseCallback.
type Callback struct {
	Kind CallbackKind
	OperationStatus
	// Trusted is false for operators whose callbacks are unsigned (MTN MoMo): the caller must
	// confirm the outcome with a status read before acting on it.
	Trusted bool
}

// PayoutCapable is implemented by gateways that may not disburse: an operator API that only
// collects (Orange WebPay), or an account configured without payout credentials.
type PayoutCapable interface {
	SupportsPayouts() bool
}

// SupportsPayouts reports whether g can disburse (true unless g says otherwise).
func SupportsPayouts(g Gateway) bool { return says(g, PayoutCapable.SupportsPayouts, true) }

// PageConfirmed is implemented by gateways whose customers confirm a payment on the operator's
// own page (a redirect, e.g. Orange WebPay): a network's pre-payment OTP is not asked for.
type PageConfirmed interface {
	ConfirmsOnOwnPage() bool
}

// ConfirmsOnOwnPage reports whether g's customers confirm on the operator's page.
func ConfirmsOnOwnPage(g Gateway) bool { return says(g, PageConfirmed.ConfirmsOnOwnPage, false) }

// ErrCallbackIgnored is wrapped by ParseCallback errors about callbacks that are authentic but
// report nothing we track (an event type we do not use, an operator's test event): the
// receiver acknowledges them, so that the operator does not retry or flag our endpoint.
var ErrCallbackIgnored = errors.New("authentic callback about nothing we track")

// Gateway is one operator API (or one account at an operator). Every method is safe to call
// again with the same reference: operators dedupe on it.
//
// Errors are *Error values of the taxonomy below (Declined, Invalid, Unavailable, Ambiguous);
// routing decides on the kind: a decline or an invalid request is final, "unavailable before
// acceptance" falls back to the next gateway, and an ambiguous outcome is resolved by status
// reads at the same gateway, never by a fallback.
type Gateway interface {
	// Name identifies the gateway in the routing table, attempts and callbacks.
	Name() string
	Collect(ctx context.Context, req CollectRequest) (CollectResult, error)
	// ConfirmOTP sends the code a customer received after the push (post-push OTP networks).
	ConfirmOTP(ctx context.Context, reference, otp string) (OperationStatus, error)
	CollectionStatus(ctx context.Context, reference string) (OperationStatus, error)
	Disburse(ctx context.Context, req DisburseRequest) (OperationStatus, error)
	DisbursementStatus(ctx context.Context, reference string) (OperationStatus, error)
	// ParseCallback authenticates and decodes a callback request whose body was already read.
	// ctx bounds any lookup the adapter needs (see Memory).
	ParseCallback(ctx context.Context, header http.Header, body []byte) (Callback, error)
}
