package wave

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/sikahq/sika/gateway"
)

// Refunds are Wave's checkout session refund: POST /v1/checkout/sessions/{id}/refund, no body,
// answered 2xx once the whole amount the customer paid is back in their wallet (Wave refunds a
// session whole, once). A refund is therefore synchronous and idempotent by nature: a session
// cannot be refunded twice.
//
// Read back: the session of a refunded checkout shows payment_status "refunded". This is the one
// shape of this file that Wave's public documentation (as known when it was written) does not
// spell out; an ambiguous refund (a timeout, a 5xx) is resolved by it, and should Wave show the
// refund otherwise, only sessionRefunded changes.
const paymentRefunded = "refunded"

// Remembered kinds: a refund (its id is the session's), and a session's refund owner (its id is
// the reference of the refund that refunds the session).
const (
	kindRefund      = "refund"
	kindRefundOwner = "refund-owner"
)

var (
	_ gateway.Refunder       = (*Client)(nil)
	_ gateway.PartialRefunds = (*Client)(nil)
)

// RefundsPartially is false: Wave refunds whole checkout sessions only (Sika pays a part back
// with a payout instead).
func (c *Client) RefundsPartially() bool { return false }

// sessionRefunded reports whether a session's payment was refunded.
func sessionRefunded(s session) bool { return s.PaymentStatus == paymentRefunded }

// refundOwner is the memory key under which the reference that refunds a session is kept: one
// reference per session, so that a second refund of a refunded session is refused, not taken for
// the first.
func refundOwner(sessionID string) string { return "refund-of:" + sessionID }

// Refund refunds the checkout session of req.CollectionGatewayReference (else the session of the
// collection's reference), whole: req.Amount must be the session's amount. A session already
// refunded under req.Reference answers SUCCESS without a second call; under another reference,
// or a session that was not paid, is refused (Invalid). Wave's refusal of the refund is Declined.
func (c *Client) Refund(ctx context.Context, req gateway.RefundRequest) (gateway.OperationStatus, error) {
	if err := checkReference(req.Reference); err != nil {
		return gateway.OperationStatus{}, err
	}
	id := req.CollectionGatewayReference
	if id == "" {
		s, found, err := c.locateSession(ctx, req.CollectionReference)
		if err != nil {
			return gateway.OperationStatus{}, err
		}
		if !found {
			return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": no checkout session for the refunded collection")
		}
		id = s.ID
	}
	s, err := readOp(ctx, c, sessions, id)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	owner, err := c.refundOwnerOf(ctx, id)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	switch {
	case owner != "" && owner != req.Reference:
		return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": session "+id+" is refunded by another refund")
	case sessionRefunded(s):
		return c.refundStatusOf(req.Reference, s), nil
	case s.PaymentStatus != paymentSucceeded:
		return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": session "+id+" was not paid")
	case !sameAmount(s.Amount, req.Amount.String()):
		return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError,
			fmt.Sprintf("%s: Wave refunds a checkout whole (%s), not %s", c.cfg.Name, s.Amount, req.Amount))
	}
	// Remembered before sending: a lost answer is read back from the session.
	if err := c.remember(ctx, req.Reference, remembered{Kind: kindRefund, ID: id}); err != nil {
		return gateway.OperationStatus{}, gateway.Unavailable(err)
	}
	if err := c.remember(ctx, refundOwner(id), remembered{Kind: kindRefundOwner, ID: req.Reference}); err != nil {
		return gateway.OperationStatus{}, gateway.Unavailable(err)
	}
	call := request{api: checkoutAPI, method: http.MethodPost, path: "/v1/checkout/sessions/" + url.PathEscape(id) + "/refund",
		op: "POST /v1/checkout/sessions/{id}/refund", idempotencyKey: req.Reference}
	a, err := c.do(ctx, call)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if !a.ok() {
		return gateway.OperationStatus{}, refundRefusal(c.refusal(call, a))
	}
	return gateway.OperationStatus{Reference: req.Reference, GatewayReference: id, Status: gateway.StatusSuccess}, nil
}

// refundRefusal makes Wave's refusal of a refund (a 4xx about the session) a decline; other
// errors keep their kind.
func refundRefusal(err error) error {
	if gateway.KindOf(err) == gateway.KindInvalid {
		return gateway.Declined(gateway.FailureGatewayError, err.Error())
	}
	return err
}

// RefundStatus reads a refund back from its session: refunded is SUCCESS; still paid and not
// refunded is StatusNotFound (Wave holds no refund: the call never took); a reference this
// adapter never sent a refund under is StatusNotFound.
func (c *Client) RefundStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	r, found, err := c.recall(ctx, reference, kindRefund)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if !found || r.ID == "" {
		return gateway.OperationStatus{Reference: reference, Status: gateway.StatusNotFound}, nil
	}
	owner, err := c.refundOwnerOf(ctx, r.ID)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	s, err := readOp(ctx, c, sessions, r.ID)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if owner != reference || !sessionRefunded(s) {
		return gateway.OperationStatus{Reference: reference, GatewayReference: r.ID, Status: gateway.StatusNotFound}, nil
	}
	return c.refundStatusOf(reference, s), nil
}

func (c *Client) refundStatusOf(reference string, s session) gateway.OperationStatus {
	return gateway.OperationStatus{Reference: reference, GatewayReference: s.ID, Status: gateway.StatusSuccess}
}

// refundOwnerOf is the reference that refunds session id ("" when none did).
func (c *Client) refundOwnerOf(ctx context.Context, id string) (string, error) {
	r, _, err := c.recall(ctx, refundOwner(id), kindRefundOwner)
	return r.ID, err
}
