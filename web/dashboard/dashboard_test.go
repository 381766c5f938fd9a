package dashboard

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
	"github.com/sikahq/sika/web/webapp/webapptest"
)

// TestTranslationsComplete: both languages have the same keys, and every key a template or a
// handler names (T "key", (print "prefix_" value) over the values it takes) is one of them.
func TestTranslationsComplete(t *testing.T) {
	used := webapptest.KeysUsed(t, templateFS, webapp.SharedTemplates())
	for _, keys := range [][]string{
		prefixed("status_", filter.TransactionStatuses), prefixed("type_", filter.TransactionTypes),
		prefixed("direction_", filter.FlowDirections), prefixed("attempt_", filter.AttemptStatuses),
		prefixed("trigger_", filter.StatusTriggers), {"role_" + string(sika.RoleOwner), "role_" + string(sika.RoleAdmin)},
		// Handlers' keys: login messages, error pages, filter messages, page titles.
		{"session_expired", "signed_out", "too_many_attempts", "login_required", "wrong_credentials", "staff_refused",
			"error_internal", "error_forbidden", "error_not_found", "error_bad_request", "error_method",
			"error_search", "error_date", "error_date_range", "error_position", "error_choice",
			"login_title", "merchants_title", "home_title", "transactions_title", "transaction_title",
			"filter_status", "filter_type", "filter_direction", "filter_country", "filter_network", "filter_currency", "all"},
	} {
		for _, k := range keys {
			used[k] = true
		}
	}
	webapptest.BothLanguages(t, translations, used)
}

func prefixed(prefix string, values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = prefix + v
	}
	return out
}

func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/dashboard/transactions/?status=SUCCESS": "/dashboard/transactions/?status=SUCCESS",
		"/dashboard/":                        "/dashboard/",
		"":                                   "/dashboard/",
		"https://evil.example/dashboard/":    "/dashboard/",
		"//evil.example/dashboard/":          "/dashboard/",
		"/\\evil.example/dashboard/":         "/dashboard/",
		"/api/v1/transactions/":              "/dashboard/",
		"javascript:alert(1)":                "/dashboard/",
		"/dashboard/\r\nSet-Cookie: x=y":     "/dashboard/",
		"/dashboard/../api/v1/transactions/": "/dashboard/",
		"/dashboard/../console/":             "/dashboard/",
		"/dashboard/%2e%2e/console/":         "/dashboard/",
		"/dashboard/%2E%2E%2Fconsole/":       "/dashboard/",
		"/dashboard/./settings/":             "/dashboard/",
		"/dashboard/a/..":                    "/dashboard/",
		"/dashboard/..%5cconsole/":           "/dashboard/",
		"/dashboard/transactions/?q=..":      "/dashboard/transactions/?q=..",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

func TestPositions(t *testing.T) {
	rows := make([]sika.Transaction, 3)
	base := time.Date(2026, 11, 25, 8, 0, 0, 123456000, time.UTC)
	for i := range rows {
		rows[i] = sika.Transaction{ID: uuid.New(), CreatedAt: base.Add(-time.Duration(i) * time.Minute)}
	}
	pos, ok := parsePosition(position(rows[1]))
	if !ok || !pos.CreatedAt.Equal(rows[1].CreatedAt) || pos.ID != rows[1].ID {
		t.Fatalf("position round trip: got %+v %v, want %v %v", pos, ok, rows[1].CreatedAt, rows[1].ID)
	}
	for _, bad := range []string{"x", "1.2", "abc." + uuid.NewString(), "12"} {
		if _, err := keysetOf(url.Values{"after": {bad}}); sika.ErrorCode(err) != sika.CodeValidation {
			t.Errorf("after=%q: got %v, want a validation error", bad, err)
		}
	}
	filters := url.Values{"status": {"SUCCESS"}}
	next, prev := pageLinks(filters, store.KeysetRequest{Limit: 3}, rows, true)
	if prev != "" || !strings.Contains(next, "after="+url.QueryEscape(position(rows[2]))) || !strings.Contains(next, "status=SUCCESS") {
		t.Errorf("first page: next %q, previous %q", next, prev)
	}
	req, err := keysetOf(url.Values{"before": {position(rows[0])}})
	if err != nil || !req.Backward {
		t.Fatalf("before: %+v %v", req, err)
	}
	next, prev = pageLinks(nil, req, rows, false)
	if next == "" || prev != "" {
		t.Errorf("back on the newest page: next %q, previous %q", next, prev)
	}
}

// TestLogPages: a log page (events, an endpoint's deliveries, a wallet's ledger) reads its
// ?after= position, refuses one it cannot read with the error it is given, and links its first
// page (from a later one) and the next, after its last row.
func TestLogPages(t *testing.T) {
	rows := make([]sika.Transaction, 3)
	base := time.Date(2026, 11, 25, 8, 0, 0, 123456000, time.UTC)
	for i := range rows {
		rows[i] = sika.Transaction{ID: uuid.New(), CreatedAt: base.Add(-time.Duration(i) * time.Minute)}
	}
	here := Prefix + "developers/events/"
	req, err := logPage(httptest.NewRequest(http.MethodGet, here, nil), 3, sika.NotFound("Page"))
	if err != nil || req.After != nil || req.Limit != 3 {
		t.Fatalf("first page: %+v %v", req, err)
	}
	newest, next := logLinks(here, req, rows, true, position)
	if newest != "" || next != here+"?after="+url.QueryEscape(position(rows[2])) {
		t.Errorf("first page: newest %q, next %q", newest, next)
	}
	req, err = logPage(httptest.NewRequest(http.MethodGet, next, nil), 3, sika.NotFound("Page"))
	if err != nil || req.After == nil || req.After.ID != rows[2].ID || !req.After.CreatedAt.Equal(rows[2].CreatedAt) {
		t.Fatalf("next page: %+v %v", req, err)
	}
	newest, next = logLinks(here, req, rows[:1], false, position)
	if newest != here || next != "" {
		t.Errorf("last page: newest %q, next %q", newest, next)
	}
	if _, err := logPage(httptest.NewRequest(http.MethodGet, here+"?after=nonsense", nil), 3, sika.NotFound("Page")); sika.ErrorCode(err) != sika.CodeNotFound {
		t.Errorf("after=nonsense: got %v, want the error given", err)
	}
}

func TestFormatTime(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 7, 0, 0, time.FixedZone("WAT", 3600))
	if got := webapp.FormatTime(at, "fr"); got != "05/01/2026 08:07 UTC" {
		t.Errorf("fr: got %q", got)
	}
	if got := webapp.FormatTime(at, "en"); got != "5 Jan 2026 08:07 UTC" {
		t.Errorf("en: got %q", got)
	}
}

// TestNothingFromAnotherOrigin: no template loads a script, style, image or font from
// anywhere but the dashboard itself, and none has an inline script or event handler (the CSP
// would block them).
func TestNothingFromAnotherOrigin(t *testing.T) {
	webapptest.NothingFromAnotherOrigin(t, templateFS)
}

func TestStaticFiles(t *testing.T) {
	a := New(Config{})
	get := func(path string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		return rec
	}
	plain := get(Prefix + "static/vendor/htmx.min.js")
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" ||
		!strings.HasPrefix(plain.Header().Get("Content-Type"), "text/javascript") {
		t.Fatalf("htmx: %d %v", plain.Code, plain.Header())
	}
	zipped := get(Prefix+"static/vendor/htmx.min.js", "Accept-Encoding", "br, gzip")
	if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= plain.Body.Len()/2 {
		t.Fatalf("gzip: %v, %d bytes of %d", zipped.Header(), zipped.Body.Len(), plain.Body.Len())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain.Body.Bytes()) {
		t.Fatalf("gzip body differs: %v", err)
	}
	if got := get(Prefix+"static/vendor/htmx.min.js", "If-None-Match", plain.Header().Get("ETag")).Code; got != http.StatusNotModified {
		t.Errorf("If-None-Match: got %d", got)
	}
	if !strings.Contains(plain.Header().Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("no CSP on a static file")
	}
	if got := get(Prefix + "static/../templates/layout.html").Code; got == http.StatusOK {
		t.Errorf("a template is served as a static file")
	}
	for _, p := range []string{"vendor/VERSIONS", "vendor/htmx.min.js.LICENSE", "vendor/", "nope.js"} {
		if got := get(Prefix + "static/" + p).Code; got != http.StatusNotFound {
			t.Errorf("%s: got %d, want 404", p, got)
		}
	}
	if got := get(Prefix + "static/sika.css").Header().Get("Content-Type"); !strings.HasPrefix(got, "text/css") {
		t.Errorf("css Content-Type %q", got)
	}
}
