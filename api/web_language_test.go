package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web"
	"github.com/sikahq/sika/web/console"
	"github.com/sikahq/sika/web/dashboard"
	"github.com/sikahq/sika/web/webapp"
	"github.com/sikahq/sika/web/webapp/webapptest"
)

// TestPagesSpeakOneLanguage renders every page of the dashboard and of the console, in French
// and in English, with data in them (a payment with the status log the API writes, a refused
// one, a payment link, a checkout session, a wallet, webhook endpoints and events, a KYC
// dossier, a refused form), and fails on text of the other language: a string of the app's
// catalogue in the other language, or a word of webapptest's list (English words on a French
// page, French words and the French space before a colon on an English page). Every GET route
// of both apps is in the walk, so a new page is checked too. So are the hosted pages a customer
// sees (a payment link's and a checkout session's, open with their result screens, closed each
// way, in TEST, and one that does not exist).
func TestPagesSpeakOneLanguage(t *testing.T) {
	ts := newTestServer(t)
	a, b := ts.newAccount(t, true), ts.newAccount(t, true)
	// The status log's reasons as the API and the workflow write them.
	paid := recordCollection(t, a, sika.EnvironmentLive, "1500", "Awa Diop", "Payment requested", sika.StatusSuccess, "Confirmed by sandbox-a").String()
	refused := recordCollection(t, a, sika.EnvironmentLive, "1500", "Awa Diop", "Payment requested", sika.StatusFailed, "Refused by sandbox-a: expired").String()
	link := createdLive(t, ts, a, "/payment-links/", map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"})
	createdLive(t, ts, a, "/checkout-sessions/", map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"})
	dev := newDeveloperSweep(t, ts, a, b)
	wallets, _, err := testStore.ListWallets(t.Context(), a.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 1})
	require.NoError(t, err)
	require.NotEmpty(t, wallets)
	batch := sweepPayoutBatch(t, a, sika.EnvironmentLive)

	dash := map[string]string{ // route template → the page walked
		"/dashboard/":                        "/dashboard/",
		"/dashboard/transactions/":           "/dashboard/transactions/?status=NOPE&search=ab",
		"/dashboard/transactions/{id}/":      "/dashboard/transactions/" + refused + "/",
		"/dashboard/merchants/":              "/dashboard/merchants/",
		"/dashboard/payment-links/":          "/dashboard/payment-links/",
		"/dashboard/payment-links/new/":      "/dashboard/payment-links/new/",
		"/dashboard/payment-links/{id}/":     "/dashboard/payment-links/" + link + "/",
		"/dashboard/checkout-sessions/":      "/dashboard/checkout-sessions/",
		"/dashboard/payouts/":                "/dashboard/payouts/",
		"/dashboard/settlements/":            "/dashboard/settlements/",
		"/dashboard/wallet-transfers/":       "/dashboard/wallet-transfers/",
		"/dashboard/payout-methods/":         "/dashboard/payout-methods/",
		"/dashboard/wallets/{id}/ledger/":    "/dashboard/wallets/" + wallets[0].ID.String() + "/ledger/",
		"/dashboard/transactions/{id}/#paid": "/dashboard/transactions/" + paid + "/",
		"/dashboard/payout-batches/":         "/dashboard/payout-batches/",
		"/dashboard/payout-batches/{id}/":    "/dashboard/payout-batches/" + batch + "/",
		"/dashboard/networks/":               "/dashboard/networks/?country=CI&phone=0707123456",
	}
	for _, r := range dev.routes {
		if r.method == http.MethodGet {
			dash[r.tpl] = r.path
		}
	}
	// Not pages: files, a CSV, a PDF.
	notPages := map[string]bool{"/dashboard/transactions/export/": true, "/dashboard/transactions/{id}/invoice/": true,
		"/dashboard/payout-batches/{id}/results/": true}
	for _, r := range dashboard.New(dashboard.Config{}).Routes() {
		if r.Method == http.MethodGet && !notPages[r.Path] && r.Path != "/dashboard/login/" && !strings.HasPrefix(r.Path, "/dashboard/static/") {
			assert.Contains(t, dash, r.Path, "the dashboard's page %s is not in the walk", r.Path)
		}
	}
	// Forms the API refuses, with their messages beside the fields.
	refusals := map[string]url.Values{
		"/dashboard/developers/ip-whitelist/": {"ip_address": {"not an address"}, "description": {"office"}},
		"/dashboard/developers/webhooks/":     {"url": {"ftp://example.com"}},
		"/dashboard/payment-links/":           {"name": {""}, "currency": {"XOF"}, "amount_type": {"FIXED"}, "amount": {"-1"}},
		"/dashboard/payouts/preview/":         {"method": {"MTN_BJ"}, "amount": {"0"}, "recipient": {"1"}},
	}

	// A money flag on the paid collection, as the reconciliation writes one.
	flag := uuid.NewString()
	_, err = testStore.Pool().Exec(t.Context(), `INSERT INTO money_flags (id, kind, transaction_id, merchant_id, environment, amount, currency, reason)
		VALUES ($1, 'REFUND_DUE', $2, $3, 'LIVE', 1500, 'XOF', 'A second success for the same payment: the customer is owed a refund.')`,
		flag, paid, a.Merchant.ID)
	require.NoError(t, err)
	staff := newStaffNamed(t, sika.StaffAdmin, "Kofi Mensah") // a name in no language's word list
	dossiers, _, err := testStore.ListKYCDossiers(t.Context(), a.Merchant.ID, store.PageRequest{Page: 1, PageSize: 1})
	require.NoError(t, err)
	require.NotEmpty(t, dossiers)
	cons := map[string]string{
		"/console/":                        "/console/?minutes=0",
		"/console/unclear/":                "/console/unclear/?minutes=0",
		"/console/flags/":                  "/console/flags/?all=1",
		"/console/flags/{id}/":             "/console/flags/" + flag + "/",
		"/console/search/":                 "/console/search/?q=nothing-like-it",
		"/console/actions/":                "/console/actions/",
		"/console/transactions/{id}/":      "/console/transactions/" + refused + "/",
		"/console/decisions/":              "/console/decisions/",
		"/console/staff/":                  "/console/staff/",
		"/console/kyc/":                    "/console/kyc/",
		"/console/kyc/{id}/":               "/console/kyc/" + dossiers[0].ID.String() + "/",
		"/console/merchants/":              "/console/merchants/?q=" + url.QueryEscape(a.Merchant.Name),
		"/console/merchants/{id}/":         "/console/merchants/" + a.Merchant.ID.String() + "/",
		"/console/payout-methods/":         "/console/payout-methods/",
		"/console/transactions/{id}/#paid": "/console/transactions/" + paid + "/",
	}
	for _, r := range console.New(console.Config{}).Routes() {
		if r.Method == http.MethodGet && r.Path != "/console/login/" && !strings.HasPrefix(r.Path, "/console/static/") &&
			r.Path != "/console/kyc/files/{sha256}.{ext}" {
			assert.Contains(t, cons, r.Path, "the console's page %s is not in the walk", r.Path)
		}
	}

	hosted := hostedPagesToWalk(t, ts, a)

	for _, lang := range []string{"fr", "en"} {
		t.Run(lang, func(t *testing.T) {
			check := func(t *testing.T, what string, page dashAnswer, cat webapp.Catalogue) {
				t.Helper()
				require.Less(t, page.Status, 500, "%s: %s", what, page.Body)
				require.Contains(t, page.Body, `<html lang="`+lang+`">`, what)
				assert.Empty(t, webapptest.OtherLanguage(page.Body, lang, cat), "%s in %s says this in the other language", what, lang)
			}
			accept := []string{"Accept-Language", lang}
			anon := newDashClient(t, ts.url)
			check(t, "the dashboard's login form", anon.Get(t, "/dashboard/login/", accept...), dashboard.Catalogue())
			check(t, "the console's login form", anon.Get(t, "/console/login/", accept...), console.Catalogue())
			check(t, "a page not found", anon.Get(t, "/dashboard/no-such-page/", accept...), dashboard.Catalogue())

			c := dashLoggedIn(t, ts.url, a)
			require.Equal(t, http.StatusSeeOther, c.post(t, "/dashboard/environment/", url.Values{"environment": {"LIVE"}}).Status)
			for tpl, path := range dash {
				check(t, tpl, c.Get(t, path, accept...), dashboard.Catalogue())
			}
			for path, form := range refusals {
				form.Set("csrf_token", c.csrf(t))
				r := c.Do(t, http.MethodPost, path, form, accept...)
				assert.GreaterOrEqual(t, r.Status, 400, "%s is refused: %s", path, r.Body)
				check(t, "POST "+path, r, dashboard.Catalogue())
			}

			s := newDashClient(t, ts.url)
			require.Equal(t, http.StatusSeeOther, s.consoleLogin(t, staff.Email, "correct horse battery").Status)
			for tpl, path := range cons {
				check(t, tpl, s.Get(t, path, accept...), console.Catalogue())
			}

			for what, path := range hosted {
				check(t, what, anon.Get(t, path, accept...), webapp.Catalogue(web.Catalogue()))
			}
		})
	}
}

// hostedPagesToWalk makes acct's hosted pages in each state a customer may find them: a link of
// a fixed amount and one of a free amount with a minimum, a checkout session, each open (their
// form, and the waiting, code, success and failure screens the script shows); a link switched
// off and sessions paid, expired and cancelled; a TEST page; and a page that does not exist.
func hostedPagesToWalk(t *testing.T, ts *testServer, acct *account) map[string]string {
	t.Helper()
	created := func(env sika.Environment, path string, body map[string]any, out any) {
		r := ts.call(t, "POST", "/api/v1"+path, body, acct.key(env, sika.ScopePayin)...)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		r.data(t, out)
	}
	link := func(env sika.Environment, body map[string]any) sika.PaymentLink {
		var l sika.PaymentLink
		created(env, "/payment-links/", body, &l)
		return l
	}
	session := func(env sika.Environment) sika.CheckoutSession {
		var c sika.CheckoutSession
		created(env, "/checkout-sessions/", map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com",
			"customer_name": "Ama", "customer_phone": "97000123", "country": "BJ", "description": "Commande 42"}, &c)
		return c
	}
	pages := map[string]string{
		"a link of a fixed amount":       "/l/" + link(sika.EnvironmentLive, map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}).Slug + "/",
		"a link of a free amount":        "/l/" + link(sika.EnvironmentLive, map[string]any{"name": "Dons", "amount_type": "FREE", "min_amount": "500", "currency": "XOF"}).Slug + "/",
		"a link in TEST":                 "/l/" + link(sika.EnvironmentTest, map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}).Slug + "/",
		"a checkout session":             "/pay/" + session(sika.EnvironmentLive).Slug + "/",
		"a link that does not exist":     "/l/no-such-link/",
		"a checkout session that is not": "/pay/no-such-session/",
	}
	off := link(sika.EnvironmentLive, map[string]any{"name": "Robe", "amount": "5000", "currency": "XOF"})
	r := ts.call(t, "PATCH", "/api/v1/payment-links/"+off.ID.String()+"/", map[string]any{"is_active": false}, acct.key(sika.EnvironmentLive, sika.ScopePayin)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	pages["a link switched off"] = "/l/" + off.Slug + "/"
	for _, status := range []sika.CheckoutStatus{sika.CheckoutPaid, sika.CheckoutExpired, sika.CheckoutCancelled} {
		c := session(sika.EnvironmentLive)
		_, err := testStore.Pool().Exec(t.Context(), `UPDATE checkout_sessions SET status = $2 WHERE id = $1`, c.ID, string(status))
		require.NoError(t, err)
		pages["a checkout session "+string(status)] = "/pay/" + c.Slug + "/"
	}
	return pages
}
