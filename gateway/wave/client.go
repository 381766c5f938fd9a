// Package wave is the gateway.Gateway adapter of the Wave Business API (docs.wave.com): a
// collection is a checkout session the customer pays in the Wave app (next action: redirect to
// wave_launch_url), a payout is POST /v1/payout keyed by an idempotency-key, a refund is the
// whole checkout session's refund (refund.go), and Wave's webhooks
// are signed (Wave-Signature), so the callbacks this adapter decodes are Trusted.
//
// Our reference travels as client_reference on both sessions and payouts: Wave's search by
// client_reference is how an operation whose creation answer was lost is found again.
package wave

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// Defaults of Config.
const (
	DefaultName    = "wave"
	DefaultBaseURL = "https://api.wave.com"
	DefaultTimeout = 15 * time.Second
)

// ReferencePlaceholder, in Config.SuccessURL or Config.ErrorURL, is replaced by the collection's
// reference, so that the page the customer returns to knows which payment it is about.
const ReferencePlaceholder = "{reference}"

// Config configures one Wave business wallet (a Wave API key is bound to exactly one wallet).
type Config struct {
	// Name is the gateway's name in the routing table and in callback URLs (default "wave").
	Name string
	// BaseURL is Wave's API root (default https://api.wave.com).
	BaseURL string
	// APIKey is the key with access to the Checkout API (collections). Secret.
	APIKey string
	// PayoutAPIKey is the key with access to the Payout API; it may be the same key as APIKey
	// when that key was granted both APIs. Empty: payouts are not configured and Disburse
	// answers KindInvalid. Secret.
	PayoutAPIKey string
	// WebhookSecret is the signing secret of the webhook registered in Wave's business portal
	// ("signing secret" strategy). Empty: every callback is refused. Secret.
	WebhookSecret string
	// SuccessURL is where Wave sends the customer back after paying (an https URL, required
	// for collections). ReferencePlaceholder in it is replaced by the collection's reference.
	SuccessURL string
	// ErrorURL is where Wave sends the customer back when the payment fails (an https URL,
	// required for collections; ReferencePlaceholder as in SuccessURL).
	ErrorURL string
	// RestrictPayerMobile sends the customer's phone as restrict_payer_mobile, so that only the
	// Wave account of that number can pay the session.
	RestrictPayerMobile bool
	// Memory keeps the id Wave gave each reference's session or payout, for status reads from
	// any process (default: an in-process gateway.MapMemory; production passes the durable one).
	Memory gateway.Memory
	// HTTPClient sends the calls (default: a plain http.Client; Timeout bounds each call).
	HTTPClient *http.Client
	// Timeout bounds each HTTP call (default 15s).
	Timeout time.Duration
	// Now is the clock that judges a webhook's age (default time.Now).
	Now func() time.Time
}

// String describes the configuration without its secrets, so that a Config printed or logged
// by mistake leaks nothing.
func (c Config) String() string {
	return fmt.Sprintf("wave.Config{Name:%q BaseURL:%q APIKey:%s PayoutAPIKey:%s WebhookSecret:%s SuccessURL:%q ErrorURL:%q RestrictPayerMobile:%t Timeout:%s}",
		c.Name, c.BaseURL, redacted(c.APIKey), redacted(c.PayoutAPIKey), redacted(c.WebhookSecret),
		c.SuccessURL, c.ErrorURL, c.RestrictPayerMobile, c.Timeout)
}

// GoString is String: %#v must not print the secrets either.
func (c Config) GoString() string { return c.String() }

// LogValue is String, for slog.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func redacted(secret string) string {
	if secret == "" {
		return `""`
	}
	return "[redacted]"
}

// Client is the gateway.Gateway adapter of one Wave business wallet. It is safe for concurrent
// use.
type Client struct {
	cfg  Config
	base string
}

var (
	_ gateway.Gateway   = (*Client)(nil)
	_ gateway.Canceller = (*Client)(nil)
	_ gateway.Windowed  = (*Client)(nil)
)

// New returns the adapter for the wallet cfg describes, with cfg's defaults filled in.
func New(cfg Config) *Client {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Memory == nil {
		cfg.Memory = &gateway.MapMemory{}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/")}
}

// Name returns the gateway's name.
func (c *Client) Name() string { return c.cfg.Name }

// Wave's windows (see Windows).
const (
	notFoundSettle = 5 * time.Minute
	lateSuccess    = 24 * time.Hour
)

// Windows are Wave's. A create whose answer was lost is found again by Wave's search by
// client_reference (and a payout's re-send is deduplicated by its idempotency-key), but the
// search may not show an operation just created (a 409 with nothing found is Ambiguous for that
// reason): a NOT_FOUND is final five minutes after the last send. A checkout session stays
// payable until Wave expires it, and a webhook may not reach us: a collection Sika ended without
// a confirmed expiry is re-read for a day.
func (c *Client) Windows() gateway.Windows {
	return gateway.Windows{NotFoundSettle: notFoundSettle, LateSuccess: lateSuccess}
}

// SupportsPayouts reports whether a Payout API key is configured.
func (c *Client) SupportsPayouts() bool { return c.cfg.PayoutAPIKey != "" }

// Collect opens a checkout session for req (client_reference and idempotency-key: the
// reference) and answers PENDING with a redirect to the session's wave_launch_url. A reference
// that already has a session is answered with that session's state: no second session is made.
func (c *Client) Collect(ctx context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	body, err := c.sessionBody(req)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	s, err := c.collect(ctx, req.Reference, body)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	st, err := statusOf(c, sessions, req.Reference, s)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	res := gateway.CollectResult{GatewayReference: st.GatewayReference, Status: st.Status,
		FailureCode: st.FailureCode, FailureMessage: st.FailureMessage}
	if st.Status == gateway.StatusPending {
		res.NextAction = gateway.NextAction{Type: gateway.NextRedirect, URL: s.WaveLaunchURL}
	}
	return res, nil
}

// ConfirmOTP is not part of Wave: the customer confirms in the Wave app.
func (c *Client) ConfirmOTP(context.Context, string, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, "Wave has no OTP confirmation step")
}

// CollectionStatus reads the reference's checkout session (by the remembered session id, else
// by Wave's search by client_reference); a reference Wave has no session for is StatusNotFound.
func (c *Client) CollectionStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return readStatus(ctx, c, sessions, reference)
}

// Disburse sends a payout keyed by req.Reference (idempotency-key and client_reference). A
// reference that already has a payout is answered with that payout's state.
func (c *Client) Disburse(ctx context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	if err := c.payoutsConfigured(); err != nil {
		return gateway.OperationStatus{}, err
	}
	body, err := c.payoutBody(req)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	p, err := c.disburse(ctx, req.Reference, body)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	return statusOf(c, payouts, req.Reference, p)
}

// DisbursementStatus reads the reference's payout (by the remembered payout id, else by Wave's
// search by client_reference); a reference Wave has no payout for is StatusNotFound.
func (c *Client) DisbursementStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	if err := c.payoutsConfigured(); err != nil {
		return gateway.OperationStatus{}, err
	}
	return readStatus(ctx, c, payouts, reference)
}

func (c *Client) payoutsConfigured() error {
	if c.cfg.PayoutAPIKey == "" {
		return gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": payouts not configured")
	}
	return nil
}
