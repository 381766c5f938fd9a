package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// ClientConfig configures a Client for one sandbox gateway.
type ClientConfig struct {
	Name string // the gateway's name, e.g. "sandbox-a"
	// BaseURL is the sandbox server's root, e.g. http://127.0.0.1:8089; a URL that already
	// ends in /gw/{Name} is accepted too.
	BaseURL        string
	APIKey         string
	CallbackSecret string
	HTTPClient     *http.Client     // default: a plain client; Timeout bounds each call
	Timeout        time.Duration    // per call, default 10s
	Now            func() time.Time // clock for callback timestamps, default time.Now
	// NotFoundSettle is the sandbox's gateway.Windows.NotFoundSettle (default
	// DefaultNotFoundSettle, 30s): it must be longer than the server's Config.NotFoundFor, or a
	// 010 operation would be taken for one never created.
	NotFoundSettle time.Duration
	// LateSuccess is the sandbox's gateway.Windows.LateSuccess (default DefaultLateSuccess,
	// 1h): it must cover the server's Config.LateAfter past Sika's push lifetime, or a 011
	// success would be found by its callback only.
	LateSuccess time.Duration
}

// Defaults of ClientConfig's windows.
const (
	DefaultNotFoundSettle = 30 * time.Second
	DefaultLateSuccess    = time.Hour
)

// Client is the gateway.Gateway adapter of one sandbox gateway.
type Client struct {
	cfg  ClientConfig
	base string // …/gw/{name}/v1
}

var (
	_ gateway.Gateway   = (*Client)(nil)
	_ gateway.Canceller = (*Client)(nil)
	_ gateway.Windowed  = (*Client)(nil)
	_ gateway.Refunder  = (*Client)(nil)
)

// NewClient returns the adapter for the gateway cfg names.
func NewClient(cfg ClientConfig) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NotFoundSettle <= 0 {
		cfg.NotFoundSettle = DefaultNotFoundSettle
	}
	if cfg.LateSuccess <= 0 {
		cfg.LateSuccess = DefaultLateSuccess
	}
	gw := "/gw/" + url.PathEscape(cfg.Name)
	root := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), gw)
	return &Client{cfg: cfg, base: root + gw + "/v1"}
}

// Name returns the gateway's name.
func (c *Client) Name() string { return c.cfg.Name }

// Collect asks the sandbox to debit req.Phone. An operation that already exists under
// req.Reference is answered with its current state, never pushed twice.
func (c *Client) Collect(ctx context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	body := initiationRequest{
		Reference:    req.Reference,
		Amount:       req.Amount.StringFixed(2),
		Currency:     req.Currency,
		Country:      req.Country,
		Network:      req.Network,
		MSISDN:       req.Phone,
		OTP:          req.OTP,
		CustomerName: req.CustomerName,
		Description:  req.Description,
		CallbackURL:  req.CallbackURL,
	}
	var resp statusBody
	if err := c.call(ctx, http.MethodPost, "/collections", body, &resp); err != nil {
		return gateway.CollectResult{}, err
	}
	result := gateway.CollectResult{
		GatewayReference: resp.GatewayReference,
		Status:           resp.Status,
		FailureCode:      resp.FailureCode,
		FailureMessage:   resp.FailureMessage,
	}
	if resp.NextAction != nil {
		result.NextAction = *resp.NextAction
	}
	return result, nil
}

// ConfirmOTP sends the code a post-push OTP network's customer received. A wrong code is a
// Declined(invalid_otp) error; the collection stays PENDING until the third wrong code, so
// read its status to tell a retry-able code from a failed collection. Confirming the right
// code again answers the current state; a collection that awaits no code is
// Invalid(gateway_error); an unknown reference is StatusNotFound, not an error.
func (c *Client) ConfirmOTP(ctx context.Context, reference, otp string) (gateway.OperationStatus, error) {
	return c.status(ctx, http.MethodPost, "/collections/"+url.PathEscape(reference)+"/otp", otpRequest{OTP: otp})
}

// CollectionStatus reads a collection; an unknown reference is StatusNotFound, not an error.
func (c *Client) CollectionStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.status(ctx, http.MethodGet, "/collections/"+url.PathEscape(reference), nil)
}

// CancelCollection asks the sandbox to withdraw a pending collection. It answers the state
// after the cancel: FAILED cancelled when withdrawn; PENDING when refused (011: the customer is
// approving); an operation already final as it stands (a SUCCESS stays SUCCESS). An unknown
// reference, or a 010 one the sandbox does not show yet, is StatusNotFound: nothing was
// cancelled, as with any answer that is not FAILED.
func (c *Client) CancelCollection(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.status(ctx, http.MethodPost, "/collections/"+url.PathEscape(reference)+"/cancel", nil)
}

// Windows are the sandbox's windows: ClientConfig's NotFoundSettle and LateSuccess. The
// sandbox answers NOT_FOUND while it "creates" a 010 operation (Config.NotFoundFor), and pays a
// 011 one after Sika's push lifetime (Config.LateAfter).
func (c *Client) Windows() gateway.Windows {
	return gateway.Windows{NotFoundSettle: c.cfg.NotFoundSettle, LateSuccess: c.cfg.LateSuccess}
}

// Disburse asks the sandbox to credit req.Phone, at most once per req.Reference.
func (c *Client) Disburse(ctx context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	return c.sendOutbound(ctx, "/disbursements", req, "")
}

// sendOutbound initiates a payout, or (collection set) a refund of that collection.
func (c *Client) sendOutbound(ctx context.Context, path string, req gateway.DisburseRequest, collection string) (gateway.OperationStatus, error) {
	body := initiationRequest{
		Reference:           req.Reference,
		Amount:              req.Amount.StringFixed(2),
		Currency:            req.Currency,
		Country:             req.Country,
		Network:             req.Network,
		MSISDN:              req.Phone,
		RecipientName:       req.RecipientName,
		Description:         req.Description,
		CallbackURL:         req.CallbackURL,
		CollectionReference: collection,
	}
	var resp statusBody
	if err := c.call(ctx, http.MethodPost, path, body, &resp); err != nil {
		return gateway.OperationStatus{}, err
	}
	return resp.operationStatus(), nil
}

// DisbursementStatus reads a payout; an unknown reference is StatusNotFound, not an error.
func (c *Client) DisbursementStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.status(ctx, http.MethodGet, "/disbursements/"+url.PathEscape(reference), nil)
}

// Refund asks the sandbox to give req.Amount of the collection sent as
// req.CollectionReference back to its payer, at most once per req.Reference (partial refunds
// are allowed). A collection the sandbox does not know, or one the refunds would exceed, is
// refused with an Invalid error.
func (c *Client) Refund(ctx context.Context, req gateway.RefundRequest) (gateway.OperationStatus, error) {
	return c.sendOutbound(ctx, "/refunds", gateway.DisburseRequest{Reference: req.Reference, Amount: req.Amount, Currency: req.Currency,
		Country: req.Country, Network: req.Network, Phone: req.Phone, Description: req.Description, CallbackURL: req.CallbackURL},
		req.CollectionReference)
}

// RefundStatus reads a refund; an unknown reference is StatusNotFound, not an error.
func (c *Client) RefundStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	return c.status(ctx, http.MethodGet, "/refunds/"+url.PathEscape(reference), nil)
}

// ParseCallback verifies the Sandbox-Signature header of a callback (HMAC-SHA256 with the
// gateway's callback secret, timestamp within 5 minutes) and decodes it. Signature failures
// wrap ErrInvalidSignature.
func (c *Client) ParseCallback(_ context.Context, header http.Header, body []byte) (gateway.Callback, error) {
	if err := verifySignature(header.Get(SignatureHeader), body, c.cfg.CallbackSecret, c.cfg.Now()); err != nil {
		return gateway.Callback{}, fmt.Errorf("sandbox callback: %w", err)
	}
	var cb callbackBody
	if err := json.Unmarshal(body, &cb); err != nil {
		return gateway.Callback{}, fmt.Errorf("sandbox callback: decode body: %w", err)
	}
	switch {
	case cb.Type != kindCollection && cb.Type != kindDisbursement && cb.Type != kindRefund:
		return gateway.Callback{}, fmt.Errorf("sandbox callback: unknown type %q", cb.Type)
	case cb.Status != gateway.StatusPending && !cb.Status.Final():
		return gateway.Callback{}, fmt.Errorf("sandbox callback: unknown status %q", cb.Status)
	case cb.Reference == "":
		return gateway.Callback{}, errors.New("sandbox callback: no reference")
	}
	return gateway.Callback{
		Kind: cb.Type,
		OperationStatus: gateway.OperationStatus{
			Reference:        cb.Reference,
			GatewayReference: cb.GatewayReference,
			Status:           cb.Status,
			FailureCode:      cb.FailureCode,
			FailureMessage:   cb.FailureMessage,
		},
		Trusted: true,
	}, nil
}

// status runs a call that answers an operation's state, turning 404 not_found into
// StatusNotFound.
func (c *Client) status(ctx context.Context, method, path string, in any) (gateway.OperationStatus, error) {
	var resp statusBody
	err := c.call(ctx, method, path, in, &resp)
	switch {
	case errors.Is(err, errOperationNotFound):
		return gateway.OperationStatus{Status: gateway.StatusNotFound}, nil
	case err != nil:
		return gateway.OperationStatus{}, err
	}
	return resp.operationStatus(), nil
}

// errOperationNotFound marks a 404 not_found answer inside the Unavailable error call returns.
var errOperationNotFound = errors.New("no operation with this reference")

// maxResponse bounds the answers read from the sandbox.
const maxResponse = 1 << 20

// call sends one request (in as JSON when not nil), decodes a 2xx answer into out, and
// returns any failure as a gateway error of the right kind.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var payload io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return gateway.Invalid(gateway.FailureGatewayError, "encode request: "+err.Error())
		}
		payload = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, payload)
	if err != nil {
		return gateway.Unavailable(fmt.Errorf("%s %s: %w", c.cfg.Name, path, err))
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	op := c.cfg.Name + " " + method + " " + path
	status, raw, err := gateway.Exchange(c.cfg.HTTPClient, op, req, maxResponse)
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return classifyAnswer(op, status, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return gateway.Ambiguous(fmt.Errorf("%s: decode answer: %w", op, err))
	}
	return nil
}

// classifyAnswer maps a non-2xx answer onto the gateway error taxonomy.
func classifyAnswer(op string, status int, raw []byte) error {
	var body errorBody
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		body.Error.Message = strings.TrimSpace(string(raw[:min(len(raw), 200)]))
	}
	code, message := body.Error.Code, body.Error.Message
	detail := fmt.Errorf("%s: %d %s: %s", op, status, code, message)
	switch {
	case status == http.StatusBadRequest && code == "invalid_number":
		return gateway.Invalid(gateway.FailureInvalidNumber, message)
	case status == http.StatusBadRequest && code == "invalid_otp":
		return gateway.Declined(gateway.FailureInvalidOTP, message)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return gateway.AuthFailed(detail)
	case status == http.StatusNotFound && code == "not_found":
		return gateway.Unavailable(fmt.Errorf("%w: %w", errOperationNotFound, detail))
	}
	if err := gateway.StatusRefusal(status, detail); err != nil {
		return err
	}
	return gateway.Invalid(gateway.FailureGatewayError, fmt.Sprintf("%d %s: %s", status, code, message))
}
