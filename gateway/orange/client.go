// Package orange is the gateway.Gateway adapter of Orange Money WebPay (Orange's "Web Payment /
// M Payment" API): OAuth client-credentials tokens, one Orange payment page per collection (the
// customer is redirected to its payment_url), status reads by order_id and pay_token, and
// unsigned notifications that carry only a notif_token. WebPay has no payouts.
//
// One trait of WebPay shapes this adapter: what the customer needs to pay, the payment_url,
// exists only in the answer to the initiation, and so does the pay_token without which Orange
// answers no status read. An initiation whose answer is lost (a timeout after sending, a crash)
// created a payment that nobody can pay and nobody can ask about. Such a reference is PENDING
// while its answer may still arrive, then FAILED (Config.UnansweredAfter); and a payment URL is
// handed out only once its pay_token is remembered where every status read finds it. So a
// customer is never shown a page that the service could later call unpaid, and an order_id
// derived from the reference keeps any retry from creating a second payment.
package orange

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// Defaults of Config.
const (
	DefaultName    = "orange"
	DefaultBaseURL = "https://api.orange.com"
	DefaultLang    = "fr"
	DefaultTimeout = 15 * time.Second
)

// SandboxSegment is the {country} path segment of Orange's WebPay sandbox ("WebPay Dev"); map
// every country to it in Config.CountrySegments to use the sandbox (with Config.Currency "OUV").
const SandboxSegment = "dev"

// Config configures one Orange Developer application with its WebPay merchant account.
type Config struct {
	// Name is the gateway's name in the routing table and in callback URLs (default "orange").
	Name string
	// BaseURL is Orange's API host (default https://api.orange.com).
	BaseURL string
	// ClientID and ClientSecret are the application's OAuth credentials, sent as Basic auth to
	// /oauth/v3/token.
	ClientID     string
	ClientSecret string
	// MerchantKey is the WebPay merchant key sent with every initiation.
	MerchantKey string
	// CountrySegments maps a request's country (ISO alpha-2, upper case) to the {country}
	// segment of /orange-money-webpay/{country}/v1/...; an unlisted country uses its lower-case
	// ISO code ("CI" → "ci"). SandboxSegment ("dev") is Orange's sandbox.
	CountrySegments map[string]string
	// Currency, when set, is sent instead of the request's currency (Orange's sandbox only
	// takes "OUV").
	Currency string
	// ReturnURL and CancelURL are where Orange's payment page sends the customer after paying or
	// cancelling. Required.
	ReturnURL string
	CancelURL string
	// NotifURL is the notif_url of a request without a CallbackURL.
	NotifURL string
	// MerchantReference is WebPay's "reference", the merchant name shown on the payment page
	// (default Name).
	MerchantReference string
	// Lang is the payment page's language, "fr" or "en" (default "fr").
	Lang string
	// Memory keeps Orange's answers (pay_token, notif_token, payment_url) for status reads,
	// repeated Collects and notifications in any process. Default: an in-process
	// gateway.MapMemory, which only suits a single process.
	Memory gateway.Memory
	// HTTPClient sends the calls (default: a plain client).
	HTTPClient *http.Client
	// Timeout bounds each HTTP exchange (default 15s). An initiation, token fetches and one
	// token refresh included, is bounded by 4×Timeout.
	Timeout time.Duration
	// UnansweredAfter is how long after sending an initiation whose answer was not remembered
	// (lost to a timeout or a crash) status reads call it FAILED: nobody holds its payment URL,
	// so nobody can pay it. Default 4×Timeout plus a minute for clocks that differ between
	// processes; a shorter value is raised to 4×Timeout.
	UnansweredAfter time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Client is the gateway.Gateway adapter of one Orange WebPay account. It is safe for concurrent
// use.
type Client struct {
	cfg      Config
	base     string
	inFlight time.Duration // bound of one initiation, all exchanges included
	tokens   *tokenSource
}

var (
	_ gateway.Gateway  = (*Client)(nil)
	_ gateway.Windowed = (*Client)(nil)
)

// New returns the adapter for the account cfg describes.
func New(cfg Config) *Client {
	cfg.Name = orDefault(cfg.Name, DefaultName)
	cfg.BaseURL = orDefault(cfg.BaseURL, DefaultBaseURL)
	cfg.Lang = orDefault(cfg.Lang, DefaultLang)
	cfg.MerchantReference = orDefault(cfg.MerchantReference, cfg.Name)
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Memory == nil {
		cfg.Memory = &gateway.MapMemory{}
	}
	c := &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), inFlight: 4 * cfg.Timeout}
	switch {
	case cfg.UnansweredAfter <= 0:
		c.cfg.UnansweredAfter = c.inFlight + time.Minute
	case cfg.UnansweredAfter < c.inFlight:
		c.cfg.UnansweredAfter = c.inFlight
	}
	c.tokens = &tokenSource{c: c}
	return c
}

// Name returns the gateway's name.
func (c *Client) Name() string { return c.cfg.Name }

// lateSuccess is WebPay's LateSuccess window (see Windows).
const lateSuccess = 24 * time.Hour

// Windows are Orange WebPay's. Its payment page stays payable after Sika's push lifetime, and
// its notification is unsigned and may never come: a collection Sika ended is re-read for a
// day. No NotFoundSettle is declared, so the conservative default applies: this adapter never
// re-sends an initiation whose answer was lost, and a status read answers NOT_FOUND only for a
// reference it never sent (the send is marked in Memory first; a lost answer reads PENDING, then
// FAILED). WebPay has no API to withdraw a payment, so the adapter is no gateway.Canceller.
func (c *Client) Windows() gateway.Windows { return gateway.Windows{LateSuccess: lateSuccess} }

// SupportsPayouts is false: WebPay only collects (routing never sends a payout here).
func (c *Client) SupportsPayouts() bool { return false }

// ConfirmsOnOwnPage is true: the customer confirms on WebPay's page, so no pre-payment OTP.
func (c *Client) ConfirmsOnOwnPage() bool { return true }

// Collect creates the WebPay payment of req.Reference and answers PENDING with a redirect to its
// payment page; GatewayReference is the pay_token. A reference Orange already holds a payment
// for is answered from Memory and a status read, and is never created again.
func (c *Client) Collect(ctx context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	p, body, err := c.initiation(req)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	now := c.cfg.Now() // before reading Memory: see accepted
	known, found, err := c.paymentOf(ctx, req.Reference)
	if err != nil { // whether it was sent before is unknown: only a status read may tell
		return gateway.CollectResult{}, gateway.Ambiguous(err)
	}
	if found {
		return c.existing(ctx, req.Reference, known), nil
	}
	m, inFlight, err := c.markerOf(ctx, req.Reference)
	if err != nil {
		return gateway.CollectResult{}, gateway.Ambiguous(err)
	}
	if inFlight {
		st := c.unanswered(req.Reference, m, now)
		if st.Status == gateway.StatusPending {
			return gateway.CollectResult{}, gateway.Ambiguous(fmt.Errorf("%s: an initiation of this reference sent %s ago is not answered yet",
				c.cfg.Name, now.Sub(m.SentAt).Round(time.Millisecond)))
		}
		return gateway.CollectResult{Status: st.Status, FailureCode: st.FailureCode, FailureMessage: st.FailureMessage}, nil
	}
	return c.initiate(ctx, req.Reference, p, body)
}

// ConfirmOTP is not part of WebPay: the customer confirms on Orange's payment page.
func (c *Client) ConfirmOTP(context.Context, string, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError,
		"Orange WebPay has no OTP confirmation step: the customer confirms on Orange's payment page")
}

// CollectionStatus reads the payment of reference at Orange. A reference never sent is
// StatusNotFound; one whose initiation went unanswered is PENDING, then FAILED once
// Config.UnansweredAfter has passed since it was sent.
func (c *Client) CollectionStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	now := c.cfg.Now() // before reading Memory: see accepted
	p, found, err := c.paymentOf(ctx, reference)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Unavailable(err)
	}
	if found {
		return c.read(ctx, reference, p)
	}
	m, inFlight, err := c.markerOf(ctx, reference)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Unavailable(err)
	}
	if !inFlight {
		return gateway.OperationStatus{Reference: reference, Status: gateway.StatusNotFound}, nil
	}
	return c.unanswered(reference, m, now), nil
}

// errNoPayouts answers every payout: WebPay only collects, and no Orange disbursement API with
// a public wire format was found to build one against.
var errNoPayouts = gateway.Invalid(gateway.FailureGatewayError, "payouts are not available through Orange WebPay")

// Disburse is not available: Orange WebPay has no payouts.
func (c *Client) Disburse(context.Context, gateway.DisburseRequest) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, errNoPayouts
}

// DisbursementStatus is not available: Orange WebPay has no payouts.
func (c *Client) DisbursementStatus(context.Context, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, errNoPayouts
}

// ParseCallback decodes Orange's notification {status, notif_token, txnid}. It names no order:
// the notif_token, which only Orange and this service know, leads to the reference, and a
// notif_token that is unknown (forged, or of a payment whose answer was lost) is refused. The
// notification is unsigned, so the result is not Trusted: the workflow confirms it with a
// status read.
func (c *Client) ParseCallback(ctx context.Context, _ http.Header, body []byte) (gateway.Callback, error) {
	op := c.cfg.Name + " notification"
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return gateway.Callback{}, fmt.Errorf("%s: decode body: %w", op, err)
	}
	if n.NotifToken == "" {
		return gateway.Callback{}, fmt.Errorf("%s: no notif_token", op)
	}
	var link notifLink
	found, err := c.recall(ctx, notifKey(n.NotifToken), &link)
	if err != nil {
		return gateway.Callback{}, fmt.Errorf("%s: %w", op, err)
	}
	if !found {
		return gateway.Callback{}, fmt.Errorf("%s: unknown notif_token", op)
	}
	p, found, err := c.paymentOf(ctx, link.Reference)
	if err != nil {
		return gateway.Callback{}, fmt.Errorf("%s: %w", op, err)
	}
	if !found || subtle.ConstantTimeCompare([]byte(p.NotifToken), []byte(n.NotifToken)) != 1 {
		return gateway.Callback{}, fmt.Errorf("%s: notif_token does not match the payment it names", op)
	}
	st, err := operationStatus(link.Reference, p.PayToken, n.Status)
	if err != nil {
		return gateway.Callback{}, fmt.Errorf("%s: %w", op, err)
	}
	return gateway.Callback{Kind: gateway.CallbackCollection, OperationStatus: st, Trusted: false}, nil
}

// initiation validates req and builds the payment to remember and the body to send.
func (c *Client) initiation(req gateway.CollectRequest) (payment, webpaymentRequest, error) {
	orderID, err := OrderID(req.Reference)
	if err != nil {
		return payment{}, webpaymentRequest{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": "+err.Error())
	}
	if !req.Amount.IsPositive() || !req.Amount.IsInteger() {
		return payment{}, webpaymentRequest{}, gateway.Invalid(gateway.FailureGatewayError,
			fmt.Sprintf("%s: amount %s %s: WebPay takes a positive whole number of units", c.cfg.Name, req.Amount, req.Currency))
	}
	country := strings.ToUpper(strings.TrimSpace(req.Country))
	currency := orDefault(c.cfg.Currency, strings.ToUpper(strings.TrimSpace(req.Currency)))
	if len(country) != 2 || currency == "" {
		return payment{}, webpaymentRequest{}, gateway.Invalid(gateway.FailureGatewayError,
			c.cfg.Name+": a collection needs a country (ISO alpha-2) and a currency")
	}
	notifURL := orDefault(req.CallbackURL, c.cfg.NotifURL)
	for field, v := range map[string]string{"ReturnURL": c.cfg.ReturnURL, "CancelURL": c.cfg.CancelURL, "NotifURL": notifURL} {
		if v == "" { // nothing is sent: another gateway may serve the network
			return payment{}, webpaymentRequest{}, gateway.Unavailable(fmt.Errorf("%s: %s is not configured", c.cfg.Name, field))
		}
	}
	segment := strings.ToLower(country)
	if s := c.cfg.CountrySegments[country]; s != "" {
		segment = s
	}
	amount := req.Amount.String()
	p := payment{OrderID: orderID, Amount: amount, Currency: currency, Country: country, Segment: segment}
	body := webpaymentRequest{
		MerchantKey: c.cfg.MerchantKey, Currency: currency, OrderID: orderID, Amount: json.Number(amount),
		ReturnURL: c.cfg.ReturnURL, CancelURL: c.cfg.CancelURL, NotifURL: notifURL,
		Lang: c.cfg.Lang, Reference: c.cfg.MerchantReference,
	}
	return p, body, nil
}

// initiate sends the initiation of ref. It is marked in Memory first, so that a status read
// can tell an answer still to come, or lost, from a reference never sent.
func (c *Client) initiate(ctx context.Context, ref string, p payment, body webpaymentRequest) (gateway.CollectResult, error) {
	sentAt := c.cfg.Now()
	if err := c.remember(ctx, sentKey(ref), sending{SentAt: sentAt}); err != nil {
		return gateway.CollectResult{}, gateway.Unavailable(err)
	}
	path := webpayPath(p.Segment, "webpayment")
	op := c.cfg.Name + " POST " + path
	sendCtx, cancel := context.WithTimeout(ctx, c.inFlight)
	status, raw, err := c.call(sendCtx, path, body)
	cancel()
	if err == nil && status/100 != 2 && status != http.StatusConflict {
		err = c.answerError(op, status, raw)
	}
	if err != nil {
		if gateway.KindOf(err) != gateway.KindAmbiguous {
			// Refused or never received: nothing exists at Orange and the reference is free
			// again. Should this write fail, the reference resolves as unanswered: safe too.
			_ = c.remember(ctx, sentKey(ref), sending{SentAt: sentAt, Unsent: true})
		}
		return gateway.CollectResult{}, err
	}
	if status == http.StatusConflict {
		return c.duplicate(ctx, ref, op)
	}
	var ans webpaymentAnswer
	if json.Unmarshal(raw, &ans) != nil || ans.PayToken == "" || ans.PaymentURL == "" || ans.NotifToken == "" {
		return gateway.CollectResult{}, gateway.Ambiguous(fmt.Errorf("%s: %d without pay_token, payment_url or notif_token", op, status))
	}
	p.PayToken, p.PaymentURL, p.NotifToken = ans.PayToken, ans.PaymentURL, ans.NotifToken
	return c.accepted(ctx, ref, p, sentAt)
}

// accepted remembers Orange's answer, then hands out the payment page. The page is handed out
// only when the answer was remembered no later than UnansweredAfter after sending: a status read
// calls a reference unanswered only when it began after that (it takes the time before reading
// Memory), so it would have found the payment. A customer can pay only a payment that every
// status read finds.
func (c *Client) accepted(ctx context.Context, ref string, p payment, sentAt time.Time) (gateway.CollectResult, error) {
	withheld := func(err error) (gateway.CollectResult, error) {
		return gateway.CollectResult{}, gateway.Ambiguous(fmt.Errorf("%s: payment created, its page withheld: %w", c.cfg.Name, err))
	}
	if err := c.remember(ctx, notifKey(p.NotifToken), notifLink{Reference: ref}); err != nil {
		return withheld(err)
	}
	if err := c.remember(ctx, ref, p); err != nil {
		return withheld(err)
	}
	if late := c.cfg.Now().Sub(sentAt); late > c.cfg.UnansweredAfter {
		return withheld(fmt.Errorf("answer remembered %s after sending, past UnansweredAfter", late.Round(time.Millisecond)))
	}
	return c.pending(p), nil
}

// duplicate handles a 409 (order_id already used): the reference was initiated before, by a
// call whose answer another process may have remembered. Without it, the payment is one nobody
// can pay: it resolves as unanswered.
func (c *Client) duplicate(ctx context.Context, ref, op string) (gateway.CollectResult, error) {
	p, found, err := c.paymentOf(ctx, ref)
	if err == nil && found {
		return c.existing(ctx, ref, p), nil
	}
	return gateway.CollectResult{}, gateway.Ambiguous(fmt.Errorf("%s: 409: order_id already initiated, its answer not remembered", op))
}

// existing answers a Collect of a reference whose payment Orange holds, from Memory and a status
// read. When the status cannot be read the payment is PENDING: it exists, so the answer must
// never be one (Unavailable) that would send the customer to another gateway.
func (c *Client) existing(ctx context.Context, ref string, p payment) gateway.CollectResult {
	st, err := c.read(ctx, ref, p)
	if err != nil || st.Status == gateway.StatusPending {
		return c.pending(p)
	}
	return gateway.CollectResult{GatewayReference: p.PayToken, Status: st.Status,
		FailureCode: st.FailureCode, FailureMessage: st.FailureMessage}
}

// pending is the answer of a payment waiting for the customer on its page.
func (c *Client) pending(p payment) gateway.CollectResult {
	return gateway.CollectResult{GatewayReference: p.PayToken, Status: gateway.StatusPending,
		NextAction: gateway.NextAction{Type: gateway.NextRedirect, URL: p.PaymentURL}}
}

// unanswered is the state of a reference whose initiation was sent but whose answer was never
// remembered: PENDING while the answer may still be on its way, then FAILED. Its payment, if
// Orange created one, is unpaid and stays so: its page never reached the customer.
func (c *Client) unanswered(ref string, m sending, now time.Time) gateway.OperationStatus {
	if now.Sub(m.SentAt) <= c.cfg.UnansweredAfter {
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusPending}
	}
	return gateway.OperationStatus{Reference: ref, Status: gateway.StatusFailed, FailureCode: gateway.FailureGatewayError,
		FailureMessage: "Orange's answer to the payment request was lost: its payment page never reached the customer, who was not charged."}
}

// read asks Orange for the state of a remembered payment.
func (c *Client) read(ctx context.Context, ref string, p payment) (gateway.OperationStatus, error) {
	path := webpayPath(p.Segment, "transactionstatus")
	op := c.cfg.Name + " POST " + path
	status, raw, err := c.call(ctx, path, statusRequest{OrderID: p.OrderID, Amount: json.Number(p.Amount), PayToken: p.PayToken})
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if status/100 != 2 {
		return gateway.OperationStatus{}, c.answerError(op, status, raw, p.PayToken, p.NotifToken)
	}
	var ans statusAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: decode answer: %w", op, err))
	}
	if ans.OrderID != "" && ans.OrderID != p.OrderID {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: answer about order %q", op, ans.OrderID))
	}
	st, err := operationStatus(ref, p.PayToken, ans.Status)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: %w", op, err))
	}
	return st, nil
}

// webpayPath is the path of a WebPay endpoint in a country.
func webpayPath(segment, endpoint string) string {
	return "/orange-money-webpay/" + url.PathEscape(segment) + "/v1/" + endpoint
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
