package api

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/sandbox"
)

// newSession creates a checkout session with a TEST PAYIN key; extra fields override the
// defaults.
func (ps *paymentStack) newSession(t *testing.T, acct *account, extra map[string]any) sika.CheckoutSession {
	t.Helper()
	body := map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama Owusu"}
	for k, v := range extra {
		body[k] = v
	}
	r := ps.call(t, "POST", "/api/v1/checkout-sessions/", body, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var c sika.CheckoutSession
	r.data(t, &c)
	return c
}

func (ps *paymentStack) session(t *testing.T, acct *account, id uuid.UUID) sika.CheckoutSession {
	t.Helper()
	var c sika.CheckoutSession
	ps.call(t, "GET", "/api/v1/checkout-sessions/"+id.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &c)
	return c
}

// hostedPay posts the hosted page's payment of a session.
func (ps *paymentStack) hostedPay(t *testing.T, c sika.CheckoutSession, body map[string]any) *response {
	t.Helper()
	return ps.call(t, "POST", "/api/v1/checkout/"+c.Slug+"/pay/", body)
}

func togo(phone string) map[string]any {
	return map[string]any{"country": "TG", "network": "MOOV_TG", "customer_phone": phone}
}

// sessionEvents counts a session's events by type.
func sessionEvents(t *testing.T, id uuid.UUID) map[string]int {
	t.Helper()
	rows, err := testStore.Pool().Query(t.Context(), `SELECT type FROM events WHERE payload->'data'->>'id' = $1`, id.String())
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var typ string
		require.NoError(t, rows.Scan(&typ))
		out[typ]++
	}
	return out
}

func TestCheckoutSessionCreate(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	before := time.Now()

	r := ps.call(t, "POST", "/api/v1/checkout-sessions/", map[string]any{"amount": "5000", "currency": "xof",
		"customer_email": "ama@example.com", "customer_name": "Ama"}, append(key, "Idempotency-Key", "same")...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var raw map[string]any
	r.data(t, &raw)
	assert.Equal(t, "", raw["fee_charge_mode"], "fee_charge_mode is in the creation answer")
	assert.Equal(t, "", raw["return_url"])
	assert.Equal(t, "", raw["customer_phone"])
	assert.Equal(t, map[string]any{}, raw["metadata"])
	assert.Equal(t, "PENDING", raw["status"])
	assert.Equal(t, "5000.00", raw["amount"])
	assert.Equal(t, "XOF", raw["currency"])
	var c sika.CheckoutSession
	r.data(t, &c)
	assert.Equal(t, ps.url+"/pay/"+c.Slug+"/", c.CheckoutURL)
	require.NotNil(t, c.ExpiresAt)
	assert.WithinDuration(t, before.Add(24*time.Hour), *c.ExpiresAt, time.Minute, "24 hours by default")
	assert.Nil(t, c.Transaction)
	assert.Nil(t, c.PaidAt)

	// Idempotency-Key is ignored: the same key creates a second session.
	r = ps.call(t, "POST", "/api/v1/checkout-sessions/", map[string]any{"amount": "5000", "currency": "XOF",
		"customer_email": "ama@example.com", "customer_name": "Ama"}, append(key, "Idempotency-Key", "same")...)
	require.Equal(t, http.StatusCreated, r.Status)
	var second sika.CheckoutSession
	r.data(t, &second)
	assert.NotEqual(t, c.ID, second.ID)

	full := ps.newSession(t, acct, map[string]any{"description": "Order 7", "country": "bj", "customer_phone": "97000123",
		"return_url": "https://shop.example.com/done", "metadata": map[string]any{"order": 7}, "fee_charge_mode": "ADD_ON",
		"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	assert.Equal(t, "BJ", full.Country)
	assert.Equal(t, "+22997000123", full.CustomerPhone)
	assert.Equal(t, "https://shop.example.com/done", full.ReturnURL)
	assert.JSONEq(t, `{"order":7}`, string(full.Metadata))
	for _, phone := range []string{"+229 97 00 01 23", "97000123"} {
		noCountry := ps.newSession(t, acct, map[string]any{"customer_phone": phone})
		assert.Equal(t, phone, noCountry.CustomerPhone, "without a country the number is kept as typed, read in the country the customer picks")
	}

	// Detail and list never show fee_charge_mode.
	r = ps.call(t, "GET", "/api/v1/checkout-sessions/"+full.ID.String()+"/", nil, key...)
	require.Equal(t, http.StatusOK, r.Status)
	raw = nil
	r.data(t, &raw)
	assert.NotContains(t, raw, "fee_charge_mode")

	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"empty", map[string]any{}, []string{"amount", "currency", "customer_email", "customer_name"}},
		{"bad values", map[string]any{"amount": "-1", "currency": "XO", "customer_email": "nope", "customer_name": "A",
			"country": "BEN", "return_url": "not a url", "fee_charge_mode": "HALF", "metadata": []int{1}},
			[]string{"amount", "currency", "customer_email", "country", "return_url", "fee_charge_mode", "metadata"}},
		{"a number no country reads", map[string]any{"amount": "1", "currency": "XOF", "customer_email": "a@example.com", "customer_name": "A",
			"customer_phone": "<b>abc</b>"}, []string{"customer_phone"}},
		{"a number too short for any country", map[string]any{"amount": "1", "currency": "XOF", "customer_email": "a@example.com", "customer_name": "A",
			"customer_phone": "123"}, []string{"customer_phone"}},
		{"expires too soon", map[string]any{"amount": "1", "currency": "XOF", "customer_email": "a@example.com", "customer_name": "A",
			"expires_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, []string{"expires_at"}},
		{"expires too late", map[string]any{"amount": "1", "currency": "XOF", "customer_email": "a@example.com", "customer_name": "A",
			"expires_at": time.Now().Add(8 * 24 * time.Hour).UTC().Format(time.RFC3339)}, []string{"expires_at"}},
		{"expires not a date", map[string]any{"amount": "1", "currency": "XOF", "customer_email": "a@example.com", "customer_name": "A",
			"expires_at": "tomorrow"}, []string{"expires_at"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ps.call(t, "POST", "/api/v1/checkout-sessions/", tc.body, key...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
			got := r.fields()
			for _, f := range tc.fields {
				assert.Contains(t, got, f)
			}
		})
	}

	r = ps.call(t, "POST", "/api/v1/checkout-sessions/", map[string]any{"amount": "1", "currency": "XOF",
		"customer_email": "a@example.com", "customer_name": "A"}, acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	assert.Equal(t, http.StatusForbidden, r.Status)
	assert.Equal(t, "api_key_scope_forbidden", r.code())
}

func TestCheckoutSessionListDetailCancel(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	a := ps.newSession(t, acct, nil)
	b := ps.newSession(t, acct, map[string]any{"currency": "EUR", "amount": "10.50"})
	c := ps.newSession(t, acct, nil)

	var pg struct {
		Count   int
		Next    *string
		Results []sika.CheckoutSession
	}
	ps.call(t, "GET", "/api/v1/checkout-sessions/?page_size=2", nil, key...).data(t, &pg)
	assert.Equal(t, 3, pg.Count)
	require.Len(t, pg.Results, 2)
	assert.Equal(t, c.ID, pg.Results[0].ID, "newest first")
	assert.NotNil(t, pg.Next)
	ps.call(t, "GET", "/api/v1/checkout-sessions/?currency=eur", nil, key...).data(t, &pg)
	require.Equal(t, 1, pg.Count)
	assert.Equal(t, b.ID, pg.Results[0].ID)
	r := ps.call(t, "GET", "/api/v1/checkout-sessions/?status=OPEN", nil, key...)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.fields(), "status")

	r = ps.call(t, "POST", "/api/v1/checkout-sessions/"+a.ID.String()+"/cancel/", nil, key...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var cancelled map[string]any
	r.data(t, &cancelled)
	assert.Equal(t, "CANCELLED", cancelled["status"])
	assert.NotContains(t, cancelled, "fee_charge_mode")
	r = ps.call(t, "POST", "/api/v1/checkout-sessions/"+a.ID.String()+"/cancel/", nil, key...)
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "not_pending", r.code())
	assert.Contains(t, string(r.Env.Error), "CANCELLED")
	assert.Equal(t, map[string]int{"checkout_session.cancelled": 1}, sessionEvents(t, a.ID))

	ps.call(t, "GET", "/api/v1/checkout-sessions/?status=CANCELLED", nil, key...).data(t, &pg)
	require.Equal(t, 1, pg.Count)
	assert.Equal(t, a.ID, pg.Results[0].ID)

	other := ps.newAccount(t, true)
	for _, path := range []string{"/api/v1/checkout-sessions/" + b.ID.String() + "/", "/api/v1/checkout-sessions/" + uuid.NewString() + "/", "/api/v1/checkout-sessions/nope/"} {
		r := ps.call(t, "GET", path, nil, other.key(sika.EnvironmentTest, sika.ScopePayin)...)
		assert.Equal(t, http.StatusNotFound, r.Status, path)
	}
	r = ps.call(t, "POST", "/api/v1/checkout-sessions/"+b.ID.String()+"/cancel/", nil, other.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, http.StatusNotFound, r.Status)
	r = ps.call(t, "GET", "/api/v1/checkout-sessions/"+b.ID.String()+"/", nil, acct.key(sika.EnvironmentLive, sika.ScopePayin)...)
	assert.Equal(t, http.StatusNotFound, r.Status, "a TEST session is invisible to LIVE keys")
	for _, m := range []string{"PATCH", "PUT", "DELETE"} {
		r := ps.call(t, m, "/api/v1/checkout-sessions/"+b.ID.String()+"/", map[string]any{}, key...)
		assert.Equal(t, http.StatusMethodNotAllowed, r.Status, m)
	}
}

func TestCheckoutSessionPaidOnHostedPayment(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	c := ps.newSession(t, acct, map[string]any{"country": "BJ", "metadata": map[string]any{"cart": "c-1"}})

	r := ps.call(t, "GET", "/api/v1/checkout/"+c.Slug+"/status/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.JSONEq(t, `{"status":"PENDING","expires_at":"`+c.ExpiresAt.Format(time.RFC3339Nano)+`","paid_at":null,"transaction":null}`, string(r.Env.Data))

	r = ps.hostedPay(t, c, map[string]any{"network": "MTN_BJ", "customer_phone": "97000123"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var p hostedPayment
	r.data(t, &p)
	assert.Equal(t, "ussd_push", string(p.NextAction.Type))
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	require.NotNil(t, d.CheckoutSession)
	assert.Equal(t, c.ID, *d.CheckoutSession)
	assert.JSONEq(t, `{"cart":"c-1"}`, string(d.Metadata), "the session's metadata goes on the transaction")
	assert.Equal(t, "Ama Owusu", d.CustomerName)

	var slug string
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT checkout_session_slug FROM transactions WHERE id = $1`, p.ID).Scan(&slug))
	assert.Equal(t, c.Slug, slug, "the slug is on the transaction, for search")

	got := ps.session(t, acct, c.ID)
	assert.Equal(t, sika.CheckoutPaid, got.Status)
	require.NotNil(t, got.Transaction)
	assert.Equal(t, p.ID, *got.Transaction)
	assert.NotNil(t, got.PaidAt)
	assert.Equal(t, map[string]int{"checkout_session.paid": 1}, sessionEvents(t, c.ID))

	var view checkoutStatusView
	ps.call(t, "GET", "/api/v1/checkout/"+c.Slug+"/status/", nil).data(t, &view)
	assert.Equal(t, sika.CheckoutPaid, view.Status)
	require.NotNil(t, view.Transaction)
	assert.Equal(t, sika.StatusSuccess, view.Transaction.Status)

	r = ps.hostedPay(t, c, map[string]any{"network": "MTN_BJ", "customer_phone": "97000123"})
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "session_not_payable", r.code())
	r = ps.call(t, "GET", "/api/v1/checkout/nope/status/", nil)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

// TestHostedCheckoutPageMasksThePhone: the hosted page, public to whoever holds its link, shows
// only a mask of the number the merchant gave; left empty, the payment uses the stored number.
func TestHostedCheckoutPageMasksThePhone(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	c := ps.newSession(t, acct, map[string]any{"country": "BJ", "customer_phone": "97000123"})

	resp, err := http.Get(c.CheckoutURL)
	require.NoError(t, err)
	html, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	page := string(html)
	assert.False(t, strings.Contains(page, "97000123") || strings.Contains(page, "7000123"), "the number is not on the page")
	assert.True(t, strings.Contains(page, "229*****123"), "its mask is")
	assert.False(t, regexp.MustCompile(`id="customer_phone"[^>]*required`).MatchString(page), "the field may be left empty")

	r := ps.hostedPay(t, c, map[string]any{"network": "MTN_BJ"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var p hostedPayment
	r.data(t, &p)
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, "+22997000123", d.CustomerPhone, "the stored number pays")

	blank := ps.newSession(t, acct, map[string]any{"country": "BJ"})
	resp, err = http.Get(blank.CheckoutURL)
	require.NoError(t, err)
	html, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.True(t, regexp.MustCompile(`id="customer_phone"[^>]*required`).Match(html), "without a stored number the field is required")
}

// TestCheckoutSessionOnePaymentInFlight: while a payment of a session is PENDING, another one
// (a second customer, the same customer on another device) answers 409
// checkout_payment_in_progress, also when they arrive together; the session is paid once and
// only that payment is credited.
func TestCheckoutSessionOnePaymentInFlight(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	c := ps.newSession(t, acct, nil)

	r := ps.hostedPay(t, c, togo("90000123"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var first hostedPayment
	r.data(t, &first)
	assert.Equal(t, "otp_confirmation", string(first.NextAction.Type), "the payment waits for the customer's code")

	r = ps.hostedPay(t, c, togo("90000456"))
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.False(t, r.Env.Success)
	assert.Equal(t, "checkout_payment_in_progress", r.code())
	assert.JSONEq(t, `{"code":"checkout_payment_in_progress","message":"A payment for this checkout session is already in progress; wait for its outcome."}`,
		string(r.Env.Error), "the contract's error envelope")

	// Two customers pressing Pay together on a fresh session: one payment.
	raced := ps.newSession(t, acct, nil)
	statuses := make([]int, 6)
	codes := make([]string, len(statuses))
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			r := ps.hostedPay(t, raced, togo("90000123"))
			statuses[i], codes[i] = r.Status, r.code()
		})
	}
	wg.Wait()
	createdCount := 0
	for i, status := range statuses {
		if status == http.StatusCreated {
			createdCount++
			continue
		}
		assert.Equal(t, http.StatusConflict, status)
		assert.Equal(t, "checkout_payment_in_progress", codes[i])
	}
	assert.Equal(t, 1, createdCount, "one payment of a session in flight: %v", statuses)
	var inFlight int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE checkout_session_id = $1`, raced.ID).Scan(&inFlight))
	assert.Equal(t, 1, inFlight)

	// The first payment succeeds: the session is PAID once, one collection is credited, and
	// the page takes no more payments.
	r = ps.call(t, "POST", "/api/v1/checkout/"+c.Slug+"/confirm-otp/", map[string]any{"transaction": first.ID, "otp": sandbox.ValidOTP})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, first.ID, 10*time.Second).Status)
	got := ps.session(t, acct, c.ID)
	assert.Equal(t, sika.CheckoutPaid, got.Status)
	require.NotNil(t, got.Transaction)
	assert.Equal(t, first.ID, *got.Transaction)
	assert.Equal(t, map[string]int{"checkout_session.paid": 1}, sessionEvents(t, c.ID), "PAID exactly once")
	credited := 0
	for _, e := range ps.ledger(t, acct) {
		if e.Type == sika.LedgerCollection {
			credited++
		}
	}
	assert.Equal(t, 1, credited, "only the payment in flight is credited")
	r = ps.hostedPay(t, c, togo("90000123"))
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "session_not_payable", r.code())
}

// TestCheckoutSessionPaysAgainAfterAFailure: a failed payment leaves the session payable; the
// merchant's retry of that failed payment while the customer's new one is in flight is refused
// and changes nothing.
func TestCheckoutSessionPaysAgainAfterAFailure(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	c := ps.newSession(t, acct, map[string]any{"country": "BJ"})

	r := ps.hostedPay(t, c, map[string]any{"network": "MTN_BJ", "customer_phone": "97000001"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var failed hostedPayment
	r.data(t, &failed)
	before := ps.final(t, acct, failed.ID, 10*time.Second)
	require.Equal(t, sika.StatusFailed, before.Status, "the sandbox declines ...001")

	r = ps.hostedPay(t, c, togo("90000123"))
	require.Equal(t, http.StatusCreated, r.Status, "a session whose payment failed is paid again: %s", r.Body)
	var second hostedPayment
	r.data(t, &second)

	r = ps.call(t, "POST", "/api/v1/payments/"+failed.ID.String()+"/retry/", nil, key...)
	assert.NotEqual(t, http.StatusCreated, r.Status, "a retry would put a second payment of the session in flight")
	assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "checkout_payment_in_progress", r.code())
	d := ps.detail(t, acct, failed.ID)
	assert.Equal(t, sika.StatusFailed, d.Status, "the refused retry changed nothing")
	assert.Len(t, d.Attempts, len(before.Attempts))
	assert.Len(t, d.StatusLogs, len(before.StatusLogs))
	assert.Equal(t, sika.StatusPending, ps.detail(t, acct, second.ID).Status)
}

func TestCheckoutSessionLatePayments(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)

	t.Run("cancelled before the payment succeeded", func(t *testing.T) {
		c := ps.newSession(t, acct, nil)
		r := ps.hostedPay(t, c, togo("90000123"))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var p hostedPayment
		r.data(t, &p)
		r = ps.call(t, "POST", "/api/v1/checkout-sessions/"+c.ID.String()+"/cancel/", nil, key...)
		require.Equal(t, http.StatusOK, r.Status)
		r = ps.call(t, "POST", "/api/v1/checkout/"+c.Slug+"/confirm-otp/", map[string]any{"transaction": p.ID, "otp": sandbox.ValidOTP})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		d := ps.final(t, acct, p.ID, 10*time.Second)
		assert.Equal(t, sika.StatusSuccess, d.Status, "the customer paid: the transaction is recorded")
		got := ps.session(t, acct, c.ID)
		assert.Equal(t, sika.CheckoutCancelled, got.Status)
		assert.Nil(t, got.Transaction)
		assert.Equal(t, map[string]int{"checkout_session.cancelled": 1}, sessionEvents(t, c.ID))
		r = ps.hostedPay(t, c, togo("90000123"))
		assert.Equal(t, http.StatusConflict, r.Status)
		assert.Equal(t, "session_not_payable", r.code())
	})
	t.Run("expired before the payment succeeded", func(t *testing.T) {
		c := ps.newSession(t, acct, map[string]any{"expires_at": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
		r := ps.hostedPay(t, c, togo("90000123"))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var p hostedPayment
		r.data(t, &p)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			assert.Equal(ct, sika.CheckoutExpired, ps.session(t, acct, c.ID).Status)
		}, settle, 50*time.Millisecond, "the expiry workflow expires the session")
		r = ps.call(t, "POST", "/api/v1/checkout/"+c.Slug+"/confirm-otp/", map[string]any{"transaction": p.ID, "otp": sandbox.ValidOTP})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 10*time.Second).Status)
		assert.Equal(t, sika.CheckoutExpired, ps.session(t, acct, c.ID).Status)
		assert.Equal(t, map[string]int{"checkout_session.expired": 1}, sessionEvents(t, c.ID))
	})
}

func TestCheckoutSessionExpires(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	c := ps.newSession(t, acct, map[string]any{"expires_at": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, sika.CheckoutExpired, ps.session(t, acct, c.ID).Status)
	}, settle, 50*time.Millisecond)
	assert.Equal(t, map[string]int{"checkout_session.expired": 1}, sessionEvents(t, c.ID))
	r := ps.hostedPay(t, c, map[string]any{"network": "MTN_BJ", "country": "BJ", "customer_phone": "97000123"})
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "session_not_payable", r.code())
	r = ps.call(t, "POST", "/api/v1/checkout-sessions/"+c.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "not_pending", r.code())
	assert.Contains(t, string(r.Env.Error), "EXPIRED")
}

// TestSlugThatCannotBeStoredIsNotFound: a slug Postgres cannot hold (a NUL byte, bytes that
// are not UTF-8) finds nothing on every public slug route, hosted pages included; it was a 500
// (SQLSTATE 22021), found by TestContractProperties with /checkout/%00/pay/.
func TestSlugThatCannotBeStoredIsNotFound(t *testing.T) {
	ps := payments(t)
	body := map[string]any{"network": "MTN_BJ", "customer_phone": "97000123"}
	for _, slug := range []string{"%00", "abc%00def", "%FF%FE"} {
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/api/v1/checkout/" + slug + "/status/"},
			{http.MethodPost, "/api/v1/checkout/" + slug + "/pay/"},
			{http.MethodPost, "/api/v1/checkout/" + slug + "/confirm-otp/"},
			{http.MethodPost, "/api/v1/links/" + slug + "/pay/"},
			{http.MethodPost, "/api/v1/links/" + slug + "/confirm-otp/"},
			{http.MethodGet, "/pay/" + slug + "/"},
			{http.MethodGet, "/l/" + slug + "/"},
		} {
			var r *response
			if c.method == http.MethodGet {
				r = ps.call(t, c.method, c.path, nil)
			} else {
				r = ps.call(t, c.method, c.path, body)
			}
			assert.Equal(t, http.StatusNotFound, r.Status, "%s %s: %s", c.method, c.path, r.Body)
		}
	}
}
