package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/console"
)

// consoleLogin fills the console's login form as a browser would and returns the answer.
func (c *dashClient) consoleLogin(t *testing.T, email, password string) dashAnswer {
	t.Helper()
	return c.Login(t, "/console/", email, password)
}

// consoleCSRF is the console session's token, read from a page as a form would.
func (c *dashClient) consoleCSRF(t *testing.T) string {
	t.Helper()
	return c.CSRF(t, "/console/actions/")
}

// TestConsoleLogin: staff only; a merchant's credentials are refused; the sessions of the
// dashboard and the console do not cross; logout ends the session.
func TestConsoleLogin(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	staff := newStaffMember(t)

	r := newDashClient(t, ts.url).Get(t, "/console/")
	assert.Equal(t, http.StatusSeeOther, r.Status)
	assert.Equal(t, "/console/login/", r.Header.Get("Location"))

	merchant := newDashClient(t, ts.url)
	r = merchant.consoleLogin(t, acct.Member.Email, "correct horse battery")
	assert.Equal(t, http.StatusForbidden, r.Status, "a merchant's credentials are refused")
	assert.Contains(t, r.Body, `id="login-error"`)

	c := newDashClient(t, ts.url)
	r = c.consoleLogin(t, staff.Email, "correct horse battery")
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	home := c.Get(t, "/console/")
	require.Equal(t, http.StatusOK, home.Status)
	assert.Contains(t, home.Body, "Paiements bloqués", "French by default")
	assert.Contains(t, home.Body, staff.Email)
	en := c.Get(t, "/console/", "Accept-Language", "en-GB,en;q=0.9")
	assert.Contains(t, en.Body, "Stuck payments")
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"} {
		assert.NotEmpty(t, home.Header.Get(h), h)
	}

	// The console's session id is not a dashboard session, and the reverse.
	u, _ := url.Parse(ts.url + "/console/")
	var token string
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == "sika_console" {
			token = ck.Value
		}
	}
	require.NotEmpty(t, token)
	forged := newDashClient(t, ts.url)
	du, _ := url.Parse(ts.url + "/dashboard/")
	forged.HTTP.Jar.SetCookies(du, []*http.Cookie{{Name: "sika_dashboard", Value: token, Path: "/dashboard/"}})
	r = forged.Get(t, "/dashboard/")
	assert.Equal(t, http.StatusSeeOther, r.Status, "a console session on the dashboard")
	assert.True(t, strings.HasPrefix(r.Header.Get("Location"), "/dashboard/login/"))

	m := dashLoggedIn(t, ts.url, acct)
	crossed := newDashClient(t, ts.url)
	crossed.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "sika_console", Value: m.sessionCookie(t), Path: "/console/"}})
	r = crossed.Get(t, "/console/")
	assert.Equal(t, http.StatusSeeOther, r.Status, "a dashboard session id in the console's cookie is no session")

	r = c.Do(t, http.MethodPost, "/console/logout/", url.Values{"csrf_token": {c.consoleCSRF(t)}})
	assert.Equal(t, http.StatusSeeOther, r.Status)
	r = c.Get(t, "/console/")
	assert.Equal(t, http.StatusSeeOther, r.Status, "logged out")
}

// TestConsoleTenancySweep walks every console route: without a session it goes to the login
// form; a merchant's dashboard session is 403; a POST without the session's CSRF token is 403;
// unknown ids are 404; staff see every page.
func TestConsoleTenancySweep(t *testing.T) {
	ts := newTestServer(t)
	a := ts.newAccount(t, true)
	row := &historyRow{Merchant: a.Merchant.ID, Env: sika.EnvironmentLive, CreatedAt: time.Now().UTC()}
	insertHistoryRow(t, row)
	dossier, err := testStore.SubmitKYCDossier(t.Context(), sika.KYCDossier{Merchant: a.Merchant.ID, KYCType: sika.KYCIndividual,
		FirstName: "Awa", LastName: "Diop"}, a.Member.ID)
	require.NoError(t, err)
	staff := newStaffMember(t)

	type route struct{ method, tpl, path string }
	id, unknown := row.ID.String(), uuid.NewString()
	routes := []route{
		{"GET", "/console/", "/console/?minutes=0"},
		{"GET", "/console/unclear/", "/console/unclear/?minutes=0"},
		{"GET", "/console/flags/", "/console/flags/?all=1"},
		{"GET", "/console/flags/{id}/", "/console/flags/" + unknown + "/"},
		{"POST", "/console/flags/{id}/refund/", "/console/flags/" + unknown + "/refund/"},
		{"POST", "/console/flags/{id}/settle/", "/console/flags/" + unknown + "/settle/"},
		{"GET", "/console/search/", "/console/search/?q=" + url.QueryEscape(row.Reference)},
		{"GET", "/console/actions/", "/console/actions/"},
		{"GET", "/console/transactions/{id}/", "/console/transactions/" + id + "/"},
		{"POST", "/console/transactions/{id}/reverify/", "/console/transactions/" + unknown + "/reverify/"},
		{"POST", "/console/transactions/{id}/resolve/", "/console/transactions/" + unknown + "/resolve/"},
		{"GET", "/console/decisions/", "/console/decisions/"},
		{"POST", "/console/decisions/{id}/approve/", "/console/decisions/" + unknown + "/approve/"},
		{"POST", "/console/decisions/{id}/reject/", "/console/decisions/" + unknown + "/reject/"},
		{"GET", "/console/staff/", "/console/staff/"},
		{"POST", "/console/staff/role/", "/console/staff/role/"},
		{"GET", "/console/kyc/", "/console/kyc/"},
		{"GET", "/console/kyc/files/{sha256}.{ext}", "/console/kyc/files/" + strings.Repeat("a", 64) + ".png"},
		{"GET", "/console/kyc/{id}/", "/console/kyc/" + dossier.ID.String() + "/"},
		{"POST", "/console/kyc/{id}/approve/", "/console/kyc/" + unknown + "/approve/"},
		{"POST", "/console/kyc/{id}/reject/", "/console/kyc/" + unknown + "/reject/"},
		{"GET", "/console/merchants/", "/console/merchants/?q=" + url.QueryEscape(a.Merchant.Name)},
		{"GET", "/console/merchants/{id}/", "/console/merchants/" + a.Merchant.ID.String() + "/"},
		{"POST", "/console/merchants/{id}/suspend/", "/console/merchants/" + unknown + "/suspend/"},
		{"POST", "/console/merchants/{id}/unsuspend/", "/console/merchants/" + unknown + "/unsuspend/"},
		{"GET", "/console/payout-methods/", "/console/payout-methods/"},
		{"POST", "/console/payout-methods/{id}/verify/", "/console/payout-methods/" + unknown + "/verify/"},
		{"POST", "/console/logout/", "/console/logout/"},
	}
	swept := map[console.Route]bool{}
	for _, rt := range routes {
		swept[console.Route{Method: rt.method, Path: rt.tpl}] = true
	}
	for _, r := range console.New(console.Config{}).Routes() {
		// The codec server answers 401/403 rather than the login form: TestCodecServerIsForStaffOnly.
		public := r.Path == "/console/login/" || strings.HasPrefix(r.Path, "/console/static/") || r.Path == console.CodecPath
		assert.True(t, public || swept[r], "route %s %s is not in the sweep", r.Method, r.Path)
	}
	require.Equal(t, http.StatusMovedPermanently, newDashClient(t, ts.url).Get(t, "/console").Status)

	c := newDashClient(t, ts.url)
	require.Equal(t, http.StatusSeeOther, c.consoleLogin(t, staff.Email, "correct horse battery").Status)
	csrf := c.consoleCSRF(t)
	merchant := dashLoggedIn(t, ts.url, a)
	merchantCookie := merchant.sessionCookie(t)
	require.NotEmpty(t, merchantCookie)

	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			var form url.Values
			if rt.method == http.MethodPost {
				form = url.Values{"status": {"FAILED"}, "reason": {"sweep"}, "review_note": {"sweep"}, "note": {"sweep"},
					"email": {"nobody-" + unknown + "@sika.example"}, "role": {"SUPPORT_AGENT"}}
			}
			anon := newDashClient(t, ts.url)
			r := anon.Do(t, rt.method, rt.path, form)
			assert.Equal(t, http.StatusSeeOther, r.Status, "no session")
			assert.True(t, strings.HasPrefix(r.Header.Get("Location"), "/console/login/"), "to the login form: %s", r.Header.Get("Location"))
			hx := anon.Do(t, rt.method, rt.path, form, "HX-Request", "true")
			assert.True(t, strings.HasPrefix(hx.Header.Get("HX-Redirect"), "/console/login/"), "htmx is sent to the login page whole")

			// A merchant's dashboard session, sent to the console: 403.
			r = anon.Do(t, rt.method, rt.path, form, "Cookie", "sika_dashboard="+merchantCookie)
			assert.Equal(t, http.StatusForbidden, r.Status, "a merchant session")
			assert.NotContains(t, r.Body, a.Merchant.Name)

			if rt.method == http.MethodPost {
				r = c.Do(t, rt.method, rt.path, form)
				assert.Equal(t, http.StatusForbidden, r.Status, "no CSRF token")
				r = c.Do(t, rt.method, rt.path, form, "X-CSRF-Token", "not the token")
				assert.Equal(t, http.StatusForbidden, r.Status, "a wrong CSRF token")
				if rt.tpl == "/console/logout/" {
					return
				}
				withToken := url.Values{"csrf_token": {csrf}}
				for k, v := range form {
					withToken[k] = v
				}
				r = c.Do(t, rt.method, rt.path, withToken)
				if rt.tpl == "/console/staff/role/" {
					assert.Equal(t, http.StatusBadRequest, r.Status, "an unknown member: %s", r.Body)
					return
				}
				assert.Equal(t, http.StatusNotFound, r.Status, "an unknown id: %s", r.Body)
				return
			}
			r = c.Get(t, rt.path)
			if rt.tpl == "/console/kyc/files/{sha256}.{ext}" || rt.tpl == "/console/flags/{id}/" {
				assert.Equal(t, http.StatusNotFound, r.Status, "an unknown file or flag (a flag's page: TestFlagRefundTwoPersonRule)")
				return
			}
			if rt.tpl == "/console/search/" {
				assert.Equal(t, http.StatusSeeOther, r.Status, "one match opens it")
				assert.Equal(t, "/console/transactions/"+id+"/", r.Header.Get("Location"))
				return
			}
			assert.Equal(t, http.StatusOK, r.Status, "signed in: %s", r.Body)
		})
	}

	t.Run("unknown ids are not found", func(t *testing.T) {
		for _, path := range []string{
			"/console/transactions/" + unknown + "/", "/console/transactions/not-a-uuid/",
			"/console/kyc/" + unknown + "/", "/console/merchants/" + unknown + "/", "/console/no-such-page/",
		} {
			assert.Equal(t, http.StatusNotFound, c.Get(t, path).Status, path)
		}
	})

	t.Run("suspension is recorded and shown", func(t *testing.T) {
		r := c.Do(t, http.MethodPost, "/console/merchants/"+a.Merchant.ID.String()+"/suspend/", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
		page := c.Get(t, "/console/merchants/"+a.Merchant.ID.String()+"/")
		assert.Contains(t, page.Body, `id="unsuspend"`)
		assert.Contains(t, page.Body, "Marchand suspendu")
		assert.Contains(t, page.Body, staff.Email, "who")
		r = c.Do(t, http.MethodPost, "/console/merchants/"+a.Merchant.ID.String()+"/unsuspend/", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
		assert.Contains(t, c.Get(t, "/console/merchants/"+a.Merchant.ID.String()+"/").Body, "Marchand réactivé")
	})
}
