package mtnmomo

import (
	"context"

	"github.com/sikahq/sika/gateway"
)

var (
	_ gateway.Refunder      = (*Client)(nil)
	_ gateway.RefundCapable = (*Client)(nil)
)

// SupportsRefunds reports whether the account has the disbursement product, which refunds.
func (c *Client) SupportsRefunds() bool { return c.cfg.DisbursementSubscriptionKey != "" }

// Refund gives back (part of) a request-to-pay with the disbursement product's refund:
// POST /disbursement/v1_0/refund under X-Reference-Id req.Reference, naming the collection's
// X-Reference-Id as referenceIdToRefund. MTN answers 202 and decides later, as for a transfer; a
// reference it already knows (409) is answered with the refund's current state. Partial refunds
// are allowed: MTN takes the amount to give back. An account without the disbursement product
// cannot refund (Invalid).
func (c *Client) Refund(ctx context.Context, req gateway.RefundRequest) (gateway.OperationStatus, error) {
	if err := c.needDisbursement("refunds need the disbursement product"); err != nil {
		return gateway.OperationStatus{}, err
	}
	if !isUUID(req.CollectionReference) {
		return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, "the refunded collection's reference must be a UUID (MTN X-Reference-Id)")
	}
	body, env, err := c.initiation(req.Reference, req.Amount.String(), req.Amount.IsInteger(), req.Currency,
		req.Country, req.Phone, req.Description, "", true)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	body.Payee, body.ReferenceIDToRefund = nil, req.CollectionReference
	return c.initiate(ctx, c.disbursement, "/disbursement/v1_0/refund", req.Reference, env,
		callbackURL(req.CallbackURL, c.cfg.CallbackURL), body, c.RefundStatus)
}

// RefundStatus reads a refund (GET /disbursement/v1_0/refund/{referenceId}); an unknown
// reference is StatusNotFound.
func (c *Client) RefundStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.disbursementStatus(ctx, "refunds need the disbursement product", "/disbursement/v1_0/refund/", reference)
}
