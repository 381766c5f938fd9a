package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sikahq/sika"
)

const docTestPublicURL = "https://pay.example"

// newDocTestServer builds the server without a store: enough for every route that answers
// before reaching the database (authentication failures, validation, health, documents).
func newDocTestServer(cfg Config) *Server {
	cfg.PublicURL = docTestPublicURL
	cfg.JWTSecret = []byte("openapi test secret")
	cfg.Logger = slog.New(slog.DiscardHandler)
	return NewServer(cfg, nil)
}

// serveChecked runs one request through the server and validates the response against the document.
func serveChecked(t *testing.T, v *openAPIValidator, srv *Server, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	v.check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	v := newOpenAPIValidator(t) // loads and validates with kin-openapi
	if v.doc.OpenAPI != "3.1.0" || v.doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %q, info.version %q; want 3.1.0 and 1.0.0", v.doc.OpenAPI, v.doc.Info.Version)
	}
	if len(v.doc.Servers) != 1 || v.doc.Servers[0].URL != basePath {
		t.Errorf("servers = %v; want one, %s", v.doc.Servers, basePath)
	}
	for path, item := range v.doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" || op.Summary == "" || len(op.Tags) != 1 {
				t.Errorf("%s: want an operationId, a summary and one tag", where)
			}
			if op.Security == nil {
				t.Errorf("%s: security must be explicit ([] for a public operation)", where)
			}
			if op.Responses.Status(http.StatusInternalServerError) == nil && item.Servers == nil {
				t.Errorf("%s: every operation under %s can answer 500", where, basePath)
			}
		}
	}
}

// TestOpenAPIErrorCodes keeps the Error schema's enum equal to the codes of package sika (read
// from its source, so that a new code fails here until the document has it), and each error
// response's codes to those statusOf gives its status.
func TestOpenAPIErrorCodes(t *testing.T) {
	v := newOpenAPIValidator(t)
	var documented []string
	for _, c := range v.doc.Components.Schemas["Error"].Value.Properties["code"].Value.Enum {
		documented = append(documented, c.(string))
	}
	rendered := sikaCodes(t)
	want := make([]string, len(rendered))
	for i, c := range rendered {
		want[i] = string(c)
	}
	slices.Sort(documented)
	slices.Sort(want)
	if !slices.Equal(documented, want) {
		t.Errorf("Error.code enum = %v\nwant the codes of package sika (but validation_error, a field map) = %v", documented, want)
	}
	// Each error response allows the codes whose status (statusOf) is its own.
	for status, ref := range map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
		405: "MethodNotAllowed", 409: "Conflict", 413: "PayloadTooLarge", 415: "UnsupportedMediaType",
		422: "UnprocessableEntity", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"} {
		for _, c := range rendered {
			body := fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":"m"}}`, c)
			err := validateWithResponse(t, v, ref, status, body)
			if ok := statusOf(c) == status; ok != (err == nil) {
				t.Errorf("response %s (%d) with code %s: accepted = %v, want %v (%v)", ref, status, c, err == nil, ok, err)
			}
		}
	}
}

// sikaCodes are the constants of type Code in package sika (errors.go), but validation_error,
// which is rendered as a field map.
func sikaCodes(t *testing.T) []sika.Code {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "../errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []sika.Code
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != 1 {
			return true
		}
		typ, _ := spec.Type.(*ast.Ident)
		lit, _ := spec.Values[0].(*ast.BasicLit)
		if typ == nil || typ.Name != "Code" || lit == nil || lit.Kind != token.STRING {
			return true
		}
		if c, err := strconv.Unquote(lit.Value); err == nil && sika.Code(c) != sika.CodeValidation {
			codes = append(codes, sika.Code(c))
		}
		return true
	})
	if len(codes) < 30 {
		t.Fatalf("found only %d codes in ../errors.go", len(codes))
	}
	return codes
}

// validateWithResponse validates a body against a response of components.responses.
func validateWithResponse(t *testing.T, v *openAPIValidator, name string, status int, body string) error {
	t.Helper()
	if v.doc.Components.Responses[name] == nil {
		t.Fatalf("no response %s in components", name)
	}
	req := httptest.NewRequest(http.MethodGet, "/no-such-route", nil)
	header := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"r"}, "Retry-After": {"1"},
		"Ratelimit-Limit": {"1"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"1"}}
	return v.validateResponse(v.routerResponse(req, status, name), nil, req, status, header, []byte(body))
}

// TestOpenAPIRouteCoverage: every route of the router is an operation of the document, and
// every operation of the document is routed, at each of its servers.
func TestOpenAPIRouteCoverage(t *testing.T) {
	v := newOpenAPIValidator(t)
	srv := newDocTestServer(Config{})
	routed := map[string]bool{}
	err := srv.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil // the /api/v1 prefix of the subrouter matches no method by itself
		}
		tpl = muxVariables.ReplaceAllString(tpl, "{$1}")
		if strings.HasPrefix(tpl, basePath+"/") && !strings.HasSuffix(tpl, "/") && !strings.Contains(path.Base(tpl), ".") {
			t.Errorf("route %s is unreachable: ServeHTTP ends every path under %s with a slash", tpl, basePath)
		}
		for _, m := range methods {
			routed[m+" "+tpl] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for docPath, item := range v.doc.Paths.Map() {
		servers := item.Servers
		if len(servers) == 0 {
			servers = v.doc.Servers
		}
		for method := range item.Operations() {
			for _, s := range servers {
				full := strings.TrimSuffix(s.URL, "/") + docPath
				if strings.HasPrefix(full, basePath+"/") && !strings.HasSuffix(full, "/") && !strings.Contains(path.Base(full), ".") {
					full += "/" // served as this path with its slash (ServeHTTP)
				}
				documented[method+" "+full] = true
			}
		}
	}
	if len(routed) < 20 {
		t.Fatalf("walked only %d routes: %v", len(routed), routed)
	}
	for _, r := range slices.Sorted(maps.Keys(routed)) {
		if !documented[r] {
			t.Errorf("route %s is not in the OpenAPI document (api/openapi.yaml)", r)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(documented)) {
		if !routed[d] {
			t.Errorf("operation %s of the OpenAPI document is not routed (api/routes.go)", d)
		}
	}
}

var (
	// muxVariables matches a gorilla/mux path variable with its pattern, `{id:[0-9]+}`.
	muxVariables = regexp.MustCompile(`\{([^{}:]+):[^{}]*\}`)
	// pathParameters matches an OpenAPI path parameter, `{id}`.
	pathParameters = regexp.MustCompile(`\{[^{}]+\}`)
)

// TestOpenAPISecurityMatchesRoutes calls every operation under /api/v1 without credentials: a
// secured operation must answer 401 authentication_required, a public one anything else. With a
// malformed token, a secured one answers 401 invalid_credentials. Every answer is validated.
func TestOpenAPISecurityMatchesRoutes(t *testing.T) {
	v := newOpenAPIValidator(t)
	srv := newDocTestServer(Config{})
	for path, item := range v.doc.Paths.Map() {
		if item.Servers != nil {
			continue
		}
		for method, op := range item.Operations() {
			target := basePath + pathParameters.ReplaceAllString(path, "0b7c6a4e-8d43-4c1f-9d8e-2f1a3b4c5d6e")
			t.Run(method+" "+path, func(t *testing.T) {
				rec := serveChecked(t, v, srv, httptest.NewRequest(method, target, nil))
				secured := op.Security != nil && len(*op.Security) > 0
				if got := rec.Code == http.StatusUnauthorized; got != secured {
					t.Errorf("without credentials: %d %s; the document says secured = %v", rec.Code, rec.Body, secured)
				}
				if !secured {
					return
				}
				if code := openAPIErrorCode(t, rec.Body.Bytes()); code != string(sika.CodeAuthenticationNeeded) {
					t.Errorf("without credentials: code %q", code)
				}
				for _, auth := range []string{"Bearer not-a-token", "Bearer sk_test_short", "Basic abc"} {
					req := httptest.NewRequest(method, target, nil)
					req.Header.Set("Authorization", auth)
					rec := serveChecked(t, v, srv, req)
					if code := openAPIErrorCode(t, rec.Body.Bytes()); rec.Code != http.StatusUnauthorized || code != string(sika.CodeInvalidCredentials) {
						t.Errorf("%s: %d %s; want 401 invalid_credentials", auth, rec.Code, code)
					}
				}
			})
		}
	}
}

func openAPIErrorCode(t *testing.T, body []byte) string {
	t.Helper()
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return env.Error.Code
}

// TestOpenAPIServedResponses validates real answers that need no database: validation and
// JSON errors, the body limit, the rate limit, unknown routes and methods, health, documents.
func TestOpenAPIServedResponses(t *testing.T) {
	v := newOpenAPIValidator(t)
	failing := func(context.Context) error { return errors.New("down") }
	srv := newDocTestServer(Config{})
	limited := newDocTestServer(Config{PublicRateLimitPerMinute: 1})
	notReady := newDocTestServer(Config{ReadinessChecks: map[string]func(context.Context) error{"postgres": failing}})
	post := func(path, body string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	get := func(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
	serveChecked(t, v, limited, post("/api/v1/auth/login/", `{}`)) // the whole budget of this client
	cases := []struct {
		name   string
		srv    *Server
		req    *http.Request
		status int
	}{
		{"register validation", srv, post("/api/v1/auth/register/", `{"email":"no","password":"short"}`), 400},
		{"login invalid json", srv, post("/api/v1/auth/login", `{`), 400},
		{"login rate limited", limited, post("/api/v1/auth/login/", `{}`), 429},
		{"body too large", srv, post("/api/v1/auth/login/", `{"email":"`+strings.Repeat("a", maxJSONBody)+`"}`), 413},
		{"not an object", srv, post("/api/v1/auth/register/", `[1]`), 400},
		{"unknown route", srv, get("/api/v1/no-such-thing/"), 404},
		{"unknown root route", srv, get("/nothing"), 404},
		{"method not allowed", srv, httptest.NewRequest(http.MethodPut, "/healthz", nil), 405},
		{"healthz", srv, get("/healthz"), 200},
		{"readyz", srv, get("/readyz"), 200},
		{"readyz down", notReady, get("/readyz"), 503},
		{"metrics", srv, get("/metrics"), 200},
		{"openapi", srv, get("/openapi.json"), 200},
		{"openapi v1", srv, get("/api/v1/openapi.json"), 200},
		{"docs", srv, get("/docs/"), 200},
		{"docs v1", srv, get("/api/v1/docs"), 200},
		{"docs redirect", srv, get("/docs"), 301},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := serveChecked(t, v, c.srv, c.req)
			if rec.Code != c.status {
				t.Errorf("status %d, want %d: %s", rec.Code, c.status, bodyExcerpt(rec.Body.Bytes(), 500))
			}
		})
	}
}

func TestOpenAPIServedWithPublicURL(t *testing.T) {
	srv := newDocTestServer(Config{})
	for _, path := range []string{"/openapi.json", "/api/v1/openapi.json"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || ct != "application/json" {
			t.Fatalf("%s: %d %s", path, rec.Code, ct)
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(rec.Body.Bytes())
		if err != nil {
			t.Fatalf("%s: the served document does not load: %v", path, err)
		}
		if err := doc.Validate(loader.Context); err != nil {
			t.Errorf("%s: the served document is not valid: %v", path, err)
		}
		if got := doc.Servers[0].URL; got != docTestPublicURL+basePath {
			t.Errorf("%s: servers[0].url = %q, want %q", path, got, docTestPublicURL+basePath)
		}
		if got := doc.Paths.Value("/healthz").Servers[0].URL; got != docTestPublicURL {
			t.Errorf("%s: /healthz server = %q, want %q", path, got, docTestPublicURL)
		}
		if got := doc.Paths.Value("/openapi.json").Servers[1].URL; got != docTestPublicURL+basePath {
			t.Errorf("%s: /openapi.json second server = %q", path, got)
		}
	}
	raw, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"url": "/api/v1"`)) || bytes.Contains(raw, []byte(docTestPublicURL)) {
		t.Errorf("OpenAPIJSON must keep the document's relative server URLs")
	}
}

// TestOpenAPIJSONKeepsOrder: the JSON keeps the YAML's order and resolves anchors and merge
// keys; what JSON cannot say is refused.
func TestOpenAPIJSONKeepsOrder(t *testing.T) {
	raw, err := OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("{\n  \"openapi\": \"3.1.0\",\n  \"info\": {")) {
		t.Errorf("the JSON starts %q; want the YAML's order", bodyExcerpt(raw, 60))
	}
	if register, login := bytes.Index(raw, []byte(`"/auth/register/"`)), bytes.Index(raw, []byte(`"/auth/login/"`)); register > login {
		t.Errorf("paths are not in the YAML's order")
	}
	v := newOpenAPIValidator(t)
	membership := v.doc.Components.Schemas["MerchantMembership"].Value.Properties
	for _, field := range []string{"id", "kyc_status", "is_suspended", "role"} {
		if membership[field] == nil {
			t.Errorf("MerchantMembership lacks %s (merge key not resolved)", field)
		}
	}

	convert := func(src string) (string, error) {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			return "", err
		}
		out, err := yamlToJSON(&n, nil)
		var compact bytes.Buffer
		_ = json.Compact(&compact, out)
		return compact.String(), err
	}
	for _, bad := range []string{"a: 1\na: 2\n", "a: .nan\n", "a: !!binary aGk=\n", "a: &x [*x]\n", "? [k]\n: v\n"} {
		if got, err := convert(bad); err == nil {
			t.Errorf("yamlToJSON(%q) = %s, want an error", bad, got)
		}
	}
	got, err := convert("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n  z: [null, true, 1.5, '7', 200]\n")
	if want := `{"base":{"x":1,"y":2},"m":{"x":1,"y":3,"z":[null,true,1.5,"7",200]}}`; err != nil || got != want {
		t.Errorf("got %s (%v), want %s", got, err, want)
	}
}

// TestOpenAPIValidatorCatchesDrift tests the validator itself: good bodies pass, a body with a
// field the document does not know, a wrong type, a missing required header or an undocumented
// status fails the test that checks it.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	v := newOpenAPIValidator(t)
	const id = "0b7c6a4e-8d43-4c1f-9d8e-2f1a3b4c5d6e"
	const ts = "2026-01-31T09:30:00.123456Z"
	country := `{"id":"` + id + `","iso_code":"BJ","name":"Benin","default_currency":"XOF","created_at":"` + ts + `","updated_at":"` + ts + `"}`
	ok := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"},
		"Ratelimit-Limit": {"300"}, "Ratelimit-Remaining": {"299"}, "Ratelimit-Reset": {"42"}}
	public := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"}}
	limited := ok.Clone()
	limited.Set("Retry-After", "42")
	page := func(results string) string {
		return `{"success":true,"data":{"count":1,"next":null,"previous":"https://pay.example/api/v1/networks/?page=1","results":[` + results + `]}}`
	}
	network := `{"id":"` + id + `","country":"` + id + `","code":"MTN_BJ","name":"MTN","is_active":true,` +
		`"availability":{"status":"operational","reasons":[],"checked_at":"` + ts + `"},"created_at":"` + ts + `","updated_at":"` + ts + `"}`
	apiKey := `{"id":"` + id + `","merchant":"` + id + `","environment":"TEST","scope":"BOTH","name":"","prefix":"sk_test_AbCd",` +
		`"last_used_at":null,"revoked_at":null,"created_by_member":"` + id + `","created_at":"` + ts + `"`
	secret := `"key":"sk_test_` + strings.Repeat("a", 43) + `"`
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		pass         bool
	}{
		{"countries bare array", "GET", "/api/v1/countries/", 200, public, `[` + country + `]`, true},
		{"countries without slash", "GET", "/api/v1/countries", 200, public, `[]`, true},
		{"countries enveloped", "GET", "/api/v1/countries/", 200, public, `{"success":true,"data":[]}`, false},
		{"countries extra field", "GET", "/api/v1/countries/", 200, public, `[` + strings.Replace(country, `"name"`, `"calling_code":"229","name"`, 1) + `]`, false},
		{"countries wrong type", "GET", "/api/v1/countries/", 200, public, `[` + strings.Replace(country, `"Benin"`, `7`, 1) + `]`, false},
		{"countries missing request id", "GET", "/api/v1/countries/", 200, http.Header{"Content-Type": {"application/json"}}, `[]`, false},
		{"country", "GET", "/api/v1/countries/" + id + "/", 200, ok, `{"success":true,"data":` + country + `}`, true},
		{"country envelope extra", "GET", "/api/v1/countries/" + id + "/", 200, ok, `{"success":true,"data":` + country + `,"meta":{}}`, false},
		{"country success false", "GET", "/api/v1/countries/" + id + "/", 200, ok, `{"success":false,"data":` + country + `}`, false},
		{"country local time", "GET", "/api/v1/countries/" + id + "/", 200, ok, `{"success":true,"data":` + strings.Replace(country, ts, "2026-01-31T10:30:00+01:00", 1) + `}`, false},
		{"country without rate limit headers", "GET", "/api/v1/countries/" + id + "/", 200, public, `{"success":true,"data":` + country + `}`, false},
		{"country undocumented status", "GET", "/api/v1/countries/" + id + "/", 418, ok, `{"success":true,"data":` + country + `}`, false},
		{"network page", "GET", "/api/v1/networks/", 200, ok, page(network), true},
		{"network page relative next", "GET", "/api/v1/networks/", 200, ok, strings.Replace(page(network), `"next":null`, `"next":"/api/v1/networks/?page=2"`, 1), false},
		{"network page no count", "GET", "/api/v1/networks/", 200, ok, strings.Replace(page(network), `"count":1,`, ``, 1), false},
		{"network without availability", "GET", "/api/v1/networks/", 200, ok, page(strings.Replace(network, `"availability":{"status":"operational","reasons":[],"checked_at":"`+ts+`"},`, ``, 1)), false},
		{"network availability unknown", "GET", "/api/v1/networks/", 200, ok, page(strings.Replace(network, `"operational"`, `"fine"`, 1)), false},
		{"created key has its secret", "POST", "/api/v1/api-keys/", 201, ok, `{"success":true,"data":` + apiKey + `,` + secret + `}}`, true},
		{"created key without secret", "POST", "/api/v1/api-keys/", 201, ok, `{"success":true,"data":` + apiKey + `}}`, false},
		{"listed key without secret", "GET", "/api/v1/api-keys/", 200, ok, page(apiKey + `}`), true},
		{"listed key leaks its secret", "GET", "/api/v1/api-keys/", 200, ok, page(apiKey + `,` + secret + `}`), false},
		{"validation error", "POST", "/api/v1/auth/login/", 400, public, `{"success":false,"error":{"email":["This field is required."]}}`, true},
		{"validation error not strings", "POST", "/api/v1/auth/login/", 400, public, `{"success":false,"error":{"email":[1]}}`, false},
		{"invalid json", "POST", "/api/v1/auth/login/", 400, public, `{"success":false,"error":{"code":"invalid_json","message":"m"}}`, true},
		{"400 with a 401 code", "POST", "/api/v1/auth/login/", 400, public, `{"success":false,"error":{"code":"invalid_credentials","message":"m"}}`, false},
		{"unauthorized", "GET", "/api/v1/networks/", 401, public, `{"success":false,"error":{"code":"token_expired","message":"m"}}`, true},
		{"unauthorized unknown code", "GET", "/api/v1/networks/", 401, public, `{"success":false,"error":{"code":"nope","message":"m"}}`, false},
		{"unauthorized extra field", "GET", "/api/v1/networks/", 401, public, `{"success":false,"error":{"code":"token_expired","message":"m","detail":"x"}}`, false},
		{"forbidden", "GET", "/api/v1/api-keys/", 403, public, `{"success":false,"error":{"code":"dashboard_only","message":"m"}}`, true},
		{"not found", "POST", "/api/v1/api-keys/" + id + "/revoke", 404, ok, `{"success":false,"error":{"code":"not_found","message":"m"}}`, true},
		{"rate limited", "GET", "/api/v1/networks/", 429, limited, `{"success":false,"error":{"code":"rate_limited","message":"m"}}`, true},
		{"rate limited without Retry-After", "GET", "/api/v1/networks/", 429, ok, `{"success":false,"error":{"code":"rate_limited","message":"m"}}`, false},
		{"unknown route", "GET", "/api/v1/nothing/", 404, public, `{"success":false,"error":{"code":"not_found","message":"m"}}`, true},
		{"unknown route 200", "GET", "/api/v1/nothing/", 200, public, `{}`, false},
		{"wrong method", "DELETE", "/api/v1/networks/", 405, public, `{"success":false,"error":{"code":"method_not_allowed","message":"m"}}`, true},
		{"wrong method wrong code", "DELETE", "/api/v1/networks/", 405, public, `{"success":false,"error":{"code":"not_found","message":"m"}}`, false},
		{"conflict is not documented here", "GET", "/api/v1/networks/", 409, public, `{"success":false,"error":{"code":"not_pending","message":"m"}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := &failureRecorder{TB: t}
			v.check(fake, httptest.NewRequest(c.method, c.path, nil), c.status, c.header, []byte(c.body))
			if passed := !fake.failed; passed != c.pass {
				t.Errorf("passed = %v, want %v; report:\n%s", passed, c.pass, strings.Join(fake.reports, "\n"))
			}
			if !c.pass && !strings.Contains(strings.Join(fake.reports, ""), c.path) {
				t.Errorf("the report does not name the request: %s", fake.reports)
			}
		})
	}
}

// failureRecorder is a testing.TB that records failures instead of failing the test.
type failureRecorder struct {
	testing.TB
	failed  bool
	reports []string
}

func (r *failureRecorder) Helper() {}

func (r *failureRecorder) Errorf(format string, args ...any) {
	r.failed = true
	r.reports = append(r.reports, fmt.Sprintf(format, args...))
}

func (r *failureRecorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *failureRecorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.TB.Fatalf("failureRecorder: Fatalf: "+format, args...)
}

// TestDocsServedGzipped: the reference page and the document go gzipped to a client that takes
// gzip (a browser), as they are otherwise, and not to one that does not.
func TestDocsServedGzipped(t *testing.T) {
	srv := newDocTestServer(Config{})
	for _, path := range []string{"/docs/", "/openapi.json", "/api/v1/openapi.json"} {
		plain := httptest.NewRecorder()
		srv.ServeHTTP(plain, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, plain.Code, path)
		assert.Empty(t, plain.Header().Get("Content-Encoding"), path)

		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		zipped := httptest.NewRecorder()
		srv.ServeHTTP(zipped, req)
		require.Equal(t, http.StatusOK, zipped.Code, path)
		assert.Equal(t, "gzip", zipped.Header().Get("Content-Encoding"), path)
		assert.Contains(t, zipped.Header().Values("Vary"), "Accept-Encoding", path)
		size := zipped.Body.Len()
		assert.Equal(t, strconv.Itoa(size), zipped.Header().Get("Content-Length"), path)
		zr, err := gzip.NewReader(zipped.Body)
		require.NoError(t, err, path)
		body, err := io.ReadAll(zr)
		require.NoError(t, err, path)
		assert.Equal(t, plain.Body.Bytes(), body, path)
		t.Logf("%s: %d bytes, %d gzipped", path, len(body), size)
	}
}

func TestDocsPage(t *testing.T) {
	srv := newDocTestServer(Config{})
	for _, path := range []string{"/docs/", "/api/v1/docs/"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		page := rec.Body.String()
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		// Every inline script and style is allowed by its hash, and nothing else is inline.
		for tag, directive := range map[string]string{"script": "script-src", "style": "style-src"} {
			blocks := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllStringSubmatch(page, -1)
			if len(blocks) != 1 {
				t.Fatalf("%s: %d inline <%s> blocks, want 1", path, len(blocks), tag)
			}
			if want := directive + " " + cspHash(blocks[0][1]); !strings.Contains(csp, want) {
				t.Errorf("%s: CSP lacks %q", path, want)
			}
			if strings.Count(page, "<"+tag) != 1 {
				t.Errorf("%s: another <%s> element than the inline one", path, tag)
			}
		}
		if regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`).MatchString(page) || strings.Contains(page, "@import") {
			t.Errorf("%s: the page refers to another origin", path)
		}
		if regexp.MustCompile(`\son[a-z]+=`).MatchString(docsTemplate) || strings.Contains(docsJS, "innerHTML") || strings.Contains(docsJS, "eval(") {
			t.Errorf("%s: inline event handlers, innerHTML or eval would break the CSP or the escaping", path)
		}
	}
}
