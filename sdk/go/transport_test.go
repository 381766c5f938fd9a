package sika

// The hand-written layer without the service: how it reads error envelopes and Retry-After,
// and which routes it gives an Idempotency-Key. The retries themselves are tested against the
// service (payments_test.go, TestRetriesKeepTheIdempotencyKey).

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMoneyMovingRoutes(t *testing.T) {
	base, err := url.Parse("https://api.example/api/v1")
	require.NoError(t, err)
	tr := newTransport(Options{}, base)
	for path, want := range map[string]bool{
		"/api/v1/payments/softpay/":                                         true,
		"/api/v1/payments/softpay/initialize/":                              true,
		"/api/v1/payments/0b0c5f3e-3c57-4d5a-9d6f-000000000001/retry/":      true,
		"/api/v1/payments/0b0c5f3e-3c57-4d5a-9d6f-000000000001/confirm-otp": true,
		"/api/v1/payouts/initialize/":                                       true,
		"/api/v1/settlements/":                                              true,
		"/api/v1/wallet-transfers/":                                         true,
		"/api/v1/checkout-sessions/":                                        false, // the API ignores the key there: no retry of a POST
		"/api/v1/payment-links/":                                            false,
		"/api/v1/payments//retry/":                                          false,
		"/payments/softpay/":                                                false, // not under the base URL
	} {
		assert.Equal(t, want, tr.moneyMoving(path), path)
	}
}

func TestErrorFromResponse(t *testing.T) {
	answer := func(status int, body string, header http.Header) *Error {
		if header == nil {
			header = http.Header{}
		}
		header.Set("X-Request-Id", "req-1")
		return errorFromResponse(&http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(body))})
	}
	e := answer(409, `{"success":false,"error":{"code":"not_pending","message":"Checkout session is PAID, not PENDING."}}`, nil)
	assert.Equal(t, &Error{StatusCode: 409, Code: ErrorCodeNotPending, Message: "Checkout session is PAID, not PENDING.",
		RequestID: "req-1", Header: e.Header}, e)
	assert.ErrorIs(t, e, ErrorCodeNotPending)
	assert.NotErrorIs(t, e, ErrorCodeNotFailed)
	assert.Equal(t, "sika: 409 not_pending: Checkout session is PAID, not PENDING.", e.Error())

	e = answer(400, `{"success":false,"error":{"currency":["Must be exactly 3 characters."],"amount":["This field is required."]}}`, nil)
	assert.Equal(t, CodeValidation, e.Code)
	assert.Equal(t, map[string][]string{"amount": {"This field is required."}, "currency": {"Must be exactly 3 characters."}}, e.Fields)
	assert.Equal(t, "amount: This field is required.; currency: Must be exactly 3 characters.", e.Message)

	e = answer(429, `{"success":false,"error":{"code":"rate_limited","message":"Slow down."}}`, http.Header{"Retry-After": {"7"}})
	assert.Equal(t, 7*time.Second, e.RetryAfter)

	e = answer(502, `<html>Bad gateway</html>`, nil)
	assert.Equal(t, CodeUnexpectedResponse, e.Code)
	assert.Equal(t, 502, e.StatusCode)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 31, 9, 30, 0, 0, time.UTC)
	for value, want := range map[string]time.Duration{
		"3":                             3 * time.Second,
		"0":                             0,
		"Sat, 31 Jan 2026 09:30:05 GMT": 5 * time.Second,
		"Sat, 31 Jan 2026 09:29:00 GMT": 0,
	} {
		got, ok := retryAfter(http.Header{"Retry-After": {value}}, now)
		assert.True(t, ok, value)
		assert.Equal(t, want, got, value)
	}
	for _, value := range []string{"", "soon", "-1"} {
		_, ok := retryAfter(http.Header{"Retry-After": {value}}, now)
		assert.False(t, ok, value)
	}
}

func TestBackoffIsBounded(t *testing.T) {
	tr := newTransport(Options{InitialRetryDelay: 100 * time.Millisecond, MaxRetryDelay: time.Second}, &url.URL{})
	for attempt := range 40 {
		d := tr.backoff(attempt)
		want := min(100*time.Millisecond<<min(attempt, 20), time.Second)
		assert.GreaterOrEqual(t, d, want/2, attempt)
		assert.LessOrEqual(t, d, want, attempt)
	}
}
