package wave

import (
	"context"
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
	s, err := initiate(ctx, c, c.sessions(), ref, func(ctx context.Context) (session, error) {
		return c.createSession(ctx, ref, body)
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

// sessions reads checkout sessions.
func (c *Client) sessions() finder[session] {
	return finder[session]{kind: kindCheckout, byID: c.session, byReference: c.searchSession,
		id: func(s session) string { return s.ID }}
}

// locateSession finds the reference's checkout session (found is false when Wave has none).
func (c *Client) locateSession(ctx context.Context, ref string) (session, bool, error) {
	return locate(ctx, c, c.sessions(), ref)
}

// createSession is POST /v1/checkout/sessions.
func (c *Client) createSession(ctx context.Context, ref string, body sessionRequest) (session, error) {
	return createOp(ctx, c, c.sessions(), request{api: checkoutAPI, method: http.MethodPost,
		path: "/v1/checkout/sessions", op: "POST /v1/checkout/sessions", idempotencyKey: ref, body: body}, ref)
}

// session is GET /v1/checkout/sessions/{id}.
func (c *Client) session(ctx context.Context, id string) (session, error) {
	return readOp[session](ctx, c, request{api: checkoutAPI, method: http.MethodGet,
		path: "/v1/checkout/sessions/" + url.PathEscape(id), op: "GET /v1/checkout/sessions/{id}"}, "session "+id)
}

// searchSession is GET /v1/checkout/sessions/search?client_reference=ref.
func (c *Client) searchSession(ctx context.Context, ref string) (session, bool, error) {
	result, err := searchOp[session](ctx, c, request{api: checkoutAPI, method: http.MethodGet,
		path: "/v1/checkout/sessions/search?" + url.Values{"client_reference": {ref}}.Encode(),
		op:   "GET /v1/checkout/sessions/search"})
	var best session
	found := false
	for _, s := range result {
		if s.ClientReference == ref && (!found || preferSession(s, best)) {
			best, found = s, true
		}
	}
	return best, found, err
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
