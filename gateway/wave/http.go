package wave

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sikahq/sika/gateway"
)

// maxAnswer bounds what is read of one of Wave's answers.
const maxAnswer = 1 << 20

// api says which Wave API a call belongs to: each has its own key and its own refusal codes.
type api int

const (
	checkoutAPI api = iota
	payoutAPI
)

// request is one call to Wave.
type request struct {
	api    api
	method string
	path   string // with the query, if any
	// op names the call in errors: the method and the path's template, never a secret.
	op string
	// idempotencyKey is sent as idempotency-key (POSTs: our reference).
	idempotencyKey string
	body           any
}

// answer is Wave's answer to a call that got one.
type answer struct {
	status int
	raw    []byte
}

func (a answer) ok() bool { return a.status >= 200 && a.status < 300 }

// do sends req and returns Wave's answer, whatever its status. Failures to get one are gateway
// errors: Unavailable when the request certainly did not leave, Ambiguous when it may have.
func (c *Client) do(ctx context.Context, req request) (answer, error) {
	op := c.cfg.Name + " " + req.op
	var payload io.Reader
	if req.body != nil {
		raw, err := json.Marshal(req.body)
		if err != nil {
			return answer{}, gateway.Invalid(gateway.FailureGatewayError, op+": encode request: "+err.Error())
		}
		payload = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, req.method, c.base+req.path, payload)
	if err != nil {
		return answer{}, gateway.Unavailable(fmt.Errorf("%s: %w", op, err))
	}
	hr.Header.Set("Authorization", "Bearer "+c.key(req.api))
	hr.Header.Set("Accept", "application/json")
	if payload != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.idempotencyKey != "" {
		hr.Header.Set("Idempotency-Key", req.idempotencyKey)
	}
	status, raw, err := gateway.Exchange(c.cfg.HTTPClient, op, hr, maxAnswer)
	if err != nil {
		return answer{}, err
	}
	return answer{status: status, raw: raw}, nil
}

func (c *Client) key(a api) string {
	if a == payoutAPI {
		return c.cfg.PayoutAPIKey
	}
	return c.cfg.APIKey
}

// refusal maps an answer that is not a success (and not a conflict, which callers resolve) to
// the taxonomy. A 503 or 429 means Wave did not take the request; another 5xx after sending
// may hide an accepted one.
func (c *Client) refusal(req request, a answer) error {
	e := decodeAPIError(a.raw)
	detail := fmt.Errorf("%s %s: %d: %s", c.cfg.Name, req.op, a.status, c.snippet(a.raw))
	switch {
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return gateway.AuthFailed(detail)
	case a.status >= 500 && req.method == http.MethodGet: // a read creates nothing: nothing is ambiguous about it
		return gateway.Unavailable(detail)
	}
	if err := gateway.StatusRefusal(a.status, detail); err != nil {
		return err
	}
	if req.api == payoutAPI {
		return payoutRefusal(e, detail)
	}
	code := gateway.FailureGatewayError
	if e.about("restrict_payer_mobile") {
		code = gateway.FailureInvalidNumber
	}
	return gateway.Invalid(code, detail.Error())
}

// payoutRefusal maps a refused POST /v1/payout (400, 422). Refusals about the beneficiary are
// declines; an empty business wallet is our side's, and nothing was created: another gateway
// may pay.
func payoutRefusal(e apiError, detail error) error {
	switch e.Code {
	case "insufficient-funds":
		return gateway.Unavailable(fmt.Errorf("business wallet has insufficient funds: %w", detail))
	case "recipient-limit-exceeded", "recipient-account-blocked", "recipient-account-inactive", "recipient-minor":
		return gateway.Declined(payoutFailureCode(e.Code), detail.Error())
	case "country-mismatch":
		return gateway.Invalid(gateway.FailureInvalidNumber, detail.Error())
	}
	if e.about("mobile") {
		return gateway.Invalid(gateway.FailureInvalidNumber, detail.Error())
	}
	return gateway.Invalid(gateway.FailureGatewayError, detail.Error())
}

// decode reads a success answer into v; an unreadable one is Ambiguous (the call may have done
// what it was sent for).
func (c *Client) decode(req request, a answer, v any) error {
	if err := json.Unmarshal(a.raw, v); err != nil {
		return gateway.Ambiguous(fmt.Errorf("%s %s: decode answer: %w", c.cfg.Name, req.op, err))
	}
	return nil
}

// scrub removes the account's secrets from text read from Wave: an answer that echoes our
// request (a misconfigured proxy, a debug page) must not carry them into errors and logs.
func (c *Client) scrub(text string) string {
	for _, s := range []string{c.cfg.APIKey, c.cfg.PayoutAPIKey, c.cfg.WebhookSecret} {
		if len(s) >= 4 { // a shorter "secret" would redact ordinary words; no real one is that short
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// snippet is the beginning of an answer, for error messages, without secrets (scrubbed before
// the cut, so that no part of a secret straddling it survives).
func (c *Client) snippet(raw []byte) string {
	r := []rune(c.scrub(strings.ToValidUTF8(string(raw), "")))
	return strings.TrimSpace(string(r[:min(len(r), 300)]))
}
