package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sikahq/sika"
)

func TestBadInputNeverAnswers500(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	dash := acct.dashboard(sika.EnvironmentTest)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)

	cases := []struct {
		name          string
		method, path  string
		body          any
		headers       []string
		status        int
		code          string
		invalidFields []string
	}{
		{"invalid JSON", "POST", "/api/v1/api-keys/", `{"scope": "BOTH"`, dash, 400, "invalid_json", nil},
		{"not an object", "POST", "/api/v1/api-keys/", `["BOTH"]`, dash, 400, "", []string{"non_field_errors"}},
		{"JSON null", "POST", "/api/v1/api-keys/", `null`, dash, 400, "", []string{"non_field_errors"}},
		{"wrong types, every field reported", "POST", "/api/v1/auth/register/",
			`{"email": 5, "password": true, "full_name": {}, "business_name": [], "country": 1}`, nil, 400, "",
			[]string{"email", "password", "full_name", "business_name", "country"}},
		{"missing required fields", "POST", "/api/v1/auth/register/", `{}`, nil, 400, "",
			[]string{"email", "password", "full_name", "business_name", "country"}},
		{"unknown scope", "POST", "/api/v1/api-keys/", map[string]any{"scope": "ALL"}, dash, 400, "", []string{"scope"}},
		{"oversize body", "POST", "/api/v1/api-keys/", `{"name": "` + strings.Repeat("a", 1<<20) + `"}`, dash, 413, "request_too_large", nil},
		{"bad ip", "POST", "/api/v1/ip-whitelist/", map[string]any{"ip_address": "300.1.1.1"}, dash, 400, "", []string{"ip_address"}},
		{"bad fee mode", "PATCH", "/api/v1/merchant-settings/", map[string]any{"fee_charge_mode": "HALF"}, dash, 400, "", []string{"fee_charge_mode"}},
		{"bad override type", "PATCH", "/api/v1/merchant-settings/", map[string]any{"allow_client_override": "yes"}, dash, 400, "", []string{"allow_client_override"}},
		{"unknown id", "GET", "/api/v1/countries/7b1c3f2e-0000-4000-8000-000000000000/", nil, key, 404, "not_found", nil},
		{"malformed uuid", "GET", "/api/v1/networks/not-a-uuid/", nil, key, 404, "not_found", nil},
		{"malformed uuid on a write", "POST", "/api/v1/api-keys/123/revoke/", nil, dash, 404, "not_found", nil},
		{"unknown id on a delete", "DELETE", "/api/v1/ip-whitelist/7b1c3f2e-0000-4000-8000-000000000000/", nil, dash, 404, "not_found", nil},
		{"unknown route", "GET", "/api/v1/nothing-here/", nil, key, 404, "not_found", nil},
		{"wrong method", "DELETE", "/api/v1/networks/", nil, key, 405, "method_not_allowed", nil},
		{"bad X-Environment", "GET", "/api/v1/api-keys/", nil, append(bearer(acct.Token), "X-Environment", "PROD"), 400, "", []string{"X-Environment"}},
		{"bad email", "POST", "/api/v1/auth/register/", map[string]any{"email": "not an email", "password": "long enough password",
			"full_name": "A", "business_name": "B", "country": "BJ"}, nil, 400, "", []string{"email"}},
		{"unsupported country", "POST", "/api/v1/auth/register/", map[string]any{"email": "x@example.com", "password": "long enough password",
			"full_name": "A", "business_name": "B", "country": "FR"}, nil, 400, "", []string{"country"}},
		{"short password", "POST", "/api/v1/auth/register/", map[string]any{"email": "y@example.com", "password": "short",
			"full_name": "A", "business_name": "B", "country": "BJ"}, nil, 400, "", []string{"password"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.call(t, c.method, c.path, c.body, c.headers...)
			assert.Equal(t, c.status, r.Status, "%s", r.Body)
			assert.False(t, r.Env.Success)
			if c.code != "" {
				assert.Equal(t, c.code, r.code())
			}
			if c.invalidFields != nil {
				fields := r.fields()
				assert.Len(t, fields, len(c.invalidFields), "%s", r.Body)
				for _, f := range c.invalidFields {
					assert.NotEmpty(t, fields[f], "field %s in %s", f, r.Body)
				}
			}
			assert.NotEmpty(t, r.Header.Get("X-Request-Id"))
		})
	}
}

func TestTrailingSlashIsOptional(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	r := ts.call(t, "GET", "/api/v1/networks", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	assert.Equal(t, 200, r.Status)
	r = ts.call(t, "POST", "/api/v1/api-keys", map[string]any{"scope": "PAYIN", "name": "no slash"}, acct.dashboard(sika.EnvironmentTest)...)
	assert.Equal(t, 201, r.Status, "a POST without the slash is served, not redirected")
}

func TestRequestIDIsEchoed(t *testing.T) {
	ts := newTestServer(t)
	r := ts.call(t, "GET", "/api/v1/countries/", nil, "X-Request-Id", "req-123")
	assert.Equal(t, "req-123", r.Header.Get("X-Request-Id"))
	r = ts.call(t, "GET", "/api/v1/countries/", nil, "X-Request-Id", "bad id with spaces")
	assert.NotEqual(t, "bad id with spaces", r.Header.Get("X-Request-Id"))
	assert.NotEmpty(t, r.Header.Get("X-Request-Id"))
}

func TestPanicIsAnInternalError(t *testing.T) {
	ts := newTestServer(t)
	ts.mountProbe("/panic/", routeOpts{access: accessPublic}, func(http.ResponseWriter, *http.Request) error { panic("boom") })
	r := ts.call(t, "POST", "/api/v1/test/panic/", nil)
	assert.Equal(t, 500, r.Status)
	assert.Contains(t, string(r.Body), `"code":"internal_error"`)
	assert.NotContains(t, string(r.Body), "boom")
}
