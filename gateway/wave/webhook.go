package wave

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// SignatureHeader is the header of Wave's webhook signature.
const SignatureHeader = "Wave-Signature"

// SignatureTolerance is how far a webhook's timestamp may be from our clock, either way: an
// older delivery may be a replay.
const SignatureTolerance = 5 * time.Minute

// Webhook event types this adapter decodes. Wave documents no payout events: payouts are
// followed by status reads only.
const (
	EventCheckoutCompleted     = "checkout.session.completed"
	EventCheckoutPaymentFailed = "checkout.session.payment_failed"
)

// Errors of ParseCallback, for callers that tell a forgery from an event they do not need.
var (
	// ErrBadSignature: the callback is not signed by Wave with our webhook secret, or its
	// signature is too old.
	ErrBadSignature = errors.New("wave callback: signature refused")
	// ErrUnhandledEvent: an authentic event of a type that reports no collection of ours (e.g.
	// merchant.payment_received, test.test_event); it wraps gateway.ErrCallbackIgnored, so the
	// service acknowledges it.
	ErrUnhandledEvent = fmt.Errorf("wave callback: event type not handled: %w", gateway.ErrCallbackIgnored)
)

// event is the envelope of Wave's webhooks.
type event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// ParseCallback authenticates a webhook by its Wave-Signature (HMAC-SHA256 of the timestamp
// followed by the raw body, keyed by the webhook secret; any of several v1 signatures may match,
// as during a secret rotation; at most SignatureTolerance old) and decodes a checkout session
// event into the outcome of the collection whose reference is the session's client_reference.
// The result is Trusted. The event carries the whole session, so it decodes exactly as a status
// read of that session would.
func (c *Client) ParseCallback(_ context.Context, header http.Header, body []byte) (gateway.Callback, error) {
	if err := verifySignature(c.cfg.WebhookSecret, header.Get(SignatureHeader), body, c.cfg.Now()); err != nil {
		return gateway.Callback{}, err
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		return gateway.Callback{}, fmt.Errorf("wave callback: decode event: %w", err)
	}
	if ev.Type != EventCheckoutCompleted && ev.Type != EventCheckoutPaymentFailed {
		return gateway.Callback{}, fmt.Errorf("%w: %q (event %s)", ErrUnhandledEvent, ev.Type, ev.ID)
	}
	var s session
	if err := json.Unmarshal(ev.Data, &s); err != nil {
		return gateway.Callback{}, fmt.Errorf("wave callback: decode %s data: %w", ev.Type, err)
	}
	if s.ClientReference == "" {
		// a session made elsewhere (the business portal, another integration): not ours
		return gateway.Callback{}, fmt.Errorf("%w: session %s has no client_reference", ErrUnhandledEvent, s.ID)
	}
	st, err := s.operationStatus(s.ClientReference)
	if err != nil {
		return gateway.Callback{}, fmt.Errorf("wave callback: session %s: %w", s.ID, err)
	}
	return gateway.Callback{Kind: gateway.CallbackCollection, OperationStatus: st, Trusted: true}, nil
}

// verifySignature checks a Wave-Signature header ("t=<unix seconds>,v1=<hex>[,v1=<hex>…]")
// against body. Its errors never carry the secret nor the signature we expected.
func verifySignature(secret, header string, body []byte, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: no webhook secret is configured", ErrBadSignature)
	}
	if header == "" {
		return fmt.Errorf("%w: no %s header", ErrBadSignature, SignatureHeader)
	}
	var timestamp string
	var signatures [][]byte
	for part := range strings.SplitSeq(header, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch key {
		case "t":
			if timestamp != "" {
				return fmt.Errorf("%w: two timestamps", ErrBadSignature)
			}
			timestamp = value
		case "v1":
			if sig, err := hex.DecodeString(value); err == nil && len(sig) == sha256.Size {
				signatures = append(signatures, sig)
			}
		}
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no valid timestamp", ErrBadSignature)
	}
	if len(signatures) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrBadSignature)
	}
	if age := now.Sub(time.Unix(seconds, 0)); age > SignatureTolerance || age < -SignatureTolerance {
		return fmt.Errorf("%w: timestamp %d is %s away from now", ErrBadSignature, seconds, age.Round(time.Second))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range signatures {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no signature matches the body", ErrBadSignature)
}
