package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
)

// testStore is the migrated store of this package's fresh database.
var testStore *store.Store

func TestMain(m *testing.M) {
	os.Exit(reportUnattributedExchanges(testenv.Run(m, func(env *testenv.Env) error {
		st, err := store.Open(context.Background(), env.DatabaseURL)
		if err != nil {
			return err
		}
		if _, err := st.Migrate(context.Background()); err != nil {
			return err
		}
		st.StartReadCache(context.Background()) // as `sika api` does
		testStore = st
		return nil
	})))
}

// testServer is the API served over real HTTP on loopback, against real Postgres; every
// response of a documented route, whoever asked, is validated against the OpenAPI document
// (validatedHandler).
type testServer struct {
	*Server
	url       string
	validator *openAPIValidator
}

func newTestServer(t *testing.T, configure ...func(*Config)) *testServer {
	t.Helper()
	cfg := Config{
		JWTSecret:          []byte("test secret of at least thirty-two bytes"),
		RateLimitPerMinute: 10000,
		Logger:             slog.New(slog.DiscardHandler),
	}
	for _, f := range configure {
		f(&cfg)
	}
	hs := httptest.NewUnstartedServer(nil)
	cfg.PublicURL = "http://" + hs.Listener.Addr().String()
	srv := NewServer(cfg, testStore)
	hs.Config.Handler = validatedHandler(srv, serverReport(t))
	hs.Start()
	t.Cleanup(hs.Close)
	return &testServer{Server: srv, url: hs.URL, validator: newOpenAPIValidator(t)}
}

// response is one answer with its decoded envelope.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	Env    struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   json.RawMessage `json:"error"`
	}
}

// code returns the business error code of the response ("" for success or a field map).
func (r *response) code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.Env.Error, &e)
	return e.Code
}

// fields returns the validation error map.
func (r *response) fields() map[string][]string {
	var m map[string][]string
	_ = json.Unmarshal(r.Env.Error, &m)
	return m
}

// data decodes the success payload into v.
func (r *response) data(t *testing.T, v any) {
	t.Helper()
	require.True(t, r.Env.Success, "want success, got %d %s", r.Status, r.Body)
	require.NoError(t, json.Unmarshal(r.Env.Data, v))
}

// call sends a request. body may be nil, a string (sent as is) or a value (sent as JSON).
// headers alternate name, value.
func (ts *testServer) call(t *testing.T, method, path string, body any, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	url := path
	if !strings.HasPrefix(path, "http") {
		url = ts.url + path
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	var token string
	if strings.HasPrefix(url, ts.url) {
		token = markExchange(req) // the server validates the exchange and tells this test
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := &response{Status: resp.StatusCode, Header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A live stream (GET /events/stream/, /request-logs/stream/) never ends: its status and
		// headers are the answer, and closing the body ends it on the server, which then gives
		// its verdict on the exchange.
		require.NoError(t, resp.Body.Close())
	} else {
		out.Body, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
	}
	if token != "" {
		validated, err := awaitExchange(token)
		require.True(t, validated, "%s %s: the test server gave no verdict on the exchange", method, path)
		if err != nil {
			t.Errorf("%v", err)
		}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if req.URL.Path != "/api/v1/countries/" && req.URL.Path != "/api/v1/countries" {
			require.NoError(t, json.Unmarshal(out.Body, &out.Env), "body: %s", out.Body)
		}
	}
	return out
}

func bearer(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

// account is a member with one merchant, a dashboard token and keys of every scope.
type account struct {
	Member   sika.Member
	Merchant sika.Merchant
	Token    string
	Keys     map[string]string // "TEST/BOTH" → secret
	KeyIDs   map[string]uuid.UUID
}

// dashboard returns the headers of a dashboard call in an environment.
func (a *account) dashboard(env sika.Environment) []string {
	return append(bearer(a.Token), "X-Environment", string(env))
}

func (a *account) key(env sika.Environment, scope sika.Scope) []string {
	return bearer(a.Keys[string(env)+"/"+string(scope)])
}

// newAccount registers a member with an active merchant and creates keys of every scope in both
// environments, straight through the store.
func (ts *testServer) newAccount(t *testing.T, active bool) *account {
	t.Helper()
	ctx := context.Background()
	hash, err := sika.HashPassword("correct horse battery")
	require.NoError(t, err)
	email := "m-" + uuid.NewString()[:8] + "@example.com"
	member, merchant, err := testStore.RegisterMember(ctx, email, hash, "Test Member", "",
		&store.NewMerchant{Name: "Shop " + email, Country: "BJ"})
	require.NoError(t, err)
	if active {
		require.NoError(t, testStore.SetMerchantStatus(ctx, merchant.ID, sika.KYCVerified, true))
	}
	tok, _, err := ts.issueToken(member)
	require.NoError(t, err)
	a := &account{Member: member, Merchant: *merchant, Token: tok, Keys: map[string]string{}, KeyIDs: map[string]uuid.UUID{}}
	for _, env := range []sika.Environment{sika.EnvironmentTest, sika.EnvironmentLive} {
		for _, scope := range []sika.Scope{sika.ScopePayin, sika.ScopePayout, sika.ScopeBoth} {
			k, err := testStore.CreateAPIKey(ctx, merchant.ID, env, scope, "test", &member.ID)
			require.NoError(t, err)
			a.Keys[string(env)+"/"+string(scope)] = k.Secret
			a.KeyIDs[string(env)+"/"+string(scope)] = k.ID
		}
	}
	return a
}

// fixedClock is a clock tests move by hand.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time { return c.t }
