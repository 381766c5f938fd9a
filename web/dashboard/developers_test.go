package dashboard

import (
	"testing"

	"github.com/sikahq/sika"
)

// TestDeveloperTranslations: the keys the developers, KYC and settings pages build from a value
// (a scope, a status, a document type, a notice, an API error code) are translated in both
// languages, for every value they take.
func TestDeveloperTranslations(t *testing.T) {
	keys := []string{"apierr_validation", "apierr_other", "err_required", "err_choice", "err_invalid",
		"developers_title", "endpoint_title", "events_title", "event_title", "kyc_title", "settings_title"}
	for _, s := range []sika.Scope{sika.ScopeBoth, sika.ScopePayin, sika.ScopePayout} {
		keys = append(keys, "scope_"+string(s))
	}
	for _, s := range []sika.KYCStatus{sika.KYCPending, sika.KYCVerified, sika.KYCRejected} {
		keys = append(keys, "kyc_status_"+string(s))
	}
	for _, s := range []sika.KYCDossierStatus{sika.KYCDossierPending, sika.KYCDossierApproved, sika.KYCDossierRejected} {
		keys = append(keys, "dossier_"+string(s))
	}
	for _, d := range sika.KYCDocumentTypes {
		keys = append(keys, "doc_"+string(d))
	}
	for _, k := range []sika.KYCType{sika.KYCIndividual, sika.KYCBusiness} {
		keys = append(keys, "kyc_type_"+string(k))
	}
	for _, m := range []sika.FeeChargeMode{sika.FeeAddOn, sika.FeeDeducted} {
		keys = append(keys, "fee_mode_choice_"+string(m))
	}
	for _, f := range kycFields[1:] { // after kyc_type, the text inputs (their labels kyc_<name>)
		keys = append(keys, "kyc_"+f)
	}
	for k := range doneNotices {
		keys = append(keys, k)
	}
	for _, lang := range []string{"fr", "en"} {
		for _, k := range keys {
			if _, ok := translations[lang][k]; !ok {
				t.Errorf("%s: key %q has no text", lang, k)
			}
		}
	}
}

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"recto.png":            "recto.png",
		"a\"b\\c\r\nd.pdf":     "abcd.pdf",
		"":                     "document",
		"\x00":                 "document",
		"pièce d'identité.jpg": "pièce d'identité.jpg",
	} {
		if got := cleanFileName(in); got != want {
			t.Errorf("cleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
