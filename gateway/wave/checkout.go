package wave

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/gateway"
)

// sessionBody validates a collection and builds its checkout session.
func (c *Client) sessionBody(req gateway.CollectRequest) (sessionRequest, error) {
	if c.cfg.APIKey == "" || c.cfg.SuccessURL == "" || c.cfg.ErrorURL == "" {
		return sessionRequest{}, gateway.Invalid(gateway.FailureGatewayError,
			c.cfg.Name+": checkout not configured (APIKey, SuccessURL and ErrorURL are required)")
	}
	if err := checkReference(req.Reference); err != nil {
		return sessionRequest{}, err
	}
	amount, err := formatAmount(req.Amount, req.Currency)
	if err != nil {
		return sessionRequest{}, err
	}
	body := sessionRequest{
		Amount:          amount,
		Currency:        strings.ToUpper(req.Currency),
		SuccessURL:      withReference(c.cfg.SuccessURL, req.Reference),
		ErrorURL:        withReference(c.cfg.ErrorURL, req.Reference),
		ClientReference: req.Reference,
	}
	if c.cfg.RestrictPayerMobile {
		if !isE164(req.Phone) {
			return sessionRequest{}, gateway.Invalid(gateway.FailureInvalidNumber, "phone number must be E.164")
		}
		body.RestrictPayerMobile = req.Phone
	}
	return body, nil
}

// collect returns the reference's checkout session, creating it when Wave has none.
func (c *Client) collect(ctx context.Context, ref string, body sessionRequest) (session, error) {
	s, err := initiate(ctx, c, sessions, ref, func(ctx context.Context) (session, error) {
		return createOp(ctx, c, sessions, ref, body)
	})
	if err != nil {
		return session{}, err
	}
	if s.Amount != "" && !sameAmount(s.Amount, body.Amount) || s.Currency != "" && !strings.EqualFold(s.Currency, body.Currency) {
		return session{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": reference "+ref+
			" already has a checkout session for "+s.Amount+" "+s.Currency)
	}
	return s, nil
}

// CancelCollection expires the reference's checkout session (POST
// /v1/checkout/sessions/{id}/expire), so that nobody can pay it any more, and answers the
// session's state after that, read back from Wave whatever the expiry answered (Wave documents
// the endpoint but not its refusals): expired is FAILED cancelled; paid is SUCCESS (the customer
// was first); still open is PENDING (the expiry is unconfirmed). A session Wave had closed
// already is answered as a status read answers it, without an expiry; a reference Wave has no
// session for is StatusNotFound. An expiry that was not sent, or was refused for our key, or
// that Wave could not take (429, 503), is an error (nothing was expired); a session that cannot
// be read back after an expiry was sent is Ambiguous.
func (c *Client) CancelCollection(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	s, found, err := c.locateSession(ctx, reference)
	switch {
	case err != nil:
		return gateway.OperationStatus{}, err
	case !found:
		return gateway.OperationStatus{Reference: reference, Status: gateway.StatusNotFound}, nil
	case s.CheckoutStatus != checkoutOpen || s.PaymentStatus == paymentSucceeded:
		return statusOf(c, sessions, reference, s)
	}
	expiry := c.expireSession(ctx, s.ID)
	if k := gateway.KindOf(expiry); expiry != nil && (k == gateway.KindUnavailable || k == gateway.KindAuth) {
		return gateway.OperationStatus{}, expiry
	}
	after, err := readOp(ctx, c, sessions, s.ID)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: session %s expiry sent (%v), session not read back: %w",
			c.cfg.Name, s.ID, expiry, err))
	}
	st, err := statusOf(c, sessions, reference, after)
	if err == nil && after.CheckoutStatus == checkoutExpired && st.Status == gateway.StatusFailed {
		st.FailureCode, st.FailureMessage = gateway.FailureCancelled, "checkout session expired before the customer paid it"
	}
	return st, err
}

// expireSession is POST /v1/checkout/sessions/{id}/expire; nil when Wave answered 2xx.
func (c *Client) expireSession(ctx context.Context, id string) error {
	req := request{api: checkoutAPI, method: http.MethodPost,
		path: "/v1/checkout/sessions/" + url.PathEscape(id) + "/expire", op: "POST /v1/checkout/sessions/{id}/expire"}
	a, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	if !a.ok() {
		return c.refusal(req, a)
	}
	return nil
}

// sessions are Wave's checkout sessions.
var sessions = finder[session]{kind: kindCheckout, noun: "session", api: checkoutAPI,
	path: "/v1/checkout/sessions", search: "/v1/checkout/sessions/search",
	id: func(s session) string { return s.ID }, reference: func(s session) string { return s.ClientReference },
	prefer: preferSession, status: session.operationStatus}

// locateSession finds the reference's checkout session (found is false when Wave has none).
func (c *Client) locateSession(ctx context.Context, ref string) (session, bool, error) {
	return locate(ctx, c, sessions, ref)
}

// preferSession orders the sessions of one reference (there should be one): the paid one,
// else the one the customer can still pay, else the latest.
func preferSession(a, b session) bool {
	rank := func(s session) int {
		switch {
		case s.PaymentStatus == paymentSucceeded:
			return 2
		case s.CheckoutStatus == checkoutOpen:
			return 1
		}
		return 0
	}
	if rank(a) != rank(b) {
		return rank(a) > rank(b)
	}
	return a.WhenCreated > b.WhenCreated // RFC 3339 in UTC: ordered as strings
}

// withReference puts the reference into a return URL's placeholder.
func withReference(u, ref string) string {
	return strings.ReplaceAll(u, ReferencePlaceholder, url.PathEscape(ref))
}

// sameAmount compares two decimal strings by value ("1000" and "1000.00" are the same).
func sameAmount(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}
