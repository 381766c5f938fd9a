package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// TestCallAsMember: the dashboard's in-process calls act as the member's dashboard session would,
// with its tenancy, and no more.
func TestCallAsMember(t *testing.T) {
	ts := newTestServer(t)
	a, other := ts.newAccount(t, true), ts.newAccount(t, true)
	browser := httptest.NewRequest(http.MethodGet, "/dashboard/", nil)
	browser.RemoteAddr = "203.0.113.9:4321"

	// A dashboard-only route works, in the environment asked for.
	ans, err := ts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodPost, Path: "/api-keys/", Body: map[string]any{"name": "from the dashboard", "scope": "PAYIN"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, ans.Status, "%s", ans.Body)
	var key struct {
		Secret      string           `json:"key"`
		Environment sika.Environment `json:"environment"`
	}
	require.NoError(t, ans.Decode(&key))
	assert.Equal(t, sika.EnvironmentTest, key.Environment)
	assert.Regexp(t, `^sk_test_`, key.Secret)

	// Validation errors come back as fields.
	ans, err = ts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodPost, Path: "/api-keys/", Body: map[string]any{"name": "x", "scope": "NOPE"}})
	require.NoError(t, err)
	err = ans.Decode(nil)
	require.Error(t, err)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err))
	assert.Contains(t, err.(*sika.Error).Fields, "scope")

	// Another merchant's id is not the member's: 404, as over HTTP.
	ans, err = ts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: other.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodGet, Path: "/api-keys/"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, ans.Status)
	assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(ans.Decode(nil)))

	// A member who is not staff cannot reach a staff route this way either.
	ans, err = ts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodGet, Path: "/admin/money-flags/"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, ans.Status)

	// A member who no longer exists is refused.
	ghost := a.Member
	ghost.ID = uuid.New()
	ans, err = ts.CallAsMember(browser, webapp.APICall{Member: ghost, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodGet, Path: "/api-keys/"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, ans.Status)

	// A raw body goes as it is: a KYC file, multipart, to the upload the API has.
	kts, _ := kycServer(t)
	body, ct := multipartFile(t, "file", "id.png", "image/png", kycPNG(t))
	ans, err = kts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodPost, Path: "/merchant-kyc/upload/", RawBody: bytes.NewReader(body), ContentType: ct})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, ans.Status, "%s", ans.Body)
	var up kycFileUpload
	require.NoError(t, ans.Decode(&up))
	assert.Equal(t, "image/png", up.ContentType)
	body, ct = multipartFile(t, "file", "id.png", "image/png", kycEXE())
	ans, err = kts.CallAsMember(browser, webapp.APICall{Member: a.Member, Merchant: a.Merchant.ID, Environment: sika.EnvironmentTest,
		Method: http.MethodPost, Path: "/merchant-kyc/upload/", RawBody: bytes.NewReader(body), ContentType: ct})
	require.NoError(t, err)
	assert.Equal(t, sika.CodeUnsupportedMediaType, sika.ErrorCode(ans.Decode(nil)), "the API's rule: the type is read from the bytes")
}
