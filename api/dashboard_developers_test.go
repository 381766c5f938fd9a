package api

import (
	"html"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

var secretInputPattern = regexp.MustCompile(`id="(new-key-secret|new-endpoint-secret|new-signing-secret)" type="text" readonly value="([^"]+)"`)

// shownSecret is the secret a page shows once.
func shownSecret(t *testing.T, body, id string) string {
	t.Helper()
	for _, m := range secretInputPattern.FindAllStringSubmatch(body, -1) {
		if m[1] == id {
			return m[2]
		}
	}
	t.Fatalf("no secret %s in the page", id)
	return ""
}

// TestDashboardAPIKeysAndWhitelist: a key is created with its scope and environment through the
// API's rule, its secret shown in that answer only and usable at once with plain HTTP; it is
// revoked. The IP whitelist takes an address, says in the page's language why it refuses one,
// and removes it.
func TestDashboardAPIKeysAndWhitelist(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	c := dashLoggedIn(t, ts.url, acct)

	page := c.Get(t, "/dashboard/developers/")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Contains(t, page.Body, html.EscapeString("Clés d'API"))
	assert.NotContains(t, page.Body, acct.Keys["LIVE/BOTH"], "a list never shows a secret")

	r := c.post(t, "/dashboard/developers/api-keys/", url.Values{"name": {"Boutique"}, "scope": {"PAYIN"}, "environment": {"TEST"}})
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	secret := shownSecret(t, r.Body, "new-key-secret")
	assert.True(t, strings.HasPrefix(secret, "sk_test_"), "a TEST key from a LIVE session: the environment the form chose")
	assert.Contains(t, r.Body, "ne sera plus jamais affichée")
	api := ts.call(t, "GET", "/api/v1/networks/?page_size=1", nil, bearer(secret)...)
	assert.Equal(t, http.StatusOK, api.Status, "the new key works at once: %s", api.Body)
	assert.NotContains(t, c.Get(t, "/dashboard/developers/").Body, secret, "shown once, never again")

	r = c.post(t, "/dashboard/developers/api-keys/", url.Values{"name": {"x"}, "scope": {"EVERYTHING"}, "environment": {"LIVE"}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Body, `id="key-scope-error"`, "the API's field error, beside the field")
	assert.Contains(t, r.Body, "Corrigez les champs signalés.")

	// Revoke the TEST key: it is listed in TEST, where the session switches.
	require.Equal(t, http.StatusSeeOther, c.post(t, "/dashboard/environment/", url.Values{"environment": {"TEST"}}).Status)
	keys, _, err := testStore.ListAPIKeys(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 100})
	require.NoError(t, err)
	var created sika.APIKey
	for _, k := range keys {
		if k.Name == "Boutique" {
			created = k
		}
	}
	require.NotEqual(t, uuid.Nil, created.ID)
	assert.Equal(t, sika.ScopePayin, created.Scope)
	r = c.post(t, "/dashboard/developers/api-keys/"+created.ID.String()+"/revoke/", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Equal(t, "/dashboard/developers/?done=done_key_revoked", r.Header.Get("Location"))
	assert.Equal(t, http.StatusUnauthorized, ts.call(t, "GET", "/api/v1/networks/", nil, bearer(secret)...).Status, "revoked")
	assert.Contains(t, c.Get(t, "/dashboard/developers/?done=done_key_revoked").Body, "Clé révoquée")

	// The whitelist of the environment.
	r = c.post(t, "/dashboard/developers/ip-whitelist/", url.Values{"ip_address": {"not an address"}, "description": {""}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Body, `id="ip-address-error"`)
	assert.Contains(t, r.Body, "Saisissez une adresse IPv4 ou IPv6, ou une plage CIDR.", "the API's message, in French")
	assert.Contains(t, r.Body, `value="not an address"`, "the form keeps what was typed")
	r = c.post(t, "/dashboard/developers/ip-whitelist/", url.Values{"ip_address": {""}})
	assert.Contains(t, r.Body, "Ce champ est obligatoire.")
	r = c.post(t, "/dashboard/developers/ip-whitelist/", url.Values{"ip_address": {"198.51.100.0/24"}, "description": {"Bureau"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	entries, _, err := testStore.ListIPWhitelist(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Contains(t, c.Get(t, "/dashboard/developers/").Body, "198.51.100.0/24")
	r = c.post(t, "/dashboard/developers/ip-whitelist/"+entries[0].ID.String()+"/delete/", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.NotContains(t, c.Get(t, "/dashboard/developers/").Body, "198.51.100.0/24")

	// English: the same refusal, in English.
	c.Get(t, "/dashboard/developers/?lang=en")
	r = c.post(t, "/dashboard/developers/ip-whitelist/", url.Values{"ip_address": {""}})
	assert.Contains(t, r.Body, "This field is required.")
	assert.Contains(t, r.Body, "Correct the fields shown.")
}

// TestDashboardWebhookEndpoints: an endpoint is created with its secret shown once, its URL
// checked by the API's rule; its secret rotated (shown once); disabled and enabled; deleted.
func TestDashboardWebhookEndpoints(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	c := dashLoggedIn(t, ts.url, acct)

	r := c.post(t, "/dashboard/developers/webhooks/", url.Values{"url": {"http://127.0.0.1/hook"}, "description": {""}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "LIVE: https and a public address")
	assert.Contains(t, r.Body, `id="endpoint-url-error"`)

	r = c.post(t, "/dashboard/developers/webhooks/", url.Values{"url": {"https://93.184.216.34/hooks"}, "description": {"Production"}})
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	secret := shownSecret(t, r.Body, "new-endpoint-secret")
	assert.True(t, strings.HasPrefix(secret, "whsec_"))
	endpoints, _, err := testStore.ListWebhookEndpoints(t.Context(), acct.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, endpoints, 1)
	path := "/dashboard/developers/webhooks/" + endpoints[0].ID.String() + "/"

	page := c.Get(t, path)
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.NotContains(t, page.Body, secret)
	assert.Contains(t, page.Body, `id="no-delivery"`)

	r = c.post(t, path+"rotate-secret/", nil)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	rotated := shownSecret(t, r.Body, "new-signing-secret")
	assert.NotEqual(t, secret, rotated)
	assert.Contains(t, r.Body, "24 heures")
	assert.NotContains(t, c.Get(t, path).Body, rotated)

	r = c.post(t, path+"active/", url.Values{"is_active": {"false"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	e, err := testStore.WebhookEndpointByID(t.Context(), acct.Merchant.ID, sika.EnvironmentLive, endpoints[0].ID)
	require.NoError(t, err)
	assert.False(t, e.IsActive)
	assert.Contains(t, c.Get(t, path).Body, `id="enable-endpoint"`)
	require.Equal(t, http.StatusSeeOther, c.post(t, path+"active/", url.Values{"is_active": {"true"}}).Status)
	e, err = testStore.WebhookEndpointByID(t.Context(), acct.Merchant.ID, sika.EnvironmentLive, endpoints[0].ID)
	require.NoError(t, err)
	assert.True(t, e.IsActive)

	r = c.post(t, path+"redeliver/", url.Values{"event": {"evt_00000000000000000000000000"}})
	assert.Equal(t, http.StatusNotFound, r.Status, "an event that is not the merchant's")

	require.Equal(t, http.StatusSeeOther, c.post(t, path+"delete/", nil).Status)
	assert.Equal(t, http.StatusNotFound, c.Get(t, path).Status)
	assert.Contains(t, c.Get(t, "/dashboard/developers/events/").Body, `id="no-event"`)
}

// TestDashboardSettings: the fee settings of the environment are read and changed through
// GET/PATCH /merchant-settings/; the team lists the merchant's members.
func TestDashboardSettings(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	c := dashLoggedIn(t, ts.url, acct)

	page := c.Get(t, "/dashboard/settings/")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Contains(t, page.Body, acct.Member.Email, "the team")
	assert.Contains(t, page.Body, "propriétaire")

	r := c.post(t, "/dashboard/settings/", url.Values{"fee_charge_mode": {"SOMETIMES"}, "allow_client_override_shown": {"1"}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Body, `id="fee-mode-error"`)

	r = c.post(t, "/dashboard/settings/", url.Values{"fee_charge_mode": {"ADD_ON"}, "allow_client_override": {"true"}, "allow_client_override_shown": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	st, err := testStore.MerchantSettings(t.Context(), acct.Merchant.ID, sika.EnvironmentLive)
	require.NoError(t, err)
	assert.Equal(t, sika.FeeAddOn, st.FeeChargeMode)
	assert.True(t, st.AllowClientOverride)
	assert.Contains(t, c.Get(t, "/dashboard/settings/?done=done_settings_saved").Body, "Paramètres enregistrés.")

	// Unticked: the box is absent from the form, and that means false.
	r = c.post(t, "/dashboard/settings/", url.Values{"fee_charge_mode": {"DEDUCTED"}, "allow_client_override_shown": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	st, err = testStore.MerchantSettings(t.Context(), acct.Merchant.ID, sika.EnvironmentLive)
	require.NoError(t, err)
	assert.Equal(t, sika.FeeDeducted, st.FeeChargeMode)
	assert.False(t, st.AllowClientOverride)
	test, err := testStore.MerchantSettings(t.Context(), acct.Merchant.ID, sika.EnvironmentTest)
	require.NoError(t, err)
	assert.False(t, test.AllowClientOverride, "TEST keeps its own settings")
}

// TestDashboardKYC: a dossier is submitted through POST /merchant-kyc/ (its validation said
// beside the form), documents are uploaded as a browser without JavaScript sends them (the file
// streamed to the API's upload, its type checked on the bytes), and the review shows.
func TestDashboardKYC(t *testing.T) {
	ts, _ := kycServer(t)
	acct := ts.newAccount(t, false)
	c := dashLoggedIn(t, ts.url, acct)

	page := c.Get(t, "/dashboard/kyc/")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Contains(t, page.Body, `id="no-dossier"`)
	assert.Contains(t, page.Body, `id="dossier-form"`)
	assert.NotContains(t, page.Body, `id="document-form"`)

	r := c.post(t, "/dashboard/kyc/", url.Values{"kyc_type": {"INDIVIDUAL"}, "first_name": {"Awa"}, "date_of_birth": {"2999-01-01"}})
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Body, `id="kyc-date-of-birth-error"`)
	assert.Contains(t, r.Body, `value="Awa"`)

	r = c.post(t, "/dashboard/kyc/", url.Values{"kyc_type": {"INDIVIDUAL"}, "first_name": {"Awa"}, "last_name": {"Diop"}, "date_of_birth": {"1990-04-02"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	dossiers, _, err := testStore.ListKYCDossiers(t.Context(), acct.Merchant.ID, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, dossiers, 1)
	d := dossiers[0]
	page = c.Get(t, "/dashboard/kyc/")
	assert.Contains(t, page.Body, `id="document-form"`)
	assert.NotContains(t, page.Body, `id="dossier-form"`, "one dossier at a time while it is reviewed")
	assert.Contains(t, page.Body, `data-max-size="10485760"`, "the browser's check has the API's limit")
	path := "/dashboard/kyc/" + d.ID.String() + "/documents/"
	token := c.csrf(t)

	// A PNG, sent as a form: the token first, then the fields, then the file.
	r = c.Upload(t, path, [][2]string{{"csrf_token", token}, {"document_type", "ID_CARD"}, {"label", "Recto"}}, "recto.png", kycPNG(t))
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	d, err = testStore.KYCDossierByID(t.Context(), acct.Merchant.ID, d.ID)
	require.NoError(t, err)
	require.Len(t, d.Documents, 1)
	assert.Equal(t, sika.KYCDocumentIDCard, d.Documents[0].DocumentType)
	assert.Equal(t, "Recto", d.Documents[0].Label)
	assert.Contains(t, d.Documents[0].FileURL, ".png")
	assert.Contains(t, c.Get(t, "/dashboard/kyc/").Body, html.EscapeString("Carte d'identité · Recto"))

	// The token in the header (the script's way) works too; a PDF.
	r = c.Upload(t, path, [][2]string{{"document_type", "FISCAL"}}, "ifu.pdf", kycPDF(), "X-CSRF-Token", token)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)

	// Not an allowed type, whatever its name says: the API's rule, said beside the form.
	r = c.Upload(t, path, [][2]string{{"csrf_token", token}, {"document_type", "PASSPORT"}}, "passport.png", kycEXE())
	assert.Equal(t, http.StatusUnsupportedMediaType, r.Status)
	assert.Contains(t, r.Body, "ni une image JPEG, PNG ou WebP, ni un PDF")
	// No file, an unknown document type: the API's field errors.
	r = c.Upload(t, path, [][2]string{{"csrf_token", token}, {"document_type", "DIPLOMA"}}, "", nil)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.Body, `id="document-type-error"`)

	// Without the token, or with the token after the file: refused before anything is stored.
	r = c.Upload(t, path, [][2]string{{"document_type", "OTHER"}}, "x.png", kycPNG(t))
	assert.Equal(t, http.StatusForbidden, r.Status)
	r = c.Upload(t, path, [][2]string{{"csrf_token", "forged"}}, "x.png", kycPNG(t))
	assert.Equal(t, http.StatusForbidden, r.Status)
	r = c.Upload(t, path, [][2]string{{"csrf_token", token}}, "x.png", kycPNG(t), "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, r.Status)

	// Another merchant's dossier is not found, and nothing of the file is kept for it.
	other := ts.newAccount(t, false)
	theirs, err := testStore.SubmitKYCDossier(t.Context(), sika.KYCDossier{Merchant: other.Merchant.ID, KYCType: sika.KYCIndividual}, other.Member.ID)
	require.NoError(t, err)
	r = c.Upload(t, "/dashboard/kyc/"+theirs.ID.String()+"/documents/", [][2]string{{"csrf_token", token}, {"document_type", "OTHER"}}, "x.png", kycJPEG(t))
	assert.Equal(t, http.StatusNotFound, r.Status)
	docs, err := testStore.KYCDocuments(t.Context(), other.Merchant.ID, theirs.ID)
	require.NoError(t, err)
	assert.Empty(t, docs)

	// Support rejects with a note: the page shows it, and a new dossier may be sent.
	staff := newStaffMember(t)
	_, err = testStore.ReviewKYCDossier(t.Context(), d.ID, staff.ID, sika.KYCDossierRejected, "Le recto est illisible.")
	require.NoError(t, err)
	page = c.Get(t, "/dashboard/kyc/")
	assert.Contains(t, page.Body, "Le recto est illisible.")
	assert.Contains(t, page.Body, "Refusé")
	assert.Contains(t, page.Body, `id="dossier-form"`)
}

// sweepRoute is a route of TestDashboardTenancySweep: a method, its template, a path and form.
type sweepRoute struct {
	method, tpl, path string
	form              url.Values
}

// developerSweep is what TestDashboardTenancySweep sweeps of the developers, KYC and settings
// pages: a's routes with a's own ids (LIVE), and a check that b's ids, and a's ids of the
// other environment, are not found by a's session, and that nothing of b's changed.
type developerSweep struct {
	routes  []sweepRoute
	foreign func(t *testing.T, c *dashClient)
}

func newDeveloperSweep(t *testing.T, ts *testServer, a, b *account) developerSweep {
	t.Helper()
	ctx := t.Context()
	type owned struct{ ip, endpoint, testEndpoint, event, dossier string }
	own := func(acct *account) owned {
		var o owned
		ip, err := testStore.AddIPWhitelistEntry(ctx, acct.Merchant.ID, sika.EnvironmentLive, netipPrefix(t, "198.51.100.7/32"), "office")
		require.NoError(t, err)
		o.ip = ip.ID.String()
		for _, env := range []sika.Environment{sika.EnvironmentLive, sika.EnvironmentTest} {
			e, err := testStore.CreateWebhookEndpoint(ctx, sika.WebhookEndpoint{Merchant: acct.Merchant.ID, Environment: env, IsActive: true,
				URL: "https://93.184.216.34/hooks"}, "whsec_c3dlZXAgc2VjcmV0IG9mIHRoZSB0ZW5hbmN5IHN3ZWVw")
			require.NoError(t, err)
			if env == sika.EnvironmentLive {
				o.endpoint = e.ID.String()
			} else {
				o.testEndpoint = e.ID.String()
			}
		}
		sweepFund(t, acct, sika.EnvironmentLive)
		events, _, err := testStore.ListEvents(ctx, acct.Merchant.ID, sika.EnvironmentLive, sika.ScopeBoth, store.KeysetRequest{Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, events)
		o.event = events[0].ID
		d, err := testStore.SubmitKYCDossier(ctx, sika.KYCDossier{Merchant: acct.Merchant.ID, KYCType: sika.KYCIndividual, FirstName: "Awa"}, acct.Member.ID)
		require.NoError(t, err)
		o.dossier = d.ID.String()
		return o
	}
	mine, theirs := own(a), own(b)
	key := a.KeyIDs["LIVE/BOTH"].String()
	dev := "/dashboard/developers/"
	routes := []sweepRoute{
		{"GET", dev, dev, nil},
		{"POST", dev + "api-keys/", dev + "api-keys/", url.Values{"name": {"k"}, "scope": {"BOTH"}, "environment": {"LIVE"}}},
		{"POST", dev + "api-keys/{id}/revoke/", dev + "api-keys/" + key + "/revoke/", url.Values{}},
		{"POST", dev + "ip-whitelist/", dev + "ip-whitelist/", url.Values{"ip_address": {"198.51.100.8"}}},
		{"POST", dev + "ip-whitelist/{id}/delete/", dev + "ip-whitelist/" + mine.ip + "/delete/", url.Values{}},
		{"POST", dev + "webhooks/", dev + "webhooks/", url.Values{"url": {"https://93.184.216.34/x"}}},
		{"GET", dev + "webhooks/{id}/", dev + "webhooks/" + mine.endpoint + "/", nil},
		{"POST", dev + "webhooks/{id}/rotate-secret/", dev + "webhooks/" + mine.endpoint + "/rotate-secret/", url.Values{}},
		{"POST", dev + "webhooks/{id}/active/", dev + "webhooks/" + mine.endpoint + "/active/", url.Values{"is_active": {"false"}}},
		{"POST", dev + "webhooks/{id}/delete/", dev + "webhooks/" + mine.endpoint + "/delete/", url.Values{}},
		{"POST", dev + "webhooks/{id}/redeliver/", dev + "webhooks/" + mine.endpoint + "/redeliver/", url.Values{"event": {mine.event}}},
		{"GET", dev + "events/", dev + "events/", nil},
		{"GET", dev + "events/{id}/", dev + "events/" + mine.event + "/", nil},
		{"POST", dev + "events/{id}/redeliver/", dev + "events/" + mine.event + "/redeliver/", url.Values{}},
		{"GET", "/dashboard/kyc/", "/dashboard/kyc/", nil},
		{"POST", "/dashboard/kyc/", "/dashboard/kyc/", url.Values{"kyc_type": {"INDIVIDUAL"}}},
		{"POST", "/dashboard/kyc/{id}/documents/", "/dashboard/kyc/" + mine.dossier + "/documents/", url.Values{"document_type": {"OTHER"}}},
		{"GET", "/dashboard/settings/", "/dashboard/settings/", nil},
		{"POST", "/dashboard/settings/", "/dashboard/settings/", url.Values{"fee_charge_mode": {"ADD_ON"}}},
	}
	foreign := func(t *testing.T, c *dashClient) {
		for _, path := range []string{
			dev + "webhooks/" + theirs.endpoint + "/",
			dev + "webhooks/" + mine.testEndpoint + "/", // the other environment
			dev + "webhooks/not-a-uuid/",
			dev + "events/" + theirs.event + "/",
			dev + "events/evt_not-an-event/",
			dev + "events/?after=nonsense",
		} {
			assert.Equal(t, http.StatusNotFound, c.Get(t, path).Status, path)
		}
		for path, form := range map[string]url.Values{
			dev + "api-keys/" + b.KeyIDs["LIVE/BOTH"].String() + "/revoke/": {},
			dev + "api-keys/" + a.KeyIDs["TEST/BOTH"].String() + "/revoke/": {}, // the other environment
			dev + "ip-whitelist/" + theirs.ip + "/delete/":                  {},
			dev + "webhooks/" + theirs.endpoint + "/rotate-secret/":         {},
			dev + "webhooks/" + theirs.endpoint + "/active/":                {"is_active": {"false"}},
			dev + "webhooks/" + theirs.endpoint + "/delete/":                {},
			dev + "webhooks/" + theirs.endpoint + "/redeliver/":             {"event": {theirs.event}},
			dev + "webhooks/" + mine.endpoint + "/redeliver/":               {"event": {theirs.event}},
			dev + "events/" + theirs.event + "/redeliver/":                  {},
		} {
			assert.Equal(t, http.StatusNotFound, c.post(t, path, form).Status, path)
		}
		r := c.Upload(t, "/dashboard/kyc/"+theirs.dossier+"/documents/", [][2]string{{"csrf_token", c.csrf(t)}, {"document_type", "OTHER"}}, "x.pdf", kycPDF())
		assert.Equal(t, http.StatusNotFound, r.Status)

		// Nothing of b's changed.
		keys, _, err := testStore.ListAPIKeys(ctx, b.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 10})
		require.NoError(t, err)
		for _, k := range keys {
			assert.Nil(t, k.RevokedAt)
		}
		e, err := testStore.WebhookEndpointByID(ctx, b.Merchant.ID, sika.EnvironmentLive, uuid.MustParse(theirs.endpoint))
		require.NoError(t, err)
		assert.True(t, e.IsActive)
		ips, _, err := testStore.ListIPWhitelist(ctx, b.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 10})
		require.NoError(t, err)
		assert.Len(t, ips, 1)
		for _, page := range []string{dev, dev + "events/", "/dashboard/kyc/", "/dashboard/settings/"} {
			body := c.Get(t, page).Body
			assert.NotContains(t, body, theirs.endpoint, page)
			assert.NotContains(t, body, theirs.event, page)
			assert.NotContains(t, body, theirs.dossier, page)
			assert.NotContains(t, body, b.Member.Email, page)
		}
	}
	return developerSweep{routes: routes, foreign: foreign}
}

func netipPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	require.NoError(t, err)
	return p
}

// TestDashboardActionRefused: a button whose action the API refuses for a business reason (here
// the merchant's request rate) comes back to its page, which says why in its language.
func TestDashboardActionRefused(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.RateLimitPerMinute = 1 })
	acct := ts.newAccount(t, true)
	c := dashLoggedIn(t, ts.url, acct)
	key := "/dashboard/developers/api-keys/" + acct.KeyIDs["LIVE/PAYIN"].String() + "/revoke/"
	require.Equal(t, http.StatusSeeOther, c.post(t, key, nil).Status, "within the rate")
	r := c.post(t, "/dashboard/developers/api-keys/"+acct.KeyIDs["LIVE/PAYOUT"].String()+"/revoke/", nil)
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	assert.Equal(t, "/dashboard/developers/?refused=rate_limited", r.Header.Get("Location"))
	page := c.Get(t, r.Header.Get("Location"))
	assert.Contains(t, page.Body, `id="refused"`)
	assert.Contains(t, page.Body, "Trop de demandes. Réessayez dans une minute.")
	keys, _, err := testStore.ListAPIKeys(t.Context(), acct.Merchant.ID, sika.EnvironmentLive, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	for _, k := range keys {
		if k.ID == acct.KeyIDs["LIVE/PAYOUT"] {
			assert.Nil(t, k.RevokedAt, "refused: not revoked")
		}
	}
	other := c.Get(t, "/dashboard/developers/?refused=%3Cb%3Ebold%3C%2Fb%3E").Body
	assert.Contains(t, other, html.EscapeString("L'opération a été refusée."), "an unknown code is the general message")
	assert.NotContains(t, other, "<b>bold</b>", "and never the query's text as markup")
}
