// Package sika is a Go client of the Sika merchant API.
//
// Its types and operations are generated from the API's OpenAPI document by oapi-codegen
// (sika.gen.go: one method per operation on ClientWithResponses, one type per schema). The
// hand-written files add what generation cannot:
//
//   - client.go: New, which sends the key (Authorization: Bearer) and the dashboard headers;
//   - transport.go: an Idempotency-Key on every money-moving call that has none, kept on the
//     client's own retries after a network error, a 429 (honouring Retry-After), a 503 or a
//     409 idempotency_key_in_use, with a bounded exponential back-off;
//   - errors.go: every answer that is not 2xx as an *Error carrying the envelope's code, one
//     ErrorCode constant per code of the contract (generated), usable with errors.Is and
//     errors.As, with the field messages of a validation error;
//   - pages.go: iterators (iter.Seq2) over the pages and items of list routes, cursor and
//     page-numbered alike;
//   - webhooks.go: VerifyWebhook, with the Standard Webhooks library.
//
// A first call:
//
//	c, err := sika.New(sika.Options{BaseURL: "http://127.0.0.1:8080/api/v1", APIKey: os.Getenv("SIKA_API_KEY")})
//	resp, err := c.SoftpayWithResponse(ctx, nil, sika.SoftpayJSONRequestBody{
//		Amount: "1000", Currency: "XOF", Country: "BJ", Network: "MTN_BJ",
//		CustomerPhone: "97000123", CustomerName: "Koffi Mensah",
//	})
//	payment := resp.JSON201.Data // PENDING; GET /transactions/{id}/ tells the outcome
package sika

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Client. BaseURL is required; the zero value of every other field is its
// default.
type Options struct {
	// BaseURL is the API's base URL, e.g. "http://127.0.0.1:8080/api/v1" for `make run` (its
	// base_url in .sika/dev.json).
	BaseURL string
	// APIKey is an API key (sk_test_…, sk_live_…) or a dashboard session token from
	// POST /auth/login/, sent as `Authorization: Bearer …`. Empty sends no credentials.
	APIKey string
	// Environment ("TEST" or "LIVE") is sent as X-Environment: dashboard sessions only (the
	// API's default is LIVE; an API key carries its environment).
	Environment Environment
	// MerchantID is sent as X-Merchant-Id: dashboard sessions of a member of several merchants.
	MerchantID string
	// Header is added to every request.
	Header http.Header
	// HTTPClient makes the requests (default: a client with a 60 s timeout). Its Transport
	// sees each try, retries included.
	HTTPClient *http.Client
	// MaxRetries bounds the retries of one call after a network error, a 429, a 503 or a 409
	// idempotency_key_in_use (default 2). DisableRetries turns them off.
	MaxRetries     int
	DisableRetries bool
	// InitialRetryDelay is the first back-off without Retry-After (default 500 ms), doubled per
	// retry with jitter; MaxRetryDelay (default 30 s) caps every wait: a longer Retry-After is
	// not waited for, and the answer is returned as its *Error.
	InitialRetryDelay time.Duration
	MaxRetryDelay     time.Duration
	// IdempotencyKey makes the Idempotency-Key of a money-moving call that has none (default:
	// a random UUID v4).
	IdempotencyKey func() string
}

// Client is a client of the Sika merchant API: the generated ClientWithResponses (one method
// per operation, answering the decoded 2xx body in JSON200/JSON201…) over a transport that
// sends the credentials, gives money-moving calls an Idempotency-Key and retries what is safe
// to retry. Every answer that is not 2xx is returned as an *Error. It is safe for concurrent
// use.
type Client struct {
	*ClientWithResponses

	baseURL *url.URL
	doer    *transport
}

// New answers a Client of the API at o.BaseURL.
func New(o Options) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("sika: BaseURL %q is not an absolute URL", o.BaseURL)
	}
	t := newTransport(o, base)
	// The generated client joins operation paths ("/transactions/") to its server URL.
	raw, err := NewClientWithResponses(base.String()+"/", WithHTTPClient(t))
	if err != nil {
		return nil, fmt.Errorf("sika: %w", err)
	}
	return &Client{ClientWithResponses: raw, baseURL: base, doer: t}, nil
}
