package api

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/dashboard"
	"github.com/sikahq/sika/web/webapp"
	"github.com/sikahq/sika/web/webapp/webapptest"
)

// dashClient is the kit's client without JavaScript (webapptest.Client) with the dashboard's and
// the console's paths: where each logs in and the page each form's token is read from.
type dashClient struct{ *webapptest.Client }

// dashAnswer is one answer of the dashboard or the console.
type dashAnswer = webapptest.Answer

func newDashClient(t *testing.T, base string) *dashClient {
	t.Helper()
	return &dashClient{webapptest.NewClient(t, base)}
}

// login fills the dashboard's login form as a browser would and returns the answer to the POST.
func (c *dashClient) login(t *testing.T, email, password string) dashAnswer {
	t.Helper()
	return c.Login(t, "/dashboard/", email, password)
}

// csrf is the dashboard session's token, read from a page as a form would.
func (c *dashClient) csrf(t *testing.T) string {
	t.Helper()
	return c.CSRF(t, "/dashboard/merchants/")
}

// post sends a form with the dashboard session's token.
func (c *dashClient) post(t *testing.T, path string, form url.Values) dashAnswer {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf_token", c.csrf(t))
	return c.Do(t, http.MethodPost, path, form)
}

// sessionCookie is the client's dashboard session id.
func (c *dashClient) sessionCookie(t *testing.T) string {
	t.Helper()
	return c.Cookie(t, "/dashboard/", "sika_dashboard")
}

func hiddenField(t *testing.T, body, name string) string {
	t.Helper()
	return webapptest.HiddenField(t, body, name)
}

// dashLoggedIn is a client signed in as acct's member.
func dashLoggedIn(t *testing.T, base string, acct *account) *dashClient {
	t.Helper()
	c := newDashClient(t, base)
	r := c.login(t, acct.Member.Email, "correct horse battery")
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	return c
}

func TestDashboardLogin(t *testing.T) {
	clock := &fixedClock{t: time.Now().UTC()}
	ts := newTestServer(t, func(c *Config) { c.Now = clock.now; c.PublicRateLimitPerMinute = 1000 })
	acct := ts.newAccount(t, true)

	t.Run("pages carry the security headers", func(t *testing.T) {
		r := newDashClient(t, ts.url).Get(t, "/dashboard/login/")
		require.Equal(t, http.StatusOK, r.Status)
		csp := r.Header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "script-src 'self';")
		assert.NotContains(t, csp, "unsafe-inline")
		assert.NotContains(t, csp, "unsafe-eval")
		assert.Contains(t, csp, "frame-ancestors 'none'")
		assert.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-store", r.Header.Get("Cache-Control"))
		assert.NotContains(t, r.Body, "<script>", "no inline script")
		assert.NotRegexp(t, `\son[a-z]+=`, r.Body, "no inline event handler")
		assert.Contains(t, r.Body, `<html lang="fr">`, "French by default")
		assert.Contains(t, r.Body, `src="/dashboard/static/vendor/htmx.min.js"`)
	})

	t.Run("a login starts a server-side session in an HttpOnly, SameSite=Lax cookie", func(t *testing.T) {
		c := newDashClient(t, ts.url)
		r := c.login(t, acct.Member.Email, "correct horse battery")
		require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
		assert.Equal(t, "/dashboard/", r.Header.Get("Location"))
		var session *http.Cookie
		for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
			if ck.Name == "sika_dashboard" && ck.Value != "" {
				session = ck
			}
		}
		require.NotNil(t, session, "Set-Cookie: %v", r.Header.Values("Set-Cookie"))
		assert.True(t, session.HttpOnly)
		assert.Equal(t, http.SameSiteLaxMode, session.SameSite)
		assert.False(t, session.Secure, "plain HTTP in this test")
		assert.Equal(t, "/dashboard/", session.Path)
		assert.Len(t, session.Value, 43, "32 random bytes")

		ws, err := testStore.WebSessionByToken(t.Context(), store.WebAppDashboard, sha256Of(session.Value), clock.now())
		require.NoError(t, err, "the session is kept in Postgres, by the hash of its id")
		assert.Equal(t, acct.Member.ID, ws.Member)
		assert.Equal(t, acct.Merchant.ID, *ws.Merchant, "a member of one merchant acts for it")
		assert.Equal(t, sika.EnvironmentLive, ws.Environment, "an active merchant lands in LIVE")

		home := c.Get(t, "/dashboard/")
		require.Equal(t, http.StatusOK, home.Status, home.Body)
		assert.Contains(t, home.Body, acct.Merchant.Name)
		assert.Contains(t, home.Body, `id="env-badge"`)
		assert.Contains(t, home.Body, ws.CSRFToken, "the page carries the session's CSRF token")
	})

	t.Run("a wrong password, an unknown email, a staff member are refused", func(t *testing.T) {
		r := newDashClient(t, ts.url).login(t, acct.Member.Email, "not the password")
		assert.Equal(t, http.StatusUnauthorized, r.Status)
		assert.Contains(t, r.Body, "Adresse e-mail ou mot de passe incorrect.")
		assert.Empty(t, newDashClient(t, ts.url).sessionCookie(t))
		r = newDashClient(t, ts.url).login(t, "nobody@example.com", "correct horse battery")
		assert.Equal(t, http.StatusUnauthorized, r.Status)

		staff := newStaffMember(t)
		c := newDashClient(t, ts.url)
		r = c.login(t, staff.Email, "correct horse battery")
		assert.Equal(t, http.StatusForbidden, r.Status, "staff use the console")
		assert.Empty(t, c.sessionCookie(t))
	})

	t.Run("a login without its CSRF token is refused", func(t *testing.T) {
		c := newDashClient(t, ts.url)
		c.Get(t, "/dashboard/login/") // the cookie half of the token
		r := c.Do(t, http.MethodPost, "/dashboard/login/", url.Values{"email": {acct.Member.Email}, "password": {"correct horse battery"}})
		assert.Equal(t, http.StatusForbidden, r.Status)
		r = newDashClient(t, ts.url).Do(t, http.MethodPost, "/dashboard/login/", url.Values{
			"csrf_token": {"forged"}, "email": {acct.Member.Email}, "password": {"correct horse battery"}})
		assert.Equal(t, http.StatusForbidden, r.Status, "no cookie to match")
	})

	t.Run("a form from another origin is refused even with the token", func(t *testing.T) {
		c := dashLoggedIn(t, ts.url, acct)
		form := url.Values{"csrf_token": {c.csrf(t)}}
		r := c.Do(t, http.MethodPost, "/dashboard/logout/", form, "Origin", "https://evil.example")
		assert.Equal(t, http.StatusForbidden, r.Status)
		r = c.Do(t, http.MethodPost, "/dashboard/logout/", form, "Sec-Fetch-Site", "cross-site")
		assert.Equal(t, http.StatusForbidden, r.Status)
		r = c.Do(t, http.MethodPost, "/dashboard/logout/", form, "Origin", ts.url)
		assert.Equal(t, http.StatusSeeOther, r.Status, "same origin")
	})

	t.Run("htmx sends the token in a header", func(t *testing.T) {
		c := dashLoggedIn(t, ts.url, acct)
		token := c.csrf(t)
		r := c.Do(t, http.MethodPost, "/dashboard/environment/", url.Values{"environment": {"TEST"}}, "HX-Request", "true")
		assert.Equal(t, http.StatusForbidden, r.Status)
		r = c.Do(t, http.MethodPost, "/dashboard/environment/", url.Values{"environment": {"TEST"}}, "HX-Request", "true", "X-CSRF-Token", token)
		assert.Equal(t, http.StatusNoContent, r.Status, r.Body)
		assert.Equal(t, "/dashboard/", r.Header.Get("HX-Redirect"))
		assert.Contains(t, c.Get(t, "/dashboard/").Body, `class="env env-test"`)
	})

	t.Run("logout deletes the session", func(t *testing.T) {
		c := dashLoggedIn(t, ts.url, acct)
		id := c.sessionCookie(t)
		r := c.post(t, "/dashboard/logout/", nil)
		require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
		assert.Equal(t, "/dashboard/login/?signed_out=1", r.Header.Get("Location"))
		_, err := testStore.WebSessionByToken(t.Context(), store.WebAppDashboard, sha256Of(id), clock.now())
		assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err), "the row is gone")
		replay := newDashClient(t, ts.url)
		u, _ := url.Parse(ts.url + "/dashboard/")
		replay.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "sika_dashboard", Value: id, Path: "/dashboard/"}})
		r = replay.Get(t, "/dashboard/")
		assert.Equal(t, http.StatusSeeOther, r.Status, "the old id opens nothing")
		assert.Equal(t, "/dashboard/login/?expired=1", r.Header.Get("Location"))
	})

	t.Run("a session ends when idle and at its absolute expiry", func(t *testing.T) {
		c := dashLoggedIn(t, ts.url, acct)
		clock.t = clock.t.Add(dashboard.DefaultIdleTimeout - time.Minute)
		require.Equal(t, http.StatusOK, c.Get(t, "/dashboard/").Status, "used within the idle timeout")
		clock.t = clock.t.Add(dashboard.DefaultIdleTimeout - time.Minute)
		require.Equal(t, http.StatusOK, c.Get(t, "/dashboard/").Status, "each use moves the idle deadline")
		clock.t = clock.t.Add(dashboard.DefaultIdleTimeout + time.Second)
		r := c.Get(t, "/dashboard/transactions/")
		assert.Equal(t, http.StatusSeeOther, r.Status, "idle too long")
		assert.Equal(t, "/dashboard/login/?expired=1&next=%2Fdashboard%2Ftransactions%2F", r.Header.Get("Location"))

		c = dashLoggedIn(t, ts.url, acct)
		for range int(dashboard.DefaultSessionLifetime / (dashboard.DefaultIdleTimeout / 2)) {
			clock.t = clock.t.Add(dashboard.DefaultIdleTimeout / 2)
			c.Get(t, "/dashboard/")
		}
		r = c.Get(t, "/dashboard/")
		assert.Equal(t, http.StatusSeeOther, r.Status, "never past the absolute lifetime, however busy")
	})

	t.Run("the login is rate limited like POST /auth/login/", func(t *testing.T) {
		limited := newTestServer(t, func(c *Config) { c.PublicRateLimitPerMinute = 3 })
		c := newDashClient(t, limited.url)
		for i := range 3 {
			r := c.login(t, acct.Member.Email, "not the password")
			require.Equal(t, http.StatusUnauthorized, r.Status, "attempt %d", i+1)
		}
		r := c.login(t, acct.Member.Email, "correct horse battery")
		assert.Equal(t, http.StatusTooManyRequests, r.Status)
		assert.NotEmpty(t, r.Header.Get("Retry-After"))
		assert.Empty(t, c.sessionCookie(t), "not even the right password gets in")
		api := limited.call(t, "POST", "/api/v1/auth/login/", map[string]string{"email": acct.Member.Email, "password": "correct horse battery"})
		assert.Equal(t, http.StatusTooManyRequests, api.Status, "one budget for both ways in")
	})

	t.Run("the cookie is Secure and __Secure- prefixed behind https", func(t *testing.T) {
		srv := NewServer(Config{PublicURL: "https://sika.example", JWTSecret: []byte("test secret of at least thirty-two bytes"),
			Logger: slog.New(slog.DiscardHandler)}, testStore)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/dashboard/login/", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		var found bool
		for _, ck := range rec.Result().Cookies() {
			if strings.HasSuffix(ck.Name, "sika_dashboard_login") {
				found = true
				assert.Equal(t, "__Secure-sika_dashboard_login", ck.Name)
				assert.True(t, ck.Secure)
				assert.True(t, ck.HttpOnly)
			}
		}
		assert.True(t, found)
		assert.NotEmpty(t, rec.Header().Get("Strict-Transport-Security"))
	})
}

func TestDashboardMerchantPickerAndEnvironment(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	second, err := testStore.CreateMerchant(t.Context(), acct.Member.ID, store.NewMerchant{Name: "Second shop " + uuid.NewString()[:6], Country: "SN"})
	require.NoError(t, err)
	other := ts.newAccount(t, true)

	c := newDashClient(t, ts.url)
	r := c.login(t, acct.Member.Email, "correct horse battery")
	require.Equal(t, http.StatusSeeOther, r.Status)
	assert.Equal(t, "/dashboard/merchants/", r.Header.Get("Location"), "a member of several merchants picks one")
	r = c.Get(t, "/dashboard/transactions/")
	assert.Equal(t, http.StatusSeeOther, r.Status)
	assert.Equal(t, "/dashboard/merchants/", r.Header.Get("Location"), "no merchant page before the pick")

	picker := c.Get(t, "/dashboard/merchants/")
	assert.Contains(t, picker.Body, acct.Merchant.Name)
	assert.Contains(t, picker.Body, second.Name)
	assert.Equal(t, http.StatusNotFound, c.post(t, "/dashboard/merchants/", url.Values{"merchant": {other.Merchant.ID.String()}}).Status,
		"another member's merchant is not found")
	r = c.post(t, "/dashboard/merchants/", url.Values{"merchant": {second.ID.String()}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	home := c.Get(t, "/dashboard/")
	require.Equal(t, http.StatusOK, home.Status)
	assert.Contains(t, home.Body, second.Name)
	assert.Contains(t, home.Body, `class="env env-test"`, "a merchant without KYC lands in TEST")

	r = c.post(t, "/dashboard/merchants/", url.Values{"merchant": {acct.Merchant.ID.String()}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	home = c.Get(t, "/dashboard/")
	assert.Contains(t, home.Body, `class="env env-live"`)
	r = c.post(t, "/dashboard/environment/", url.Values{"environment": {"TEST"}, "next": {"/dashboard/transactions/?status=SUCCESS"}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	assert.Equal(t, "/dashboard/transactions/?status=SUCCESS", r.Header.Get("Location"), "back to the page it was on")
	assert.Contains(t, c.Get(t, "/dashboard/transactions/").Body, `class="env env-test"`)
	r = c.post(t, "/dashboard/environment/", url.Values{"environment": {"LIVE"}, "next": {"https://evil.example/"}})
	assert.Equal(t, "/dashboard/", r.Header.Get("Location"), "never to another site")
	assert.Equal(t, http.StatusBadRequest, c.post(t, "/dashboard/environment/", url.Values{"environment": {"PROD"}}).Status)
}

func TestDashboardLanguage(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	c := dashLoggedIn(t, ts.url, acct)
	assert.Contains(t, c.Get(t, "/dashboard/").Body, "Soldes par pays")
	assert.Contains(t, c.Get(t, "/dashboard/", "Accept-Language", "en-GB,en;q=0.9,fr;q=0.5").Body, "Balances by country")
	r := c.Get(t, "/dashboard/transactions/?status=SUCCESS&lang=en")
	require.Equal(t, http.StatusSeeOther, r.Status)
	assert.Equal(t, "/dashboard/transactions/?status=SUCCESS", r.Header.Get("Location"))
	page := c.Get(t, "/dashboard/transactions/?status=SUCCESS")
	assert.Contains(t, page.Body, `<html lang="en">`, "the switch is remembered")
	assert.Contains(t, page.Body, "Export these transactions (CSV)")
	c.Get(t, "/dashboard/?lang=fr")
	assert.Contains(t, c.Get(t, "/dashboard/", "Accept-Language", "en").Body, `<html lang="fr">`, "the switch wins over the browser")
}

func TestDashboardPages(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	sweepFund(t, acct, sika.EnvironmentTest)
	// The rows are made yesterday from 12:00 UTC, half a day from either midnight: the date
	// filters below are the same whatever the hour of the run.
	now := time.Now().UTC()
	base := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Add(-12 * time.Hour)
	var rows []*historyRow
	for i := range 30 {
		row := &historyRow{Merchant: acct.Merchant.ID, CreatedAt: base.Add(time.Duration(i) * time.Minute), Name: "Client " + string(rune('A'+i%26)),
			Phone: "+22997000" + strings.Repeat("1", 3)}
		if i%3 == 0 {
			row.Status, row.Name = sika.StatusFailed, "Awa Diop"
		}
		insertHistoryRow(t, row)
		rows = append(rows, row)
	}
	c := dashLoggedIn(t, ts.url, acct)
	require.Equal(t, http.StatusSeeOther, c.post(t, "/dashboard/environment/", url.Values{"environment": {"TEST"}}).Status)

	home := c.Get(t, "/dashboard/")
	require.Equal(t, http.StatusOK, home.Status, home.Body)
	assert.Contains(t, home.Body, "20\u00a0000\u00a0FCFA", "the funded wallet, in French")
	assert.Contains(t, home.Body, rows[29].Reference, "the latest transaction")
	assert.NotContains(t, home.Body, rows[10].Reference, "ten of them only")

	list := c.Get(t, "/dashboard/transactions/")
	require.Equal(t, http.StatusOK, list.Status)
	assert.Contains(t, list.Body, rows[29].Reference)
	assert.NotContains(t, list.Body, rows[3].Reference, "25 a page")
	next := regexp.MustCompile(`href="([^"]+)" id="page-next"`).FindStringSubmatch(list.Body)
	require.NotNil(t, next)
	older := c.Get(t, strings.ReplaceAll(next[1], "&amp;", "&"))
	assert.Contains(t, older.Body, rows[3].Reference)
	assert.Contains(t, older.Body, `id="page-previous"`)

	failed := c.Get(t, "/dashboard/transactions/?status=FAILED&search=Awa+Diop")
	require.Equal(t, http.StatusOK, failed.Status)
	assert.Contains(t, failed.Body, rows[27].Reference)
	assert.NotContains(t, failed.Body, rows[28].Reference)
	assert.Contains(t, failed.Body, `href="/dashboard/transactions/export/?search=Awa&#43;Diop&amp;status=FAILED"`)

	partial := c.Get(t, "/dashboard/transactions/?status=FAILED", "HX-Request", "true", "HX-Target", "results")
	assert.True(t, strings.HasPrefix(strings.TrimSpace(partial.Body), `<section id="results"`), "htmx gets the results alone")

	day, dayBefore := base.Format(time.DateOnly), base.AddDate(0, 0, -1).Format(time.DateOnly)
	inRange := c.Get(t, "/dashboard/transactions/?created_at__gte="+day+"&created_at__lte="+day)
	assert.Contains(t, inRange.Body, rows[29].Reference, "a date range that holds them")
	assert.Contains(t, inRange.Body, `value="`+day+`"`, "the form keeps the range")
	before := c.Get(t, "/dashboard/transactions/?created_at__lte="+dayBefore)
	assert.NotContains(t, before.Body, rows[29].Reference, "a date range before them")
	assert.Contains(t, before.Body, `id="no-result"`)

	bad := c.Get(t, "/dashboard/transactions/?search=ab&created_at__gte=2026-02-01&created_at__lte=2026-01-01&status=NOPE")
	assert.Contains(t, bad.Body, "Saisissez entre 3 et 100 caractères.")
	assert.Contains(t, bad.Body, "La date de fin précède la date de début.")
	assert.Contains(t, bad.Body, "Choix invalide.")

	csv := c.Get(t, "/dashboard/transactions/export/?status=FAILED&search=Awa+Diop")
	require.Equal(t, http.StatusOK, csv.Status, csv.Body)
	assert.Equal(t, "text/csv; charset=utf-8", csv.Header.Get("Content-Type"))
	lines := strings.Split(strings.TrimSpace(csv.Body), "\n")
	assert.Len(t, lines, 1+10, "the header and the ten failed rows")
	assert.True(t, strings.HasPrefix(lines[0], "id,reference,created_at"))
	r := c.Get(t, "/dashboard/transactions/export/?search=ab")
	assert.Equal(t, http.StatusSeeOther, r.Status, "a bad filter goes back to the list")

	detail := c.Get(t, "/dashboard/transactions/"+rows[29].ID.String()+"/")
	require.Equal(t, http.StatusOK, detail.Status, detail.Body)
	assert.Contains(t, detail.Body, `id="timeline"`)
	assert.Equal(t, 2, strings.Count(detail.Body, `class="step"`), "creation and outcome")
	assert.Contains(t, detail.Body, `class="attempt"`)
	assert.Contains(t, detail.Body, "1\u00a0000\u00a0FCFA")
}

// TestDashboardTenancySweep walks every dashboard route: without a session it goes to the
// login form, a POST without the session's CSRF token is 403, and another merchant's ids (or
// the same merchant's in the other environment) are not found.
func TestDashboardTenancySweep(t *testing.T) {
	ts := newTestServer(t)
	a := ts.newAccount(t, true)
	b := ts.newAccount(t, true)
	own := &historyRow{Merchant: a.Merchant.ID, Env: sika.EnvironmentLive, CreatedAt: time.Now().UTC()}
	theirs := &historyRow{Merchant: b.Merchant.ID, Env: sika.EnvironmentLive, CreatedAt: time.Now().UTC()}
	ownTest := &historyRow{Merchant: a.Merchant.ID, Env: sika.EnvironmentTest, CreatedAt: time.Now().UTC()}
	for _, r := range []*historyRow{own, theirs, ownTest} {
		insertHistoryRow(t, r)
	}
	// The money pages' objects of each merchant in LIVE: a payment link, a checkout session, a
	// wallet (with its ledger).
	createdIn := func(acct *account, path string, body map[string]any) string {
		return createdLive(t, ts, acct, path, body)
	}
	link := map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}
	session := map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"}
	ownLink, theirLink := createdIn(a, "/payment-links/", link), createdIn(b, "/payment-links/", link)
	ownSession, theirSession := createdIn(a, "/checkout-sessions/", session), createdIn(b, "/checkout-sessions/", session)
	walletOf := func(acct *account) string {
		sweepFund(t, acct, sika.EnvironmentLive)
		ws, _, err := testStore.ListWallets(t.Context(), acct.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 1})
		require.NoError(t, err)
		require.Len(t, ws, 1)
		return ws[0].ID.String()
	}
	ownWallet, theirWallet := walletOf(a), walletOf(b)
	ownBatch, theirBatch := sweepPayoutBatch(t, a, sika.EnvironmentLive), sweepPayoutBatch(t, b, sika.EnvironmentLive)

	type route struct {
		method, tpl, path string
		form              url.Values
	}
	routes := []route{
		{"GET", "/dashboard/", "/dashboard/", nil},
		{"GET", "/dashboard/transactions/", "/dashboard/transactions/", nil},
		{"GET", "/dashboard/transactions/", "/dashboard/transactions/?status=SUCCESS&search=Shop", nil},
		{"GET", "/dashboard/transactions/export/", "/dashboard/transactions/export/", nil},
		{"GET", "/dashboard/transactions/{id}/", "/dashboard/transactions/" + own.ID.String() + "/", nil},
		{"GET", "/dashboard/networks/", "/dashboard/networks/?phone=%2B2250707123456", nil},
		{"GET", "/dashboard/merchants/", "/dashboard/merchants/", nil},
		{"POST", "/dashboard/merchants/", "/dashboard/merchants/", url.Values{"merchant": {a.Merchant.ID.String()}}},
		{"POST", "/dashboard/environment/", "/dashboard/environment/", url.Values{"environment": {"LIVE"}}},
		{"POST", "/dashboard/logout/", "/dashboard/logout/", url.Values{}},

		{"GET", "/dashboard/transactions/{id}/invoice/", "/dashboard/transactions/" + own.ID.String() + "/invoice/", nil},
		{"POST", "/dashboard/transactions/{id}/verify/", "/dashboard/transactions/" + own.ID.String() + "/verify/", url.Values{}},
		{"POST", "/dashboard/transactions/{id}/retry/", "/dashboard/transactions/" + own.ID.String() + "/retry/", url.Values{"idempotency_key": {"k"}}},
		{"POST", "/dashboard/transactions/{id}/approve/", "/dashboard/transactions/" + own.ID.String() + "/approve/", url.Values{}},
		{"POST", "/dashboard/transactions/{id}/reject/", "/dashboard/transactions/" + own.ID.String() + "/reject/", url.Values{}},
		{"POST", "/dashboard/transactions/{id}/refund/preview/", "/dashboard/transactions/" + own.ID.String() + "/refund/preview/", url.Values{"amount": {"1"}}},
		{"POST", "/dashboard/transactions/{id}/refund/", "/dashboard/transactions/" + own.ID.String() + "/refund/", url.Values{"amount": {"1"}, "idempotency_key": {"k"}}},
		{"GET", "/dashboard/payment-links/", "/dashboard/payment-links/", nil},
		{"POST", "/dashboard/payment-links/", "/dashboard/payment-links/", url.Values{"name": {"x"}, "currency": {"XOF"}}},
		{"GET", "/dashboard/payment-links/new/", "/dashboard/payment-links/new/", nil},
		{"GET", "/dashboard/payment-links/{id}/", "/dashboard/payment-links/" + ownLink + "/", nil},
		{"POST", "/dashboard/payment-links/{id}/", "/dashboard/payment-links/" + ownLink + "/", url.Values{"name": {"x"}, "currency": {"XOF"}}},
		{"GET", "/dashboard/checkout-sessions/", "/dashboard/checkout-sessions/", nil},
		{"POST", "/dashboard/checkout-sessions/", "/dashboard/checkout-sessions/", url.Values{"amount": {"1000"}, "currency": {"XOF"}}},
		{"POST", "/dashboard/checkout-sessions/{id}/cancel/", "/dashboard/checkout-sessions/" + ownSession + "/cancel/", url.Values{}},
		{"GET", "/dashboard/payouts/", "/dashboard/payouts/", nil},
		{"POST", "/dashboard/payouts/", "/dashboard/payouts/", url.Values{"method": {"MTN_BJ"}, "amount": {"100"}, "recipient": {"97000123"}}},
		{"POST", "/dashboard/payouts/preview/", "/dashboard/payouts/preview/", url.Values{"method": {"MTN_BJ"}, "amount": {"100"}}},
		{"GET", "/dashboard/settlements/", "/dashboard/settlements/", nil},
		{"POST", "/dashboard/settlements/", "/dashboard/settlements/", url.Values{"amount": {"100"}}},
		{"GET", "/dashboard/wallet-transfers/", "/dashboard/wallet-transfers/", nil},
		{"POST", "/dashboard/wallet-transfers/", "/dashboard/wallet-transfers/", url.Values{"from_country": {"BJ"}, "to_country": {"SN"}, "amount": {"100"}}},
		{"GET", "/dashboard/payout-methods/", "/dashboard/payout-methods/", nil},
		{"POST", "/dashboard/payout-methods/", "/dashboard/payout-methods/", url.Values{"type": {"MOBILE_MONEY"}}},
		{"GET", "/dashboard/wallets/{id}/ledger/", "/dashboard/wallets/" + ownWallet + "/ledger/", nil},
		{"GET", "/dashboard/payout-batches/", "/dashboard/payout-batches/", nil},
		{"POST", "/dashboard/payout-batches/", "/dashboard/payout-batches/", url.Values{"description": {"x"}}},
		{"GET", "/dashboard/payout-batches/{id}/", "/dashboard/payout-batches/" + ownBatch + "/", nil},
		{"GET", "/dashboard/payout-batches/{id}/results/", "/dashboard/payout-batches/" + ownBatch + "/results/", nil},
		{"POST", "/dashboard/payout-batches/{id}/approve/", "/dashboard/payout-batches/" + ownBatch + "/approve/", url.Values{}},
		{"POST", "/dashboard/payout-batches/{id}/reject/", "/dashboard/payout-batches/" + ownBatch + "/reject/", url.Values{}},
		{"POST", "/dashboard/payout-batches/{id}/cancel/", "/dashboard/payout-batches/" + ownBatch + "/cancel/", url.Values{}},
	}
	devSweep := newDeveloperSweep(t, ts, a, b)
	for _, r := range devSweep.routes {
		routes = append(routes, route(r))
	}
	// Every route of the dashboard is swept, except the public ones: the login form (its CSRF
	// check is TestDashboardLogin's) and the static files.
	swept := map[dashboard.Route]bool{}
	for _, rt := range routes {
		swept[dashboard.Route{Method: rt.method, Path: rt.tpl}] = true
	}
	for _, r := range dashboard.New(dashboard.Config{}).Routes() {
		public := r.Path == "/dashboard/login/" || strings.HasPrefix(r.Path, "/dashboard/static/")
		assert.True(t, public || swept[r], "route %s %s is not in the sweep", r.Method, r.Path)
	}
	require.Equal(t, http.StatusMovedPermanently, newDashClient(t, ts.url).Get(t, "/dashboard").Status)

	c := dashLoggedIn(t, ts.url, a)
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			anon := newDashClient(t, ts.url)
			r := anon.Do(t, rt.method, rt.path, rt.form)
			assert.Equal(t, http.StatusSeeOther, r.Status, "no session")
			assert.True(t, strings.HasPrefix(r.Header.Get("Location"), "/dashboard/login/"), "to the login form: %s", r.Header.Get("Location"))
			assert.NotContains(t, r.Body, a.Merchant.Name)

			hx := anon.Do(t, rt.method, rt.path, rt.form, "HX-Request", "true")
			assert.True(t, strings.HasPrefix(hx.Header.Get("HX-Redirect"), "/dashboard/login/"), "htmx is sent to the login page whole")

			if rt.method == http.MethodPost {
				r = c.Do(t, rt.method, rt.path, rt.form)
				assert.Equal(t, http.StatusForbidden, r.Status, "no CSRF token")
				r = c.Do(t, rt.method, rt.path, rt.form, "X-CSRF-Token", "not the token")
				assert.Equal(t, http.StatusForbidden, r.Status, "a wrong CSRF token")
				return
			}
			r = c.Get(t, rt.path)
			assert.Equal(t, http.StatusOK, r.Status, "signed in")
		})
	}

	t.Run("another merchant's ids are not found", func(t *testing.T) {
		for _, path := range []string{
			"/dashboard/transactions/" + theirs.ID.String() + "/",
			"/dashboard/transactions/" + ownTest.ID.String() + "/", // the other environment
			"/dashboard/transactions/" + uuid.NewString() + "/",
			"/dashboard/transactions/not-a-uuid/",
			"/dashboard/no-such-page/",
			"/dashboard/transactions/" + theirs.ID.String() + "/invoice/",
			"/dashboard/transactions/" + ownTest.ID.String() + "/invoice/",
			"/dashboard/payment-links/" + theirLink + "/",
			"/dashboard/payment-links/not-a-uuid/",
			"/dashboard/wallets/" + theirWallet + "/ledger/",
			"/dashboard/wallets/" + uuid.NewString() + "/ledger/",
			"/dashboard/payout-batches/" + theirBatch + "/",
			"/dashboard/payout-batches/" + theirBatch + "/results/",
		} {
			r := c.Get(t, path)
			assert.Equal(t, http.StatusNotFound, r.Status, path)
			assert.NotContains(t, r.Body, theirs.Reference)
		}
		for path, form := range map[string]url.Values{
			"/dashboard/transactions/" + theirs.ID.String() + "/verify/":         {},
			"/dashboard/transactions/" + theirs.ID.String() + "/retry/":          {"idempotency_key": {uuid.NewString()}},
			"/dashboard/transactions/" + ownTest.ID.String() + "/retry/":         {"idempotency_key": {uuid.NewString()}},
			"/dashboard/transactions/" + theirs.ID.String() + "/refund/preview/": {"amount": {"1"}},
			"/dashboard/transactions/" + theirs.ID.String() + "/refund/":         {"amount": {"1"}, "idempotency_key": {uuid.NewString()}},
			"/dashboard/transactions/" + ownTest.ID.String() + "/refund/":        {"amount": {"1"}, "idempotency_key": {uuid.NewString()}},
			"/dashboard/payment-links/" + theirLink + "/":                        {"name": {"Mine now"}, "currency": {"XOF"}},
			"/dashboard/checkout-sessions/" + theirSession + "/cancel/":          {},
			"/dashboard/checkout-sessions/" + uuid.NewString() + "/cancel/":      {},
			"/dashboard/payout-batches/" + theirBatch + "/cancel/":               {},
		} {
			r := c.post(t, path, form)
			assert.Equal(t, http.StatusNotFound, r.Status, path)
		}
		l, err := testStore.PaymentLinkByID(t.Context(), b.Merchant.ID, sika.EnvironmentLive, uuid.MustParse(theirLink))
		require.NoError(t, err)
		assert.Equal(t, "T-shirt", l.Name, "another merchant's link is untouched")
		cs, err := testStore.CheckoutSessionByID(t.Context(), b.Merchant.ID, sika.EnvironmentLive, uuid.MustParse(theirSession))
		require.NoError(t, err)
		assert.Equal(t, sika.CheckoutPending, cs.Status, "another merchant's session is not cancelled")
		assert.NotContains(t, c.Get(t, "/dashboard/payment-links/").Body, theirLink)
		assert.NotContains(t, c.Get(t, "/dashboard/checkout-sessions/").Body, theirSession)
		assert.Equal(t, http.StatusNotFound, c.post(t, "/dashboard/merchants/", url.Values{"merchant": {b.Merchant.ID.String()}}).Status)
		list := c.Get(t, "/dashboard/transactions/?merchant="+b.Merchant.ID.String())
		assert.NotContains(t, list.Body, theirs.Reference, "the API's merchant filter cannot widen the tenancy")
		assert.Contains(t, c.Get(t, "/dashboard/transactions/").Body, own.Reference)
		csv := c.Get(t, "/dashboard/transactions/export/")
		assert.Contains(t, csv.Body, own.Reference)
		assert.NotContains(t, csv.Body, theirs.Reference)
		assert.NotContains(t, csv.Body, ownTest.Reference, "LIVE only")
		devSweep.foreign(t, c)
	})

	t.Run("a staff member's or the console's session is not accepted", func(t *testing.T) {
		staff := newStaffMember(t)
		// A staff member's dashboard session is dropped at its first use: every request gets a
		// fresh one, so that each route meets the session itself, not its absence.
		forge := func(ws store.WebSession) *dashClient {
			token := webapp.NewToken()
			now := time.Now().UTC()
			ws.TokenHash, ws.Environment, ws.CSRFToken = sha256Of(token), sika.EnvironmentLive, "t"
			ws.CreatedAt, ws.LastSeenAt, ws.ExpiresAt, ws.AbsoluteExpiresAt = now, now, now.Add(time.Hour), now.Add(time.Hour)
			require.NoError(t, testStore.CreateWebSession(t.Context(), ws))
			forged := newDashClient(t, ts.url)
			u, _ := url.Parse(ts.url + "/dashboard/")
			forged.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "sika_dashboard", Value: token, Path: "/dashboard/"}})
			return forged
		}
		for _, ws := range []store.WebSession{
			{App: store.WebAppDashboard, Member: staff.ID},
			{App: store.WebAppConsole, Member: a.Member.ID, Merchant: &a.Merchant.ID},
		} {
			for _, rt := range routes {
				form := rt.form
				if rt.method == http.MethodPost {
					form = url.Values{"csrf_token": {"t"}} // the forged session's own token
					for k, v := range rt.form {
						form[k] = v
					}
				}
				r := forge(ws).Do(t, rt.method, rt.path, form)
				assert.Equal(t, http.StatusSeeOther, r.Status, "%s session: %s %s", ws.App, rt.method, rt.path)
				assert.True(t, strings.HasPrefix(r.Header.Get("Location"), "/dashboard/login/"), "%s %s", rt.method, rt.path)
			}
		}
	})
}

// newStaffMember registers a staff member with the tests' password.
func newStaffMember(t *testing.T) sika.Member { return newStaffWithRole(t, sika.StaffAdmin) }

// newStaffWithRole registers a staff member of a role, password "correct horse battery".
func newStaffWithRole(t *testing.T, role sika.StaffRole) sika.Member {
	t.Helper()
	return newStaffNamed(t, role, "Staff")
}

// createdLive creates an object of acct in LIVE through the API (POST /api/v1+path, a PAYIN key)
// and returns its id.
func createdLive(t *testing.T, ts *testServer, acct *account, path string, body map[string]any) string {
	t.Helper()
	r := ts.call(t, "POST", "/api/v1"+path, body, acct.key(sika.EnvironmentLive, sika.ScopePayin)...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var v struct {
		ID string `json:"id"`
	}
	r.data(t, &v)
	return v.ID
}

// newStaffNamed registers a staff member of a role and a name, password "correct horse battery".
func newStaffNamed(t *testing.T, role sika.StaffRole, name string) sika.Member {
	t.Helper()
	hash, err := sika.HashPassword("correct horse battery")
	require.NoError(t, err)
	m, _, err := testStore.RegisterMember(context.Background(), "staff-"+uuid.NewString()[:8]+"@sika.example", hash, name, role, nil)
	require.NoError(t, err)
	return m
}

// sha256Of is what the store keeps of a session id.
func sha256Of(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
