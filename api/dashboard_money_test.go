package api

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// dashTestClient is a dashboard client of acct acting in TEST, the sandbox.
func dashTestClient(t *testing.T, base string, acct *account) *dashClient {
	t.Helper()
	c := dashLoggedIn(t, base, acct)
	require.Equal(t, http.StatusSeeOther, c.post(t, "/dashboard/environment/", url.Values{"environment": {"TEST"}}).Status)
	return c
}

// createdID is the id in the Location of a redirect to /dashboard/<kind>/<id>/.
func createdID(t *testing.T, r dashAnswer, kind string) uuid.UUID {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	m := regexp.MustCompile(`^/dashboard/` + kind + `/([0-9a-f-]{36})/`).FindStringSubmatch(r.Header.Get("Location"))
	require.NotNil(t, m, "Location %q", r.Header.Get("Location"))
	return uuid.MustParse(m[1])
}

func TestDashboardHomeVolume(t *testing.T) {
	// The code's clock is fixed, and every row of "today" lies between that day's midnight and
	// it: a run at 00:01 UTC puts no row of today on yesterday.
	clock := &fixedClock{t: time.Now().UTC()}
	ts := newTestServer(t, func(c *Config) { c.Now = clock.now })
	acct := ts.newAccount(t, true)
	now := clock.t
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for i, row := range []*historyRow{
		{Status: sika.StatusSuccess, Requested: "1000.00"},
		{Status: sika.StatusSuccess, Requested: "2500.00"},
		{Status: sika.StatusFailed},
		{Status: sika.StatusPending},
		{Type: sika.TypePayout, Status: sika.StatusSuccess, Requested: "700.00"},
		{Network: "MTN_CM", Status: sika.StatusSuccess, Requested: "3000.00"},
		{Status: sika.StatusSuccess, Requested: "9999.00", CreatedAt: now.AddDate(0, 0, -31)}, // outside the window
	} {
		row.Merchant = acct.Merchant.ID
		if row.CreatedAt.IsZero() {
			row.CreatedAt = now.Add(-now.Sub(midnight) * time.Duration(i) / 10)
		}
		if row.Requested != "" {
			row.ClientFee, row.GatewayFee, row.PlatformFee, row.Debited, row.Net = "0.00", "0.00", "0.00", row.Requested, row.Requested
		}
		insertHistoryRow(t, row)
	}
	other := ts.newAccount(t, true)
	insertHistoryRow(t, &historyRow{Merchant: other.Merchant.ID, CreatedAt: now, Requested: "500000.00", ClientFee: "0.00",
		GatewayFee: "0.00", PlatformFee: "0.00", Debited: "500000.00", Net: "500000.00"})

	c := dashTestClient(t, ts.url, acct)
	home := c.Get(t, "/dashboard/")
	require.Equal(t, http.StatusOK, home.Status, home.Body)
	assert.Contains(t, home.Body, `src="/dashboard/static/vendor/uPlot.iife.min.js"`)
	assert.Contains(t, home.Body, `src="/dashboard/static/money.js"`)
	assert.NotContains(t, home.Body, "<script>", "the chart's data is an attribute, not an inline script")
	m := regexp.MustCompile(`data-volume="([^"]+)"`).FindStringSubmatch(home.Body)
	require.NotNil(t, m)
	var chart chartJSON
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &chart))
	require.Len(t, chart.Series, 2, "XAF and XOF")
	byCurrency := map[string]chartSeriesJSON{}
	for _, s := range chart.Series {
		require.Len(t, s.Days, 30, "every day of the window")
		byCurrency[s.Currency] = s
	}
	today := len(byCurrency["XOF"].Days) - 1
	assert.Equal(t, "3500.00", byCurrency["XOF"].Collected[today], "two successful collections today, not the failed one")
	assert.Equal(t, "700.00", byCurrency["XOF"].PaidOut[today])
	assert.Equal(t, "3\u00a0500\u00a0FCFA", byCurrency["XOF"].CollectedText[today], "the legend is sika.FormatMoney's")
	assert.Equal(t, "3000.00", byCurrency["XAF"].Collected[today])
	for _, s := range chart.Series {
		for i := range s.Days {
			assert.NotEqual(t, "9999.00", s.Collected[i], "31 days ago is outside the window")
			assert.NotEqual(t, "500000.00", s.Collected[i], "another merchant's money")
		}
	}
	assert.Contains(t, home.Body, "id=\"collected-XOF\">3\u00a0500\u00a0FCFA")
	// 3 collections succeeded (XOF twice, XAF once), 1 failed, the PENDING one is not finished.
	assert.Contains(t, home.Body, "75,0\u00a0%")
	assert.Contains(t, home.Body, "(3 / 4")
	en := c.Get(t, "/dashboard/", "Accept-Language", "en")
	assert.Contains(t, en.Body, "75.0%")

	// The aggregate reads an index with the tenancy and the window in its condition, never the
	// whole table. Which of the two indexes that lead with (merchant_id, environment) the planner
	// takes on a table this small depends on its statistics of the moment (in .ci/run it took
	// transactions_network_idx once): either is bounded by the merchant.
	plan := explain(t, `SELECT (t.created_at AT TIME ZONE 'UTC')::date, t.currency, sum(t.requested_amount)
		FROM transactions t WHERE t.merchant_id = $1 AND t.environment = $2 AND t.created_at >= $3 GROUP BY 1, 2`,
		acct.Merchant.ID, sika.EnvironmentTest, now.AddDate(0, 0, -29))
	assert.NotContains(t, plan, "Seq Scan", plan)
	assert.Regexp(t, `(transactions_volume_idx|transactions_network_idx)[\s\S]*Cond: \(\(merchant_id = `, plan)
}

// chartJSON is what money.js reads from data-volume.
type chartJSON struct {
	Lang   string            `json:"lang"`
	Series []chartSeriesJSON `json:"series"`
}

type chartSeriesJSON struct {
	Currency      string   `json:"currency"`
	Days          []int64  `json:"days"`
	Collected     []string `json:"collected"`
	PaidOut       []string `json:"paid_out"`
	CollectedText []string `json:"collected_text"`
}

// explain is Postgres's plan of a query, sequential scans discouraged as on a big table.
func explain(t *testing.T, query string, args ...any) string {
	t.Helper()
	var lines []string
	err := testStore.InTx(context.Background(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		rows, err := tx.Query(context.Background(), "EXPLAIN "+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			lines = append(lines, line)
		}
		return rows.Err()
	})
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

func TestDashboardPaymentLinksAndSessions(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	c := dashTestClient(t, ps.url, acct)

	form := c.Get(t, "/dashboard/payment-links/new/")
	require.Equal(t, http.StatusOK, form.Status, form.Body)
	assert.Contains(t, form.Body, `<option value="XOF" selected>`, "the merchant's currency by default")

	bad := c.post(t, "/dashboard/payment-links/", url.Values{"name": {""}, "amount_type": {"FIXED"}, "amount": {"12.5"}, "currency": {"XOF"}})
	assert.Equal(t, http.StatusBadRequest, bad.Status)
	assert.Contains(t, bad.Body, `id="name-error">Ce champ est obligatoire.`, "the API's field error, in French, beside the field")
	assert.Contains(t, bad.Body, `id="amount-error"`)
	assert.Contains(t, bad.Body, `value="12.5"`, "the form keeps what was typed")

	id := createdID(t, c.post(t, "/dashboard/payment-links/", url.Values{"name": {"Robe wax"}, "amount_type": {"FIXED"},
		"amount": {"5000"}, "currency": {"XOF"}, "country": {"BJ"}, "usage_limit": {"3"}}), "payment-links")
	link, err := testStore.PaymentLinkByID(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, id)
	require.NoError(t, err, "created through the API in the session's environment")
	assert.Equal(t, "5000.00", link.Amount.StringFixed(2))
	page := c.Get(t, "/dashboard/payment-links/"+id.String()+"/?saved=1")
	require.Equal(t, http.StatusOK, page.Status)
	assert.Contains(t, page.Body, `value="`+link.URL+`"`, "the URL to copy")
	assert.Contains(t, page.Body, `data-copy="link-url"`)
	assert.Contains(t, page.Body, "Lien enregistré.")
	assert.Contains(t, c.Get(t, "/dashboard/payment-links/").Body, link.URL)

	r := c.post(t, "/dashboard/payment-links/"+id.String()+"/", url.Values{"name": {"Robe wax bleue"}, "amount_type": {"FIXED"},
		"amount": {"6000"}, "currency": {"XOF"}, "country": {"BJ"}, "usage_limit": {""}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Equal(t, "/dashboard/payment-links/"+id.String()+"/?saved=1", r.Header.Get("Location"), "back to the link's page")
	link, err = testStore.PaymentLinkByID(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, id)
	require.NoError(t, err)
	assert.Equal(t, "Robe wax bleue", link.Name)
	assert.False(t, link.IsActive, "an unchecked box deactivates")
	assert.Nil(t, link.UsageLimit)
	assert.Equal(t, http.StatusBadRequest, c.post(t, "/dashboard/payment-links/"+id.String()+"/", url.Values{"name": {"x"},
		"currency": {"XOF"}, "usage_limit": {"many"}}).Status)

	badSession := c.post(t, "/dashboard/checkout-sessions/", url.Values{"amount": {"2500"}, "currency": {"XOF"},
		"customer_name": {"Awa"}, "customer_email": {"not-an-email"}, "expires_in": {"24h"}})
	assert.Equal(t, http.StatusBadRequest, badSession.Status)
	assert.Contains(t, badSession.Body, "Saisissez une adresse e-mail valide.")
	r = c.post(t, "/dashboard/checkout-sessions/", url.Values{"amount": {"2500"}, "currency": {"XOF"}, "country": {"BJ"},
		"customer_name": {"Awa"}, "customer_email": {"awa@example.com"}, "expires_in": {"1h"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	sessionID := uuid.MustParse(strings.TrimPrefix(r.Header.Get("Location"), "/dashboard/checkout-sessions/?created="))
	sess := ps.session(t, acct, sessionID)
	assert.WithinDuration(t, time.Now().Add(time.Hour), *sess.ExpiresAt, time.Minute)
	list := c.Get(t, r.Header.Get("Location"))
	assert.Contains(t, list.Body, `value="`+sess.CheckoutURL+`"`)
	assert.Contains(t, list.Body, "session-row created")
	r = c.post(t, "/dashboard/checkout-sessions/"+sessionID.String()+"/cancel/", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Equal(t, sika.CheckoutCancelled, ps.session(t, acct, sessionID).Status)
	again := c.post(t, "/dashboard/checkout-sessions/"+sessionID.String()+"/cancel/", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, again.Status)
	assert.Contains(t, html.UnescapeString(again.Body), "Cette opération n'est plus en attente.", "the API's business code, in French")
	assert.Contains(t, again.Body, "not PENDING", "with the API's own message")
}

func TestDashboardPayoutsAndLedger(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "20000")
	c := dashTestClient(t, ps.url, acct)

	page := c.Get(t, "/dashboard/payouts/")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Regexp(t, `<option value="[A-Z]+_BJ" selected>`, page.Body, "a network of the merchant's country first")

	payout := url.Values{"method": {"MTN_BJ"}, "amount": {"1000"}, "recipient": {"97000123"}, "recipient_name": {"Ama"}}
	preview := c.post(t, "/dashboard/payouts/preview/", payout)
	require.Equal(t, http.StatusOK, preview.Status, preview.Body)
	want := ps.quoteFor(t, acct, "1000")
	assert.Contains(t, preview.Body, `id="quote-fee">`+sika.FormatMoney(want.ClientFee, "XOF", "fr"))
	assert.Contains(t, preview.Body, `id="quote-debited">`+sika.FormatMoney(want.DebitedAmount, "XOF", "fr"))
	key := hiddenField(t, preview.Body, "idempotency_key")

	confirm := url.Values{"idempotency_key": {key}}
	for k, v := range payout {
		confirm[k] = v
	}
	first := c.post(t, "/dashboard/payouts/", confirm)
	txID := createdID(t, first, "transactions")
	second := c.post(t, "/dashboard/payouts/", confirm)
	assert.Equal(t, txID, createdID(t, second, "transactions"), "a double submit is one payout")
	tx, err := testStore.TransactionByID(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, txID)
	require.NoError(t, err)
	assert.True(t, want.ClientFee.Equal(tx.ClientFee.Decimal), "the fee shown is the fee charged: %s, %s", want.ClientFee, tx.ClientFee)
	assert.True(t, want.DebitedAmount.Equal(tx.DebitedAmount.Decimal))
	rows, _, err := testStore.ListTransactions(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.TransactionFilter{Type: sika.TypePayout}, store.KeysetRequest{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, rows, 1)

	// Two submits at once (a double click): the second waits for the first and answers the
	// same payout.
	preview = c.post(t, "/dashboard/payouts/preview/", payout)
	confirm = url.Values{"idempotency_key": {hiddenField(t, preview.Body, "idempotency_key")}, "csrf_token": {c.csrf(t)}}
	for k, v := range payout {
		confirm[k] = v
	}
	answers := make(chan dashAnswer, 2)
	for range 2 {
		go func() { answers <- c.Do(t, http.MethodPost, "/dashboard/payouts/", confirm) }()
	}
	a1, a2 := <-answers, <-answers
	assert.Equal(t, createdID(t, a1, "transactions"), createdID(t, a2, "transactions"), "one payout for two submits")
	rows, _, err = testStore.ListTransactions(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.TransactionFilter{Type: sika.TypePayout}, store.KeysetRequest{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, rows, 2, "the first payout and this one")

	change := c.post(t, "/dashboard/payouts/", url.Values{"change": {"1"}, "method": {"MTN_BJ"}, "amount": {"1000"}, "recipient": {"97000123"}})
	assert.Equal(t, http.StatusOK, change.Status)
	assert.Contains(t, change.Body, `id="payout-form"`)

	tooMuch := c.post(t, "/dashboard/payouts/preview/", url.Values{"method": {"MTN_BJ"}, "amount": {"50000"}, "recipient": {"97000123"}})
	require.Equal(t, http.StatusOK, tooMuch.Status, "the price does not depend on the balance")
	confirm = url.Values{"idempotency_key": {hiddenField(t, tooMuch.Body, "idempotency_key")}, "method": {"MTN_BJ"}, "amount": {"50000"}, "recipient": {"97000123"}}
	refused := c.post(t, "/dashboard/payouts/", confirm)
	assert.Equal(t, http.StatusUnprocessableEntity, refused.Status)
	assert.Contains(t, refused.Body, "Solde disponible insuffisant.")
	badPhone := c.post(t, "/dashboard/payouts/preview/", url.Values{"method": {"MTN_BJ"}, "amount": {"1000"}, "recipient": {"12"}})
	assert.Equal(t, http.StatusBadRequest, badPhone.Status)
	assert.Contains(t, badPhone.Body, `id="recipient-error"`)

	wallet := ps.wallet(t, acct)
	ledger := c.Get(t, "/dashboard/wallets/"+wallet.ID.String()+"/ledger/")
	require.Equal(t, http.StatusOK, ledger.Status, ledger.Body)
	assert.Contains(t, ledger.Body, `data-type="PAYOUT_HOLD"`)
	assert.Contains(t, ledger.Body, "Réservation pour un décaissement")
	assert.Contains(t, ledger.Body, sika.FormatMoney(dec("20000"), "XOF", "fr"), "the balance before the hold")
	assert.Contains(t, ledger.Body, sika.FormatMoney(dec("20000").Sub(want.DebitedAmount), "XOF", "fr"), "and after it")
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, txID, 30*time.Second).Status)

	// A payout method, verified by staff, receives a settlement; a transfer moves money to SN.
	r := c.post(t, "/dashboard/payout-methods/", url.Values{"type": {"MOBILE_MONEY"}, "label": {"Mon MTN"}, "network": {"MTN_BJ"}, "phone_number": {"97000456"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	methods, _, err := testStore.ListPayoutMethods(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, methods, 1)
	settlements := c.Get(t, "/dashboard/settlements/")
	settle := url.Values{"idempotency_key": {hiddenField(t, settlements.Body, "idempotency_key")}, "payout_method": {methods[0].ID.String()}, "amount": {"2000"}}
	unverified := c.post(t, "/dashboard/settlements/", settle)
	assert.Equal(t, http.StatusUnprocessableEntity, unverified.Status)
	assert.Contains(t, unverified.Body, "pas encore vérifié")
	vr := ps.call(t, "PATCH", "/api/v1/admin/merchant-payout-methods/"+methods[0].ID.String()+"/", map[string]bool{"is_verified": true}, ps.staff(t)...)
	require.Equal(t, http.StatusOK, vr.Status, "%s", vr.Body)
	settle.Set("idempotency_key", hiddenField(t, c.Get(t, "/dashboard/settlements/").Body, "idempotency_key"))
	settled := createdID(t, c.post(t, "/dashboard/settlements/", settle), "transactions")
	st, err := testStore.TransactionByID(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, settled)
	require.NoError(t, err)
	assert.Equal(t, "2000.00", st.Amount.StringFixed(2))

	transfers := c.Get(t, "/dashboard/wallet-transfers/")
	transfer := url.Values{"idempotency_key": {hiddenField(t, transfers.Body, "idempotency_key")}, "from_country": {"BJ"}, "to_country": {"SN"}, "amount": {"1500"}}
	moved := createdID(t, c.post(t, "/dashboard/wallet-transfers/", transfer), "transactions")
	assert.Equal(t, moved, createdID(t, c.post(t, "/dashboard/wallet-transfers/", transfer), "transactions"), "one transfer per form")
	assert.Contains(t, c.Get(t, "/dashboard/wallet-transfers/").Body, "BJ → SN")
}

// quoteFor is what a 1000 XOF MTN_BJ payout of acct costs, by sika.ComputeFees over the
// effective pricing, as the API prices it.
func (ps *paymentStack) quoteFor(t *testing.T, acct *account, amount string) sika.Fees {
	t.Helper()
	ctx := context.Background()
	n, err := testStore.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	pricing, err := testStore.EffectivePricing(ctx, acct.Merchant.ID, sika.EnvironmentTest, n.ID, sika.DirectionOutbound)
	require.NoError(t, err)
	settings, err := testStore.MerchantSettings(ctx, acct.Merchant.ID, sika.EnvironmentTest)
	require.NoError(t, err)
	fees, err := sika.ComputeFees(sika.DirectionOutbound, dec(amount), "XOF", pricing, settings.EffectiveFeeChargeMode(""))
	require.NoError(t, err)
	require.True(t, fees.ClientFee.IsPositive(), "the default pricing charges payouts")
	return fees
}

func TestDashboardTransactionActions(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	rc := newReceiver(t, 0)
	ps.register(t, acct, rc, nil)
	c := dashTestClient(t, ps.url, acct)

	paid := ps.pay(t, acct, benin("97000123"))
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, paid.ID, 30*time.Second).Status)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		d, err := testStore.TransactionDeliveries(context.Background(), acct.Merchant.ID, sika.EnvironmentTest, paid.ID)
		assert.NoError(ct, err)
		assert.GreaterOrEqual(ct, len(d), 2, "transaction.pending and transaction.succeeded delivered")
	}, 20*time.Second, 100*time.Millisecond)
	detail := c.Get(t, "/dashboard/transactions/"+paid.ID.String()+"/")
	require.Equal(t, http.StatusOK, detail.Status, detail.Body)
	assert.Contains(t, detail.Body, "transaction.succeeded")
	assert.Contains(t, detail.Body, "HTTP 204")
	assert.Contains(t, detail.Body, `id="invoice-link"`)
	assert.NotContains(t, detail.Body, `id="retry-form"`, "a paid payment is not retried")
	other := ps.newAccount(t, true)
	d, err := testStore.TransactionDeliveries(context.Background(), other.Merchant.ID, sika.EnvironmentTest, paid.ID)
	require.NoError(t, err)
	assert.Empty(t, d, "another merchant sees no delivery of it")

	pdf := c.Get(t, "/dashboard/transactions/"+paid.ID.String()+"/invoice/")
	require.Equal(t, http.StatusOK, pdf.Status, pdf.Body)
	assert.Equal(t, "application/pdf", pdf.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(pdf.Body, "%PDF"))
	assert.Contains(t, pdf.Header.Get("Content-Disposition"), paid.Reference)

	declined := ps.pay(t, acct, benin("97000001"))
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, declined.ID, 30*time.Second).Status)
	assert.Equal(t, http.StatusNotFound, c.Get(t, "/dashboard/transactions/"+declined.ID.String()+"/invoice/").Status, "no invoice of a failed payment")
	detail = c.Get(t, "/dashboard/transactions/"+declined.ID.String()+"/")
	require.Contains(t, detail.Body, `id="retry-form"`)
	assert.NotContains(t, detail.Body, `id="invoice-link"`)
	retry := url.Values{"idempotency_key": {hiddenField(t, detail.Body, "idempotency_key")}, "customer_phone": {"97000124"}}
	r := c.post(t, "/dashboard/transactions/"+declined.ID.String()+"/retry/", retry)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Equal(t, "/dashboard/transactions/"+declined.ID.String()+"/?retried=1", r.Header.Get("Location"))
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, declined.ID, 30*time.Second).Status, "the retry at the other number succeeded")
	again := c.post(t, "/dashboard/transactions/"+declined.ID.String()+"/retry/", url.Values{"idempotency_key": {uuid.NewString()}})
	assert.Equal(t, http.StatusUnprocessableEntity, again.Status)
	assert.Contains(t, again.Body, "Seul un paiement échoué peut être relancé.")

	slow := ps.pay(t, acct, benin("97000009")) // SUCCESS after 20 s: PENDING for now
	detail = c.Get(t, "/dashboard/transactions/"+slow.ID.String()+"/")
	require.Contains(t, detail.Body, `id="verify-button"`)
	r = c.post(t, "/dashboard/transactions/"+slow.ID.String()+"/verify/", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Contains(t, c.Get(t, r.Header.Get("Location")).Body, `id="action-notice"`)
}
