package dashboard

import (
	"io/fs"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
)

// TestTranslationsComplete: both languages have the same keys, and every key a template or a
// handler names (T "key", (print "prefix_" value) over the values it takes) is one of them.
func TestTranslationsComplete(t *testing.T) {
	fr, en := translations["fr"], translations["en"]
	for k := range fr {
		if _, ok := en[k]; !ok {
			t.Errorf("key %q has no English text", k)
		}
	}
	for k := range en {
		if _, ok := fr[k]; !ok {
			t.Errorf("key %q has no French text", k)
		}
	}
	used := map[string]bool{}
	literal := regexp.MustCompile(`T "([a-z_]+)"`)
	err := fs.WalkDir(templateFS, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templateFS, path)
		for _, m := range literal.FindAllStringSubmatch(string(raw), -1) {
			used[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range [][]string{
		prefixed("status_", filter.TransactionStatuses), prefixed("type_", filter.TransactionTypes),
		prefixed("direction_", filter.FlowDirections), prefixed("attempt_", filter.AttemptStatuses),
		prefixed("trigger_", filter.StatusTriggers), {"fee_mode_" + string(sika.FeeAddOn), "fee_mode_" + string(sika.FeeDeducted)}, {"role_" + string(sika.RoleOwner), "role_" + string(sika.RoleAdmin)},
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
	for _, k := range slices.Sorted(maps.Keys(used)) {
		if _, ok := fr[k]; !ok {
			t.Errorf("key %q is used but not translated", k)
		}
	}
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
		"/dashboard/":                     "/dashboard/",
		"":                                "/dashboard/",
		"https://evil.example/dashboard/": "/dashboard/",
		"//evil.example/dashboard/":       "/dashboard/",
		"/\\evil.example/dashboard/":      "/dashboard/",
		"/api/v1/transactions/":           "/dashboard/",
		"javascript:alert(1)":             "/dashboard/",
		"/dashboard/\r\nSet-Cookie: x=y":  "/dashboard/",
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

func TestFormatTime(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 7, 0, 0, time.FixedZone("WAT", 3600))
	if got := formatTime(at, "fr"); got != "05/01/2026 08:07 UTC" {
		t.Errorf("fr: got %q", got)
	}
	if got := formatTime(at, "en"); got != "5 Jan 2026 08:07 UTC" {
		t.Errorf("en: got %q", got)
	}
}
