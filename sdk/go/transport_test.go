package sika

// The hand-written layer without the service: how it reads error envelopes and Retry-After,
// and which routes it gives an Idempotency-Key, and which answers it retries (an httptest server
// answering as the API does). The retries are also tested against the service (payments_test.go,
// TestRetriesKeepTheIdempotencyKey).

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
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

// TestKeyInUseIsRetried: a 409 idempotency_key_in_use answers a try whose key an earlier try
// still holds (its answer lost to a timeout, say); the client waits and sends the same request
// again, within the same budget as the other retries, Retry-After honoured. Only with an
// Idempotency-Key, and no other 409.
func TestKeyInUseIsRetried(t *testing.T) {
	inUse := `{"success":false,"error":{"code":"idempotency_key_in_use","message":"A request with this Idempotency-Key is still being processed; retry shortly."}}`
	reused := `{"success":false,"error":{"code":"idempotency_key_reused","message":"This Idempotency-Key was already used with another request body or route."}}`
	created := `{"success":true,"data":{"id":"0b0c5f3e-3c57-4d5a-9d6f-000000000001","status":"PENDING"}}`
	type try struct {
		key, body string
		at        time.Time
	}
	// serve answers the tries with answers in turn (the last one again past the end), each
	// answer a status, a body and an optional Retry-After.
	serve := func(t *testing.T, answers ...[3]string) (*Client, func() []try) {
		var mu sync.Mutex
		var tries []try
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			tries = append(tries, try{r.Header.Get("Idempotency-Key"), string(b), time.Now()})
			a := answers[min(len(tries), len(answers))-1]
			mu.Unlock()
			if a[2] != "" {
				w.Header().Set("Retry-After", a[2])
			}
			w.Header().Set("Content-Type", "application/json")
			status, _ := strconv.Atoi(a[0])
			w.WriteHeader(status)
			_, _ = io.WriteString(w, a[1])
		}))
		t.Cleanup(srv.Close)
		c, err := New(Options{BaseURL: srv.URL + "/api/v1", APIKey: "sk_test_unit", InitialRetryDelay: time.Millisecond, MaxRetries: 2})
		require.NoError(t, err)
		return c, func() []try { mu.Lock(); defer mu.Unlock(); return append([]try(nil), tries...) }
	}
	ctx := context.Background()
	body := SoftpayJSONRequestBody{Amount: "1000", Currency: "XOF", Country: "BJ", Network: "MTN_BJ", CustomerPhone: "97000123", CustomerName: "K"}

	t.Run("retried with the same key and body until the first try's answer", func(t *testing.T) {
		c, tries := serve(t, [3]string{"409", inUse, ""}, [3]string{"409", inUse, "1"}, [3]string{"201", created, ""})
		resp, err := c.SoftpayWithResponse(ctx, nil, body)
		require.NoError(t, err)
		assert.Equal(t, "0b0c5f3e-3c57-4d5a-9d6f-000000000001", resp.JSON201.Data.Id.String())
		got := tries()
		require.Len(t, got, 3)
		assert.NotEmpty(t, got[0].key)
		for _, try := range got[1:] {
			assert.Equal(t, got[0].key, try.key, "one key for every try")
			assert.Equal(t, got[0].body, try.body)
		}
		assert.GreaterOrEqual(t, got[2].at.Sub(got[1].at), time.Second, "Retry-After honoured")
	})
	t.Run("within the retry budget", func(t *testing.T) {
		c, tries := serve(t, [3]string{"409", inUse, ""})
		_, err := c.SoftpayWithResponse(ctx, nil, body)
		assert.ErrorIs(t, err, ErrorCodeIdempotencyKeyInUse)
		assert.Equal(t, 409, asError(t, err).StatusCode)
		assert.Len(t, tries(), 3, "the first try and MaxRetries")
	})
	t.Run("not another 409", func(t *testing.T) {
		c, tries := serve(t, [3]string{"409", reused, ""})
		_, err := c.SoftpayWithResponse(ctx, nil, body)
		e := asError(t, err)
		assert.Equal(t, ErrorCodeIdempotencyKeyReused, e.Code)
		assert.Contains(t, e.Message, "already used", "the body read to tell the code is the error's")
		assert.Len(t, tries(), 1)
	})
	t.Run("not without an Idempotency-Key", func(t *testing.T) {
		c, tries := serve(t, [3]string{"409", inUse, ""})
		_, err := c.CreateCheckoutSessionWithResponse(ctx, nil, CreateCheckoutSessionJSONRequestBody{Amount: "1000", Currency: "XOF", CustomerEmail: "a@b.c", CustomerName: "K"})
		assert.ErrorIs(t, err, ErrorCodeIdempotencyKeyInUse)
		assert.Len(t, tries(), 1)
		assert.Empty(t, tries()[0].key)
	})
	t.Run("not with retries disabled", func(t *testing.T) {
		c, tries := serve(t, [3]string{"409", inUse, ""}, [3]string{"201", created, ""})
		c.doer.maxRetries = 0
		_, err := c.SoftpayWithResponse(ctx, nil, body)
		assert.ErrorIs(t, err, ErrorCodeIdempotencyKeyInUse)
		assert.Len(t, tries(), 1)
	})
}
