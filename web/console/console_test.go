package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
	"github.com/sikahq/sika/web/webapp/webapptest"
)

// TestConsoleTranslations: both languages have the same keys, and every key a template or a
// handler names is one of them.
func TestConsoleTranslations(t *testing.T) {
	used := webapptest.KeysUsed(t, templateFS, webapp.SharedTemplates())
	add := func(prefix string, values []string) {
		for _, v := range values {
			used[prefix+v] = true
		}
	}
	add("status_", filter.TransactionStatuses)
	add("type_", filter.TransactionTypes)
	add("trigger_", filter.StatusTriggers)
	add("kyc_", []string{"PENDING", "APPROVED", "REJECTED"})
	add("merchant_kyc_", []string{string(sika.KYCPending), string(sika.KYCVerified), string(sika.KYCRejected)})
	add("attempt_", []string{string(sika.AttemptPending), string(sika.AttemptSuccess), string(sika.AttemptFailed)})
	add("decided_by_", []string{"operator", "support"})
	add("resolve_", []string{"FAILED", "SUCCESS"})
	add("flag_settle_", []string{"SUCCESS", "FAILED"})
	add("action_", []string{"end_unclear_run", store.StaffActionKYCApproved, store.StaffActionKYCRejected, store.StaffActionMerchantSuspended,
		store.StaffActionMerchantReinstated, store.StaffActionPayoutMethodReview, store.StaffActionReverified,
		store.ActionDecisionProposed, store.ActionDecisionApproved, store.ActionDecisionRejected, store.ActionStaffRoleChanged})
	for _, r := range sika.StaffRoles {
		used["role_"+string(r)] = true
	}
	add("decision_", []string{string(store.DecisionPending), string(store.DecisionApproved), string(store.DecisionRejected)})
	add("kind_", []string{string(store.DecisionResolveUnclearPayout), string(store.DecisionRefundFlag), string(store.DecisionSettleReheldPayout)})
	add("error_", []string{string(sika.CodeRoleForbidden), string(sika.CodeSelfApprovalForbidden)})
	add("", []string{"session_expired", "signed_out", "too_many_attempts", "login_required", "wrong_credentials", "merchant_refused",
		"error_internal", "error_forbidden", "error_not_found", "error_bad_request", "error_method", "error_refused",
		"login_title", "stuck_title", "unclear_title", "flags_title", "flag_title", "search_title", "transaction_title", "actions_title",
		"kyc_title", "dossier_title", "merchants_title", "merchant_title", "payout_methods_title", "decisions_title", "staff_title"})
	webapptest.BothLanguages(t, translations, used)
}

// TestConsoleNothingFromAnotherOrigin: no template loads anything from another origin or has
// inline code (the CSP would block it).
func TestConsoleNothingFromAnotherOrigin(t *testing.T) {
	webapptest.NothingFromAnotherOrigin(t, templateFS)
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
