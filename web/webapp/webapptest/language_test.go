package webapptest

import (
	"strings"
	"testing"

	"github.com/sikahq/sika/web/webapp"
)

// TestOtherLanguage: the check finds a catalogue string and a listed word of the other language,
// the French space before a colon on an English page, and passes text marked with its own lang
// and what only scripts and styles say.
func TestOtherLanguage(t *testing.T) {
	cat := webapp.Merge(webapp.Catalogue{"fr": {"x_title": "Moyens de reversement"}, "en": {"x_title": "Payout methods"}})
	fr := `<html lang="fr"><title>Moyens de reversement</title><p>Payout methods</p><p lang="en">Enter a valid URL.</p>` +
		`<script>var payment = 1</script><input aria-label="Payment requested"></html>`
	got := OtherLanguage(fr, "fr", cat)
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, `x_title: "Payout methods"`) {
		t.Errorf("the catalogue's English title is not found: %q", got)
	}
	if !strings.Contains(joined, "Payment requested") {
		t.Errorf("the aria-label's English is not found: %q", got)
	}
	if strings.Contains(joined, "Enter a valid URL") || strings.Contains(joined, "var payment") {
		t.Errorf("marked or script text is reported: %q", got)
	}
	en := "<html lang=\"en\"><p>Merchant\u00a0: Shop</p><p>Valeur invalide</p><p>Payout methods</p></html>"
	got = OtherLanguage(en, "en", cat)
	if len(got) != 3 {
		t.Errorf("want the colon, Valeur and invalide, got %q", got)
	}
	if clean := OtherLanguage(`<html lang="en"><p>Payout methods: 2</p></html>`, "en", cat); len(clean) != 0 {
		t.Errorf("a clean English page: %q", clean)
	}
}
