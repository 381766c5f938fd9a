package gateway

import (
	"context"

	"github.com/shopspring/decimal"
)

// OpRefund and OpRefundStatus are the operation names of refund calls (see observed).
const (
	OpRefund       = "refund"
	OpRefundStatus = "refund_status"
)

// CallbackRefund is the kind of a callback about a refund.
const CallbackRefund CallbackKind = "refund"

// RefundRequest asks the operator to give back (part of) a collection it made.
type RefundRequest struct {
	// Reference is our idempotency reference for the refund (its attempt id): the same
	// reference sent twice must never refund twice.
	Reference string
	// CollectionReference is the reference the collection was sent with (its attempt id), and
	// CollectionGatewayReference the operator's own id of it (a Wave checkout session id).
	CollectionReference        string
	CollectionGatewayReference string
	Amount                     decimal.Decimal // what the customer gets back, in Currency
	Currency                   string
	Country                    string
	Network                    string
	Phone                      string // the payer's number, E.164
	Description                string
	CallbackURL                string
}

// Refunder is implemented by adapters whose operator refunds a collection it made (MTN MoMo's
// disbursement refund naming the request-to-pay, Wave's checkout session refund). A refund is
// an outbound operation like a payout: Refund answers it as Disburse does, RefundStatus reads it
// (an unknown reference is StatusNotFound).
type Refunder interface {
	Refund(ctx context.Context, req RefundRequest) (OperationStatus, error)
	RefundStatus(ctx context.Context, reference string) (OperationStatus, error)
}

// RefundCapable is implemented by Refunders that may not refund: an account configured without
// the product refunds need (MTN MoMo's disbursement).
type RefundCapable interface {
	SupportsRefunds() bool
}

// SupportsRefunds reports whether g refunds collections: a Refunder that does not say otherwise.
func SupportsRefunds(g Gateway) bool {
	if _, ok := RefunderOf(g); !ok {
		return false
	}
	return says(g, RefundCapable.SupportsRefunds, true)
}

// PartialRefunds is implemented by Refunders whose operator refunds only the whole collection
// (Wave): RefundsPartially answers false, and a refund of less goes as a payout instead.
type PartialRefunds interface {
	RefundsPartially() bool
}

// RefundsPartially reports whether g's operator refunds part of a collection (true unless it
// says otherwise).
func RefundsPartially(g Gateway) bool { return says(g, PartialRefunds.RefundsPartially, true) }

// observedRefunder is the refund of an observed gateway whose adapter refunds.
type observedRefunder struct {
	observed
	r Refunder
}

func (o observedRefunder) Refund(ctx context.Context, req RefundRequest) (OperationStatus, error) {
	return observeCall(ctx, o.observed, OpRefund, o.r.Refund, req)
}

func (o observedRefunder) RefundStatus(ctx context.Context, reference string) (OperationStatus, error) {
	return observeCall(ctx, o.observed, OpRefundStatus, o.r.RefundStatus, reference)
}

// RefunderOf returns g's refund when its operator refunds collections (see Refunder).
func RefunderOf(g Gateway) (Refunder, bool) {
	return optional(g, func(o observed, r Refunder) Refunder { return observedRefunder{o, r} })
}
