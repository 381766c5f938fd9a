package orange

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sikahq/sika/gateway"
)

// maxAnswer bounds what is read of Orange's answers.
const maxAnswer = 1 << 20

// call sends one authenticated JSON call to a WebPay endpoint and returns the answer's status
// and body. A 401 is Orange's API gateway refusing the token (typically expired early) before
// the call reached WebPay: the token is fetched again and the same call sent once more; a second
// 401, or a 403 (the application may not use WebPay), is AuthFailed.
func (c *Client) call(ctx context.Context, path string, in any) (int, []byte, error) {
	op := c.cfg.Name + " POST " + path
	payload, err := json.Marshal(in)
	if err != nil {
		return 0, nil, gateway.Invalid(gateway.FailureGatewayError, op+": encode request: "+err.Error())
	}
	for refreshed := false; ; refreshed = true {
		token, err := c.tokens.get(ctx)
		if err != nil {
			return 0, nil, err
		}
		headers := http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}}
		status, raw, err := c.send(ctx, op, path, headers, payload)
		switch {
		case err != nil:
			return 0, nil, err
		case status == http.StatusUnauthorized && !refreshed:
			c.tokens.drop(token)
			continue
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return 0, nil, gateway.AuthFailed(fmt.Errorf("%s: %d %s", op, status, c.describe(raw, token)))
		}
		return status, raw, nil
	}
}

// send is one POST exchange, bounded by Config.Timeout. A failure before the request was
// written is Unavailable (Orange cannot have acted on it); after that it is Ambiguous.
func (c *Client) send(ctx context.Context, op, path string, headers http.Header, payload []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, gateway.Unavailable(fmt.Errorf("%s: %w", op, err))
	}
	req.Header = headers
	req.Header.Set("Accept", "application/json")
	return gateway.Exchange(c.cfg.HTTPClient, op, req, maxAnswer)
}

// answerError maps a non-2xx answer that is not a token refusal; secrets are the payment's
// tokens, blotted out of Orange's message with the account's own.
func (c *Client) answerError(op string, status int, raw []byte, secrets ...string) error {
	detail := fmt.Errorf("%s: %d %s", op, status, c.describe(raw, secrets...))
	if err := gateway.StatusRefusal(status, detail); err != nil {
		return err
	}
	return gateway.Invalid(gateway.FailureGatewayError, detail.Error())
}

// describe renders an error answer for our messages: Orange's code, message and description,
// with our secrets blotted out should Orange echo them.
func (c *Client) describe(raw []byte, secrets ...string) string {
	var e apiError
	if json.Unmarshal(raw, &e) != nil {
		return "(no error body)"
	}
	return c.scrub(e.String(), secrets...)
}

// scrub removes from s the account's secrets (client secret, merchant key, the access token in
// use) and the others given.
func (c *Client) scrub(s string, others ...string) string {
	secrets := append([]string{c.cfg.ClientSecret, c.cfg.MerchantKey, c.tokens.current()}, others...)
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}
