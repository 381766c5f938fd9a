package sika

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// delivery is one request a webhook endpoint received.
type delivery struct {
	header http.Header
	body   []byte
}

// TestWebhookReceivedAndVerified registers a local endpoint, makes a payment, and verifies the
// transaction.succeeded delivery the service signs.
func TestWebhookReceivedAndVerified(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	var mu sync.Mutex
	var deliveries []delivery
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		deliveries = append(deliveries, delivery{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer endpoint.Close()

	session := dashboard(t, ctx, dev, dev.Merchant.Email, dev.Merchant.Password, Options{})
	created, err := session.CreateWebhookWithResponse(ctx, nil, CreateWebhookJSONRequestBody{Url: endpoint.URL + "/webhooks", Description: ptr("sdk/go test")})
	require.NoError(t, err)
	hook := created.JSON201.Data
	defer func() {
		_, err := session.DeleteWebhookWithResponse(ctx, hook.Id, nil)
		assert.NoError(t, err)
	}()
	assert.True(t, strings.HasPrefix(hook.SigningSecret, "whsec_"))

	c := client(t, dev, Options{})
	resp, err := c.SoftpayWithResponse(ctx, nil, softpayBody("123"))
	require.NoError(t, err)
	payment := resp.JSON201.Data
	require.Equal(t, TransactionStatusSUCCESS, final(t, ctx, c, payment.Id).Status)

	var got *Event
	var raw delivery
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, d := range deliveries {
			e, err := VerifyWebhook(hook.SigningSecret, d.body, d.header)
			if !assert.NoError(t, err) {
				return false
			}
			var tx Transaction
			require.NoError(t, e.DecodeData(&tx))
			if e.Type == EventTypeTransactionSucceeded && tx.Id == payment.Id {
				got, raw = e, d
				return true
			}
		}
		return false
	}, 2*time.Minute, 100*time.Millisecond, "transaction.succeeded delivered (within two minutes: the worker may have a queue on a busy machine)")
	assert.Equal(t, EnvironmentTEST, got.Environment)
	assert.Equal(t, got.Id, raw.header.Get("webhook-id"), "webhook-id is the event id: dedupe on it")
	var tx Transaction
	require.NoError(t, got.DecodeData(&tx))
	assert.Equal(t, TransactionStatusSUCCESS, tx.Status)

	// A tampered body, or another secret, does not verify.
	_, err = VerifyWebhook(hook.SigningSecret, []byte(strings.Replace(string(raw.body), `"SUCCESS"`, `"FAILED"`, 1)), raw.header)
	assert.ErrorIs(t, err, ErrWebhookVerification)
	_, err = VerifyWebhook("whsec_"+strings.Repeat("A", 43)+"=", raw.body, raw.header)
	assert.ErrorIs(t, err, ErrWebhookVerification)

	// The event log has it too.
	logged, err := session.GetEventWithResponse(ctx, got.Id, nil)
	require.NoError(t, err)
	assert.Equal(t, EventTypeTransactionSucceeded, logged.JSON200.Data.Type)
}

// TestVerifyWebhook checks VerifyWebhook on deliveries signed here with the Standard Webhooks
// library: two signatures (a rotation), a stale timestamp, a missing header.
func TestVerifyWebhook(t *testing.T) {
	secret, other := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_"+strings.Repeat("B", 43)+"="
	body := []byte(`{"id":"evt_1","type":"transaction.succeeded","created_at":"2026-01-31T09:30:00Z","environment":"TEST","data":{"id":"x"}}`)
	sign := func(secret string, at time.Time) string {
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		s, err := wh.Sign("evt_1", at, body)
		require.NoError(t, err)
		return s
	}
	header := func(at time.Time, signatures ...string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", "evt_1")
		h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		h.Set("webhook-signature", strings.Join(signatures, " "))
		return h
	}
	now := time.Now()
	e, err := VerifyWebhook(secret, body, header(now, sign(secret, now)))
	require.NoError(t, err)
	assert.Equal(t, "evt_1", e.Id)
	assert.Equal(t, EventTypeTransactionSucceeded, e.Type)

	_, err = VerifyWebhook(secret, body, header(now, sign(other, now), sign(secret, now)))
	assert.NoError(t, err, "either signature of a rotation verifies")
	_, err = VerifyWebhook(secret, body, header(now, sign(other, now)))
	assert.ErrorIs(t, err, ErrWebhookVerification)
	stale := now.Add(-10 * time.Minute)
	_, err = VerifyWebhook(secret, body, header(stale, sign(secret, stale)))
	assert.ErrorIs(t, err, ErrWebhookVerification)
	assert.True(t, errors.Is(err, standardwebhooks.ErrMessageTooOld), "the library's reason is kept: %v", err)
	h := header(now, sign(secret, now))
	h.Del("webhook-id")
	_, err = VerifyWebhook(secret, body, h)
	assert.ErrorIs(t, err, ErrWebhookVerification)
	_, err = VerifyWebhook("not base64 !", body, header(now, sign(secret, now)))
	assert.ErrorIs(t, err, ErrWebhookVerification)
}
