// Package mtnmomo is the gateway.Gateway adapter of the MTN MoMo Open API (collection and
// disbursement products): OAuth tokens per product, requesttopay and transfer keyed by our
// reference as X-Reference-Id, the disbursement product's refund of a requesttopay (refund.go),
// status reads, and unsigned callbacks.
package mtnmomo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// DefaultTargetEnvironment is the X-Target-Environment of MTN's sandbox.
const DefaultTargetEnvironment = "sandbox"

// LiveTargetEnvironments are the X-Target-Environment values of the LIVE markets Sika serves,
// by ISO country code: a convenient value for Config.TargetEnvironment.
var LiveTargetEnvironments = map[string]string{
	"BJ": "mtnbenin",
	"CI": "mtnivorycoast",
	"CM": "mtncameroon",
	"CG": "mtncongo",
	"GN": "mtnguineaconakry",
}

// Config configures one MTN MoMo account (one API user, usually one market).
type Config struct {
	Name    string // the gateway's name in the routing table, e.g. "mtnmomo-bj"
	BaseURL string // e.g. https://proxy.momoapi.mtn.com (LIVE) or https://sandbox.momodeveloper.mtn.com
	// Subscription keys (Ocp-Apim-Subscription-Key), one per product. An empty
	// DisbursementSubscriptionKey disables payouts (Disburse answers Invalid).
	CollectionSubscriptionKey   string
	DisbursementSubscriptionKey string
	APIUser                     string // the API user's UUID
	APIKey                      string
	// TargetEnvironment maps a request's country (ISO alpha-2) to X-Target-Environment;
	// countries not listed use DefaultEnvironment.
	TargetEnvironment map[string]string
	// DefaultEnvironment is used for unlisted countries and for status reads of references
	// this process did not send (default "sandbox", or the only value of TargetEnvironment
	// when it lists exactly one environment).
	DefaultEnvironment string
	// CallbackURL is sent as X-Callback-Url when a request carries none.
	CallbackURL string
	// Memory keeps the target environment of each reference sent, for status reads (the status
	// endpoints need X-Target-Environment but carry no country) in any process; default an
	// in-process map.
	Memory     gateway.Memory
	HTTPClient *http.Client     // default: a plain client; Timeout bounds each call
	Timeout    time.Duration    // per HTTP call, default 15s
	Now        func() time.Time // clock of token expiry, default time.Now
}

// Client is the gateway.Gateway adapter of one MTN MoMo account. It is safe for concurrent use.
type Client struct {
	cfg          Config
	base         string
	defaultEnv   string
	collection   *tokenSource
	disbursement *tokenSource
}

var (
	_ gateway.Gateway  = (*Client)(nil)
	_ gateway.Windowed = (*Client)(nil)
)

// New returns the adapter for the account cfg describes.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Memory == nil {
		cfg.Memory = &gateway.MapMemory{}
	}
	c := &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), defaultEnv: cfg.DefaultEnvironment}
	if c.defaultEnv == "" {
		c.defaultEnv = DefaultTargetEnvironment
		distinct := map[string]bool{}
		for _, env := range cfg.TargetEnvironment {
			distinct[env] = true
		}
		if len(distinct) == 1 {
			for env := range distinct {
				c.defaultEnv = env
			}
		}
	}
	c.collection = &tokenSource{c: c, product: productCollection, key: cfg.CollectionSubscriptionKey}
	c.disbursement = &tokenSource{c: c, product: productDisbursement, key: cfg.DisbursementSubscriptionKey}
	return c
}

// Name returns the gateway's name.
func (c *Client) Name() string { return c.cfg.Name }

// MTN MoMo's windows (see Windows).
const (
	notFoundSettle = 10 * time.Minute
	lateSuccess    = 24 * time.Hour
)

// Windows are MTN MoMo's. MTN accepts a request-to-pay or a transfer (202) before it has
// created it, and answers 404 to its status reads meanwhile (a 409 on the same X-Reference-Id
// followed by a 404 shows it): a NOT_FOUND is final only ten minutes after the last send. A
// request-to-pay stays approvable until MTN expires it, after a delay its API does not report,
// and the callback that reports it is unsigned and sent once: a collection Sika ended is re-read
// for a day. MTN has no API to withdraw a request-to-pay, so the adapter is no gateway.Canceller.
func (c *Client) Windows() gateway.Windows {
	return gateway.Windows{NotFoundSettle: notFoundSettle, LateSuccess: lateSuccess}
}

// SupportsPayouts reports whether the account has the disbursement product.
func (c *Client) SupportsPayouts() bool { return c.cfg.DisbursementSubscriptionKey != "" }

// needDisbursement refuses (Invalid: nothing is sent) what needs the disbursement product on
// an account without it; why says what is missing.
func (c *Client) needDisbursement(why string) error {
	if !c.SupportsPayouts() {
		return gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": "+why)
	}
	return nil
}

// Collect sends a request-to-pay keyed by req.Reference (a UUID, used as X-Reference-Id and
// externalId). MTN answers 202 and decides later, so the result is PENDING with a USSD push;
// a reference MTN already knows (409) is answered with the operation's current state.
func (c *Client) Collect(ctx context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	body, env, err := c.initiation(req.Reference, req.Amount.String(), req.Amount.IsInteger(), req.Currency,
		req.Country, req.Phone, req.Description, req.CustomerName, false)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	st, err := c.initiate(ctx, c.collection, "/collection/v1_0/requesttopay", req.Reference, env,
		callbackURL(req.CallbackURL, c.cfg.CallbackURL), body, c.CollectionStatus)
	if err != nil {
		return gateway.CollectResult{}, err
	}
	return gateway.CollectResult{
		GatewayReference: st.GatewayReference,
		Status:           st.Status,
		FailureCode:      st.FailureCode,
		FailureMessage:   st.FailureMessage,
		NextAction:       gateway.NextAction{Type: gateway.NextUSSDPush},
	}, nil
}

// ConfirmOTP is not part of MTN MoMo: the customer approves the push with their PIN.
func (c *Client) ConfirmOTP(context.Context, string, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, gateway.Invalid(gateway.FailureGatewayError, "MTN MoMo has no OTP confirmation step")
}

// CollectionStatus reads a request-to-pay; an unknown reference is StatusNotFound.
func (c *Client) CollectionStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.status(ctx, c.collection, "/collection/v1_0/requesttopay/", reference)
}

// Disburse sends a transfer keyed by req.Reference; a reference MTN already knows (409) is
// answered with the transfer's current state.
func (c *Client) Disburse(ctx context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	if err := c.needDisbursement("payouts are not configured"); err != nil {
		return gateway.OperationStatus{}, err
	}
	body, env, err := c.initiation(req.Reference, req.Amount.String(), req.Amount.IsInteger(), req.Currency,
		req.Country, req.Phone, req.Description, req.RecipientName, true)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	return c.initiate(ctx, c.disbursement, "/disbursement/v1_0/transfer", req.Reference, env,
		callbackURL(req.CallbackURL, c.cfg.CallbackURL), body, c.DisbursementStatus)
}

// DisbursementStatus reads a transfer; an unknown reference is StatusNotFound.
func (c *Client) DisbursementStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.disbursementStatus(ctx, "payouts are not configured", "/disbursement/v1_0/transfer/", reference)
}

// disbursementStatus reads an operation of the disbursement product (a transfer, a refund)
// under prefix; why says what an account without the product cannot do.
func (c *Client) disbursementStatus(ctx context.Context, why, prefix, reference string) (gateway.OperationStatus, error) {
	if err := c.needDisbursement(why); err != nil {
		return gateway.OperationStatus{}, err
	}
	return c.status(ctx, c.disbursement, prefix, reference)
}

// ParseCallback decodes MTN's callback (the status JSON, PUT or POST to X-Callback-Url). MTN
// does not sign callbacks, so the result is never Trusted: confirm it with a status read.
// The reference is the callback's externalId (we send our reference there); a body with
// "payee" reports a transfer, otherwise a request-to-pay.
func (c *Client) ParseCallback(_ context.Context, _ http.Header, body []byte) (gateway.Callback, error) {
	var sb statusBody
	if err := json.Unmarshal(body, &sb); err != nil {
		return gateway.Callback{}, fmt.Errorf("mtnmomo callback: decode body: %w", err)
	}
	kind := gateway.CallbackCollection
	if sb.Payee != nil {
		kind = gateway.CallbackDisbursement
	}
	ref := sb.ReferenceID
	if ref == "" {
		ref = sb.ExternalID
	}
	if !isUUID(ref) {
		return gateway.Callback{}, fmt.Errorf("mtnmomo callback: no reference (externalId %q)", sb.ExternalID)
	}
	st, err := sb.operationStatus(ref, kind == gateway.CallbackDisbursement)
	if err != nil {
		return gateway.Callback{}, fmt.Errorf("mtnmomo callback: %w", err)
	}
	return gateway.Callback{Kind: kind, OperationStatus: st, Trusted: false}, nil
}

// initiation validates and builds the body of a requesttopay or transfer.
func (c *Client) initiation(ref, amount string, integer bool, currency, country, phone, message, name string, payout bool) (initiationBody, string, error) {
	if !isUUID(ref) {
		return initiationBody{}, "", gateway.Invalid(gateway.FailureGatewayError, "reference must be a UUID (MTN X-Reference-Id)")
	}
	if zeroDecimal[strings.ToUpper(currency)] && !integer {
		return initiationBody{}, "", gateway.Invalid(gateway.FailureGatewayError, "amount "+amount+" "+currency+" has decimals")
	}
	if strings.HasPrefix(amount, "-") || amount == "0" {
		return initiationBody{}, "", gateway.Invalid(gateway.FailureGatewayError, "amount must be positive")
	}
	msisdn := strings.TrimPrefix(strings.TrimSpace(phone), "+")
	if msisdn == "" || strings.Trim(msisdn, "0123456789") != "" {
		code := gateway.FailureInvalidNumber
		if payout {
			code = gateway.FailureRecipientNotFound
		}
		return initiationBody{}, "", gateway.Invalid(code, "phone number must be E.164")
	}
	env := c.defaultEnv
	if e, ok := c.cfg.TargetEnvironment[strings.ToUpper(country)]; ok && e != "" {
		env = e
	}
	note := truncate(message, 160)
	body := initiationBody{Amount: amount, Currency: strings.ToUpper(currency), ExternalID: ref,
		PayerMessage: note, PayeeNote: note}
	party := &party{PartyIDType: "MSISDN", PartyID: msisdn}
	if payout {
		body.Payee = party
	} else {
		body.Payer = party
	}
	_ = name // MTN has no field for the customer's name
	return body, env, nil
}

// initiate POSTs an operation under X-Reference-Id ref; 409 (already created) reads its state.
func (c *Client) initiate(ctx context.Context, ts *tokenSource, path, ref, env, cbURL string, body initiationBody,
	read func(context.Context, string) (gateway.OperationStatus, error)) (gateway.OperationStatus, error) {
	// Remembered before sending: a timeout must still be resolvable by a status read.
	if err := c.cfg.Memory.Remember(ctx, c.cfg.Name, ref, rememberedJSON(env)); err != nil {
		return gateway.OperationStatus{}, gateway.Unavailable(fmt.Errorf("%s: %w", c.cfg.Name, err))
	}
	headers := http.Header{"X-Reference-Id": {ref}, "X-Target-Environment": {env}}
	if cbURL != "" {
		headers.Set("X-Callback-Url", cbURL)
	}
	status, raw, err := c.do(ctx, ts, http.MethodPost, path, headers, body)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	switch {
	case status == http.StatusAccepted || status == http.StatusOK || status == http.StatusCreated:
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusPending}, nil
	case status == http.StatusConflict:
		st, err := read(ctx, ref)
		if err != nil {
			return gateway.OperationStatus{}, err
		}
		if st.Status == gateway.StatusNotFound { // 409 then 404: MTN is still creating it
			st.Status = gateway.StatusPending
		}
		return st, nil
	}
	return gateway.OperationStatus{}, classifyAnswer(c.cfg.Name+" POST "+path, status, raw, strings.HasPrefix(path, "/disbursement"))
}

// status GETs an operation's state.
func (c *Client) status(ctx context.Context, ts *tokenSource, prefix, ref string) (gateway.OperationStatus, error) {
	if !isUUID(ref) { // MTN answers 400 to anything else; nothing of ours can exist under it
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusNotFound}, nil
	}
	env, err := c.environmentOf(ctx, ref)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	op := c.cfg.Name + " GET " + prefix + "{ref}"
	status, raw, err := c.do(ctx, ts, http.MethodGet, prefix+ref, http.Header{"X-Target-Environment": {env}}, nil)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if status == http.StatusNotFound && errorCode(raw) == "RESOURCE_NOT_FOUND" {
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusNotFound}, nil
	}
	if status != http.StatusOK {
		return gateway.OperationStatus{}, classifyAnswer(op, status, raw, ts.product == productDisbursement)
	}
	var sb statusBody
	if err := json.Unmarshal(raw, &sb); err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: decode answer: %w", op, err))
	}
	st, err := sb.operationStatus(ref, ts.product == productDisbursement)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: %w", op, err))
	}
	return st, nil
}

// remembered is what the adapter keeps per reference.
type remembered struct {
	Environment string `json:"environment"`
}

func rememberedJSON(env string) []byte {
	raw, _ := json.Marshal(remembered{Environment: env})
	return raw
}

// environmentOf is the X-Target-Environment a reference was sent with (the default for one
// this service never sent).
func (c *Client) environmentOf(ctx context.Context, ref string) (string, error) {
	raw, found, err := c.cfg.Memory.Recall(ctx, c.cfg.Name, ref)
	if err != nil {
		return "", gateway.Unavailable(fmt.Errorf("%s: %w", c.cfg.Name, err))
	}
	var r remembered
	if found && json.Unmarshal(raw, &r) == nil && r.Environment != "" {
		return r.Environment, nil
	}
	return c.defaultEnv, nil
}

// maxResponse bounds the answers read from MTN.
const maxResponse = 1 << 20

// do sends one authenticated API call and returns the answer's status and body; transport
// failures come back as gateway errors. A 401/403 (MTN's gateway refused the token: the call
// was not executed) refreshes the token and sends the same call once more; a second refusal is
// AuthFailed.
func (c *Client) do(ctx context.Context, ts *tokenSource, method, path string, headers http.Header, in any) (int, []byte, error) {
	var payload []byte
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return 0, nil, gateway.Invalid(gateway.FailureGatewayError, "encode request: "+err.Error())
		}
		payload = raw
	}
	op := c.cfg.Name + " " + method + " " + path
	for attempt := 0; ; attempt++ {
		token, err := ts.get(ctx)
		if err != nil {
			return 0, nil, err
		}
		h := headers.Clone()
		h.Set("Authorization", "Bearer "+token)
		h.Set("Ocp-Apim-Subscription-Key", ts.key)
		status, raw, err := c.send(ctx, op, method, path, h, payload)
		if err != nil {
			return 0, nil, err
		}
		if status != http.StatusUnauthorized && status != http.StatusForbidden {
			return status, raw, nil
		}
		if attempt > 0 {
			return 0, nil, gateway.AuthFailed(fmt.Errorf("%s: %d after a token refresh: %s", op, status, snippet(raw)))
		}
		ts.invalidate(token)
	}
}

// send is one HTTP exchange. Failures before any byte of the request may have left are
// Unavailable; after that (timeout, broken connection, unreadable answer) Ambiguous.
func (c *Client) send(ctx context.Context, op, method, path string, headers http.Header, payload []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, nil, gateway.Unavailable(fmt.Errorf("%s: %w", op, err))
	}
	req.Header = headers
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return gateway.Exchange(c.cfg.HTTPClient, op, req, maxResponse)
}

// classifyAnswer maps a non-2xx answer of an initiation or a status read.
func classifyAnswer(op string, status int, raw []byte, payout bool) error {
	code := errorCode(raw)
	detail := fmt.Errorf("%s: %d: %s", op, status, snippet(raw))
	switch {
	case status == http.StatusBadRequest:
		failure := gateway.FailureGatewayError
		if code == "PAYER_NOT_FOUND" || code == "PAYEE_NOT_FOUND" || code == "INVALID_PARTY_ID" {
			failure = gateway.FailureInvalidNumber
			if payout {
				failure = gateway.FailureRecipientNotFound
			}
		}
		return gateway.Invalid(failure, detail.Error())
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return gateway.AuthFailed(detail)
	}
	if err := gateway.StatusRefusal(status, detail); err != nil {
		return err
	}
	return gateway.Invalid(gateway.FailureGatewayError, detail.Error())
}

func errorCode(raw []byte) string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Code
}

func snippet(raw []byte) string { return strings.TrimSpace(string(raw[:min(len(raw), 200)])) }

func callbackURL(req, def string) string {
	if req != "" {
		return req
	}
	return def
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// zeroDecimal lists the currencies MTN takes in whole units.
var zeroDecimal = map[string]bool{"XOF": true, "XAF": true, "GNF": true}

// isUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
				return false
			}
		}
	}
	return true
}
