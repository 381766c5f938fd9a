package api

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

func (ps *paymentStack) newLink(t *testing.T, acct *account, body map[string]any) sika.PaymentLink {
	t.Helper()
	r := ps.call(t, "POST", "/api/v1/payment-links/", body, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var l sika.PaymentLink
	r.data(t, &l)
	return l
}

func (ps *paymentStack) linkPay(t *testing.T, l sika.PaymentLink, body map[string]any) *response {
	t.Helper()
	return ps.call(t, "POST", "/api/v1/links/"+l.Slug+"/pay/", body)
}

func beninPayer(phone string) map[string]any {
	return map[string]any{"country": "BJ", "network": "MTN_BJ", "customer_phone": phone, "customer_name": "Koffi"}
}

func TestPaymentLinkCRUD(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)

	l := ps.newLink(t, acct, map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"})
	assert.Equal(t, sika.AmountFixed, l.AmountType, "FIXED by default")
	assert.Equal(t, ps.url+"/l/"+l.Slug+"/", l.URL)
	assert.True(t, l.IsActive)
	assert.Nil(t, l.UsageLimit)
	assert.Equal(t, acct.Merchant.ID, l.Merchant)
	noAmount := ps.newLink(t, acct, map[string]any{"name": "Tip jar", "currency": "XOF"})
	assert.Nil(t, noAmount.Amount, "a FIXED link without amount is accepted")
	twin := ps.newLink(t, acct, map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"})
	assert.NotEqual(t, l.ID, twin.ID, "no idempotency: a double call creates two links")

	r := ps.call(t, "POST", "/api/v1/payment-links/", map[string]any{"amount_type": "SOME", "amount": "abc", "usage_limit": 0}, key...)
	require.Equal(t, http.StatusBadRequest, r.Status)
	for _, f := range []string{"name", "currency", "amount_type", "amount", "usage_limit"} {
		assert.Contains(t, r.fields(), f)
	}
	r = ps.call(t, "POST", "/api/v1/payment-links/", map[string]any{"name": "x", "currency": "XOF"}, acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	assert.Equal(t, http.StatusForbidden, r.Status)

	other := ps.newAccount(t, true)
	path := "/api/v1/payment-links/" + l.ID.String() + "/"
	// merchant is not reassignable: a read-only field, refused when it changes, and nothing changes.
	r = ps.call(t, "PATCH", path, map[string]any{"is_active": false, "merchant": other.Merchant.ID, "usage_limit": 3}, key...)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{"merchant": {sika.MsgReadOnly}}, r.fields())
	var got sika.PaymentLink
	ps.call(t, "GET", path, nil, key...).data(t, &got)
	assert.True(t, got.IsActive, "a refused update changes nothing")
	r = ps.call(t, "PATCH", path, map[string]any{"is_active": false, "usage_limit": 3}, key...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.data(t, &got)
	assert.False(t, got.IsActive)
	assert.Equal(t, acct.Merchant.ID, got.Merchant)
	assert.Equal(t, "T-shirt", got.Name, "PATCH keeps what it does not send")
	require.NotNil(t, got.UsageLimit)
	assert.Equal(t, 3, *got.UsageLimit)
	r = ps.call(t, "PUT", path, map[string]any{"name": "Hoodie", "currency": "XOF", "amount_type": "FREE", "min_amount": "500"}, key...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.data(t, &got)
	assert.Equal(t, "Hoodie", got.Name)
	assert.Equal(t, sika.AmountFree, got.AmountType)
	assert.Nil(t, got.Amount, "PUT resets what it does not send")
	assert.Nil(t, got.UsageLimit)
	assert.True(t, got.IsActive)
	assert.Equal(t, l.Slug, got.Slug)

	var pg struct {
		Count   int
		Results []sika.PaymentLink
	}
	ps.call(t, "GET", "/api/v1/payment-links/", nil, key...).data(t, &pg)
	assert.Equal(t, 3, pg.Count)
	r = ps.call(t, "GET", path, nil, other.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, http.StatusNotFound, r.Status)
	r = ps.call(t, "DELETE", path, nil, other.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, http.StatusNotFound, r.Status)

	r = ps.call(t, "DELETE", path, nil, key...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r = ps.call(t, "GET", path, nil, key...)
	assert.Equal(t, http.StatusNotFound, r.Status)
	r = ps.linkPay(t, l, beninPayer("97000123"))
	assert.Equal(t, http.StatusNotFound, r.Status, "a deleted link's page is gone")
}

func TestPaymentLinkPayments(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)

	fixed := ps.newLink(t, acct, map[string]any{"name": "Ticket", "amount": "2500", "currency": "XOF", "metadata": map[string]any{"event": "gala"}})
	r := ps.linkPay(t, fixed, map[string]any{"country": "BJ", "network": "MTN_BJ", "customer_phone": "97000123", "customer_name": "Koffi", "amount": "1"})
	require.Equal(t, http.StatusBadRequest, r.Status, "a FIXED link refuses another amount: %s", r.Body)
	assert.Equal(t, []string{"The price of this payment link is now 2500.00 XOF: reload the page to see it."}, r.fields()["amount"])
	r = ps.linkPay(t, fixed, map[string]any{"country": "BJ", "network": "MTN_BJ", "customer_phone": "97000123", "customer_name": "Koffi"})
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var p hostedPayment
	r.data(t, &p)
	assert.Equal(t, "2500.00", p.Amount.StringFixed(2), "a FIXED link charges its amount")
	d := ps.final(t, acct, p.ID, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	require.NotNil(t, d.PaymentLink)
	assert.Equal(t, fixed.ID, *d.PaymentLink)
	assert.JSONEq(t, `{"event":"gala"}`, string(d.Metadata))
	var routed int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM events WHERE payment_link_id = $1 AND type = 'transaction.succeeded'`,
		fixed.ID).Scan(&routed))
	assert.Equal(t, 1, routed, "the link's events carry the link, for link-scoped webhook endpoints")
	var slug string
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT payment_link_slug FROM transactions WHERE id = $1`, p.ID).Scan(&slug))
	assert.Equal(t, fixed.Slug, slug, "the slug is on the transaction, for search")
	var polled hostedPayment
	ps.call(t, "GET", "/api/v1/links/"+fixed.Slug+"/payments/"+p.ID.String()+"/", nil).data(t, &polled)
	assert.Equal(t, sika.StatusSuccess, polled.Status)

	free := ps.newLink(t, acct, map[string]any{"name": "Donation", "amount_type": "FREE", "min_amount": "500", "currency": "XOF"})
	body := beninPayer("97000123")
	body["amount"] = "499"
	r = ps.linkPay(t, free, body)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Equal(t, "amount_out_of_range", r.code())
	body["amount"] = "750"
	r = ps.linkPay(t, free, body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.data(t, &p)
	assert.Equal(t, "750.00", p.Amount.StringFixed(2))
	delete(body, "amount")
	r = ps.linkPay(t, free, body)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.fields(), "amount")

	var pg struct {
		Count   int
		Results []sika.Transaction
	}
	ps.call(t, "GET", "/api/v1/payment-links/"+fixed.ID.String()+"/transactions/", nil, key...).data(t, &pg)
	require.Equal(t, 1, pg.Count)
	assert.Equal(t, d.ID, pg.Results[0].ID)
	r = ps.call(t, "GET", "/api/v1/links/"+free.Slug+"/payments/"+d.ID.String()+"/", nil)
	assert.Equal(t, http.StatusNotFound, r.Status, "another link's payment")

	r = ps.call(t, "PATCH", "/api/v1/payment-links/"+fixed.ID.String()+"/", map[string]any{"is_active": false}, key...)
	require.Equal(t, http.StatusOK, r.Status)
	r = ps.linkPay(t, fixed, beninPayer("97000123"))
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "link_inactive", r.code())
}

func TestPaymentLinkUsageLimitUnderConcurrency(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	l := ps.newLink(t, acct, map[string]any{"name": "Limited", "amount": "1000", "currency": "XOF", "usage_limit": 10})
	var mu sync.Mutex
	statuses := map[int]int{}
	codes := map[string]int{}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			r := ps.linkPay(t, l, beninPayer(fmt.Sprintf("970%02d123", i)))
			mu.Lock()
			defer mu.Unlock()
			statuses[r.Status]++
			codes[r.code()]++
		})
	}
	wg.Wait()
	assert.Equal(t, map[int]int{http.StatusCreated: 10, http.StatusConflict: 20}, statuses)
	assert.Equal(t, 20, codes["usage_limit_reached"])
	var n int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE payment_link_id = $1`, l.ID).Scan(&n))
	assert.Equal(t, 10, n, "exactly usage_limit transactions")
	var got sika.PaymentLink
	ps.call(t, "GET", "/api/v1/payment-links/"+l.ID.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &got)
	assert.Equal(t, 10, got.UsageCount)
}

// TestPaymentLinkStartsLimitedPerClientAndPhone: one client address, and one phone number, may
// start only so many payments on a link in a window, so a stranger with the link cannot use up
// its usage_limit with numbers that fail; another client, or the link's other payers, still pay.
func TestPaymentLinkStartsLimitedPerClientAndPhone(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	l := ps.newLink(t, acct, map[string]any{"name": "Limited", "amount": "1000", "currency": "XOF", "usage_limit": 10})
	ts := newTestServer(t, func(c *Config) {
		c.Temporal, c.Gateways, c.WebhookGuard = ps.Server.cfg.Temporal, ps.Server.cfg.Gateways, ps.Server.cfg.WebhookGuard
		c.LinkStartsPerPhone, c.LinkStartsPerClient = 2, 3
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	pay := func(phone, from string) *response {
		return ts.call(t, "POST", "/api/v1/links/"+l.Slug+"/pay/", beninPayer(phone), "X-Forwarded-For", from)
	}
	// One number's payments one after the other (a number has one payment in flight per link):
	// each is declined (…001) before the next.
	for _, from := range []string{"41.138.1.1", "41.138.1.2"} {
		r := pay("97100001", from)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var p hostedPayment
		r.data(t, &p)
		ps.final(t, acct, p.ID, 10*time.Second)
	}
	r := pay("97100001", "41.138.1.3")
	assert.Equal(t, http.StatusTooManyRequests, r.Status, "a third payment for the same number, from anywhere")
	assert.Equal(t, "rate_limited", r.code())
	assert.NotEmpty(t, r.Header.Get("Retry-After"))

	require.Equal(t, http.StatusCreated, pay("97200001", "41.138.2.1").Status)
	require.Equal(t, http.StatusCreated, pay("97300001", "41.138.2.1").Status)
	require.Equal(t, http.StatusCreated, pay("97400001", "41.138.2.1").Status)
	assert.Equal(t, http.StatusTooManyRequests, pay("97500001", "41.138.2.1").Status, "a fourth payment from the same client")
	assert.Equal(t, http.StatusCreated, pay("97500001", "41.138.9.9").Status, "another client pays")

	var count int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE payment_link_id = $1`, l.ID).Scan(&count))
	assert.Equal(t, 6, count, "a refused start writes nothing")
}

// TestPaymentLinkOnePaymentInFlightPerNumber: a customer number has one payment in flight per
// link. A double submit, a replayed form or a second device while the first payment request is
// on the phone answers 409 checkout_payment_in_progress and writes nothing, so the customer is
// not asked (and charged) twice; the link's other customers pay meanwhile, and the number pays
// again once its payment has ended.
func TestPaymentLinkOnePaymentInFlightPerNumber(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	l := ps.newLink(t, acct, map[string]any{"name": "Ticket", "amount": "1000", "currency": "XOF"})

	// …009 answers after about 20 s: the first payment stays PENDING while the others arrive.
	var mu sync.Mutex
	statuses, codes := map[int]int{}, map[string]int{}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			r := ps.linkPay(t, l, beninPayer("97000009"))
			mu.Lock()
			defer mu.Unlock()
			statuses[r.Status]++
			if r.Status != http.StatusCreated {
				codes[r.code()]++
				assert.JSONEq(t, `{"code":"checkout_payment_in_progress","message":"A payment of this payment link from this number is already in progress; wait for its outcome."}`,
					string(r.Env.Error))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, map[int]int{http.StatusCreated: 1, http.StatusConflict: 4}, statuses)
	assert.Equal(t, map[string]int{"checkout_payment_in_progress": 4}, codes)
	var n int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE payment_link_id = $1`, l.ID).Scan(&n))
	assert.Equal(t, 1, n, "a refused payment writes nothing")

	r := ps.linkPay(t, l, beninPayer("97000123"))
	require.Equal(t, http.StatusCreated, r.Status, "another customer of the link pays meanwhile: %s", r.Body)

	r = ps.linkPay(t, l, beninPayer("97100001"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var declined hostedPayment
	r.data(t, &declined)
	assert.Equal(t, sika.StatusFailed, ps.final(t, acct, declined.ID, 10*time.Second).Status)
	r = ps.linkPay(t, l, beninPayer("97100001"))
	assert.Equal(t, http.StatusCreated, r.Status, "the number pays again once its payment ended: %s", r.Body)
}

// TestPaymentLinkRefusesAPriceThePageDidNotShow: the page sends back the price it showed (the
// currency, and a FIXED link's amount); when the merchant changed the link's price while the page
// was open, the payment is refused on the field that changed, naming the new price, and nothing
// is written: the customer is never charged what the page did not show.
func TestPaymentLinkRefusesAPriceThePageDidNotShow(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	l := ps.newLink(t, acct, map[string]any{"name": "Robe", "amount": "1000", "currency": "XOF"})
	resp, err := http.Get(l.URL)
	require.NoError(t, err)
	html, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(html), `data-currency="XOF" data-amount="1000"`, "the page carries the price it shows")
	shown := func(amount, currency string) map[string]any {
		body := beninPayer("97000123")
		body["amount"], body["currency"] = amount, currency
		return body
	}
	patch := func(body map[string]any) {
		r := ps.call(t, "PATCH", "/api/v1/payment-links/"+l.ID.String()+"/", body, key...)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}

	patch(map[string]any{"amount": "5000"})
	r := ps.linkPay(t, l, shown("1000", "XOF"))
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{"amount": {"The price of this payment link is now 5000.00 XOF: reload the page to see it."}}, r.fields())

	patch(map[string]any{"amount": "10", "currency": "EUR"})
	r = ps.linkPay(t, l, shown("1000", "XOF"))
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{
		"amount":   {"The price of this payment link is now 10.00 EUR: reload the page to see it."},
		"currency": {"The price of this payment link is now 10.00 EUR: reload the page to see it."},
	}, r.fields())

	free := ps.newLink(t, acct, map[string]any{"name": "Dons", "amount_type": "FREE", "currency": "XOF"})
	ps.call(t, "PATCH", "/api/v1/payment-links/"+free.ID.String()+"/", map[string]any{"currency": "EUR"}, key...)
	r = ps.linkPay(t, free, shown("1000", "XOF"))
	assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{"currency": {"The price of this payment link is now in EUR: reload the page to see it."}}, r.fields())

	var n int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE payment_link_id IN ($1, $2)`, l.ID, free.ID).Scan(&n))
	assert.Zero(t, n, "a refused price writes nothing")

	r = ps.linkPay(t, l, shown("10.00", "eur"))
	assert.Equal(t, http.StatusCreated, r.Status, "the price the page shows now pays: %s", r.Body)
}

// TestPaymentLinkPageClosedOnceUsedUp: a link that generated its usage_limit transactions says
// so on its page, in the page's language, instead of showing a form the customer fills in to be
// refused; the API answers 409 usage_limit_reached.
func TestPaymentLinkPageClosedOnceUsedUp(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	l := ps.newLink(t, acct, map[string]any{"name": "Dernier billet", "amount": "1000", "currency": "XOF", "usage_limit": 1})
	page := func(query string) string {
		resp, err := http.Get(l.URL + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, page(""), `id="pay-form"`, "open until used")

	r := ps.linkPay(t, l, beninPayer("97000123"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	fr, en := page(""), page("?lang=en")
	assert.NotContains(t, fr, `id="pay-form"`)
	assert.Contains(t, fr, `<p class="notice">Ce lien de paiement a atteint son nombre maximal de paiements.</p>`)
	assert.Contains(t, en, `<p class="notice">This payment link has reached its maximum number of payments.</p>`)
	r = ps.linkPay(t, l, beninPayer("97100123"))
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "usage_limit_reached", r.code())
}

// A link's currency is one Sika takes payments in, and its amounts stay valid in it when only the
// currency changes: otherwise the link is saved and can never be paid.
func TestPaymentLinkCurrencyIsKnownAndFitsItsAmounts(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	create := func(body map[string]any) *response { return ts.call(t, "POST", "/api/v1/payment-links/", body, key...) }

	r := create(map[string]any{"name": "zz", "amount": "10", "currency": "ZZZ"})
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields()["currency"][0], "Unknown currency")
	r = ts.call(t, "POST", "/api/v1/checkout-sessions/", map[string]any{"amount": "1000", "currency": "ZZZ", "customer_email": "ama@example.com", "customer_name": "Ama"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields()["currency"][0], "Unknown currency", "a checkout session too")

	r = create(map[string]any{"name": "eur", "amount": "10.55", "min_amount": "1.50", "amount_type": "FIXED", "currency": "EUR"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var l sika.PaymentLink
	r.data(t, &l)
	path := "/api/v1/payment-links/" + l.ID.String() + "/"
	r = ts.call(t, "PATCH", path, map[string]any{"currency": "XOF"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields()["amount"][0], "whole numbers")
	assert.Contains(t, r.fields()["min_amount"][0], "whole numbers")
	r = ts.call(t, "PATCH", path, map[string]any{"currency": "ZZZ"}, key...)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	var kept sika.PaymentLink
	ts.call(t, "GET", path, nil, key...).data(t, &kept)
	assert.Equal(t, "EUR", kept.Currency, "nothing changed")
	assert.Equal(t, "10.55", sika.FormatAmount(kept.Amount.Decimal))

	r = ts.call(t, "PATCH", path, map[string]any{"currency": "XOF", "amount": "7000", "min_amount": "1000"}, key...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	r = ts.call(t, "PATCH", path, map[string]any{"currency": "EUR"}, key...)
	assert.Equal(t, 200, r.Status, "7000 is an amount in EUR too: %s", r.Body)
}
