package console

import (
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
)

// TestConsoleTranslations: both languages have the same keys, and every key a template or a
// handler names is one of them.
func TestConsoleTranslations(t *testing.T) {
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
	add := func(prefix string, values []string) {
		for _, v := range values {
			used[prefix+v] = true
		}
	}
	add("status_", filter.TransactionStatuses)
	add("type_", filter.TransactionTypes)
	add("trigger_", filter.StatusTriggers)
	add("kyc_", []string{"PENDING", "APPROVED", "REJECTED"})
	add("decided_by_", []string{"operator", "support"})
	add("action_", []string{"end_unclear_run", store.StaffActionKYCApproved, store.StaffActionKYCRejected, store.StaffActionMerchantSuspended,
		store.StaffActionMerchantReinstated, store.StaffActionPayoutMethodReview, store.StaffActionReverified,
		store.ActionDecisionProposed, store.ActionDecisionApproved, store.ActionDecisionRejected, store.ActionStaffRoleChanged})
	for _, r := range sika.StaffRoles {
		used["role_"+string(r)] = true
	}
	add("decision_", []string{string(store.DecisionPending), string(store.DecisionApproved), string(store.DecisionRejected)})
	add("error_", []string{string(sika.CodeRoleForbidden), string(sika.CodeSelfApprovalForbidden)})
	add("", []string{"session_expired", "signed_out", "too_many_attempts", "login_required", "wrong_credentials", "merchant_refused",
		"error_internal", "error_forbidden", "error_not_found", "error_bad_request", "error_method", "error_refused",
		"login_title", "stuck_title", "unclear_title", "flags_title", "search_title", "transaction_title", "actions_title",
		"kyc_title", "dossier_title", "merchants_title", "merchant_title", "payout_methods_title", "decisions_title", "staff_title"})
	for _, k := range slices.Sorted(maps.Keys(used)) {
		if _, ok := fr[k]; !ok {
			t.Errorf("key %q is used but not translated", k)
		}
	}
}

// TestConsoleNothingFromAnotherOrigin: no template loads anything from another origin or has
// inline code (the CSP would block it).
func TestConsoleNothingFromAnotherOrigin(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`)
	inline := regexp.MustCompile(`(?i)<script>|<script [^>]*>[^<]|\son[a-z]+=|javascript:|<style`)
	err := fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(templateFS, p)
		if m := external.FindString(string(raw)); m != "" {
			t.Errorf("%s loads %s", p, m)
		}
		if m := inline.FindString(string(raw)); m != "" {
			t.Errorf("%s has inline code: %s", p, m)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsoleStatic: the console serves the shared stylesheet and htmx and its own CSS, with
// the security headers, and no template.
func TestConsoleStatic(t *testing.T) {
	a := New(Config{})
	for path, want := range map[string]int{
		Prefix + "static/vendor/htmx.min.js":      http.StatusOK,
		Prefix + "static/sika.css":                http.StatusOK,
		Prefix + "static/console.css":             http.StatusOK,
		Prefix + "static/vendor/VERSIONS":         http.StatusNotFound,
		Prefix + "static/../templates/stuck.html": http.StatusNotFound,
	} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want && !(want == http.StatusNotFound && rec.Code >= 300 && rec.Code < 400) {
			t.Errorf("%s: got %d, want %d", path, rec.Code, want)
		}
		if !strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("%s: no CSP", path)
		}
	}
}
