package web

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

func TestLang(t *testing.T) {
	cases := []struct {
		url, accept, want string
	}{
		{"/pay/x/", "", "fr"},
		{"/pay/x/", "wo-SN,wo", "fr"},
		{"/pay/x/", "en-US,en;q=0.9", "en"},
		{"/pay/x/", "fr-FR,fr;q=0.9,en;q=0.8", "fr"},
		{"/pay/x/", "en;q=0.5,fr;q=0.7", "fr"},
		{"/pay/x/", "de,en;q=0.3", "en"},
		{"/pay/x/?lang=en", "fr-FR", "en"},
		{"/pay/x/?lang=fr", "en-US", "fr"},
		{"/pay/x/?lang=xx", "en-US", "en"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", c.url, nil)
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if got := Lang(r); got != c.want {
			t.Errorf("Lang(%s, %q) = %q, want %q", c.url, c.accept, got, c.want)
		}
	}
}

func TestRenderEscapesAndTranslates(t *testing.T) {
	amount := decimal.RequireFromString("1000.00")
	p := Page{Kind: KindSession, Lang: "fr", MerchantName: `<script>alert(1)</script>`, Amount: &amount, Currency: "XOF",
		Countries: []Country{{"SN", "Senegal"}, {"BJ", "Benin"}}, Country: "BJ",
		Networks: []Network{{Code: "ORANGE_SN", Name: "Orange", Country: "SN", PrePaymentOTP: true, OTPInstructions: `Dial #144# "now"`}},
		PayURL:   "/api/v1/checkout/x/pay/"}
	var buf bytes.Buffer
	if err := Render(&buf, p); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `lang="fr"`, "Payer 1\u00a0000\u00a0FCFA", `<option value="BJ" selected>Bénin</option>`,
		`data-otp="1"`, `for="customer_phone"`,
		// Without the script a submit posts: the customer's name, number and code stay out of the URL.
		`<form id="pay-form" method="post"`, `<form id="otp-form" method="post"`,
		"<noscript><p class=\"notice\">Cette page de paiement a besoin de JavaScript"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert") {
		t.Error("merchant name not escaped")
	}
	if strings.Index(html, "Bénin") > strings.Index(html, "Sénégal") {
		t.Error("countries are not sorted by name")
	}

	p.Lang, p.Closed = "en", "EXPIRED"
	buf.Reset()
	if err := Render(&buf, p); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); !strings.Contains(html, "This payment page has expired.") || strings.Contains(html, `id="pay-form"`) {
		t.Errorf("a closed page shows why and no form:\n%s", html)
	}
	// An expired session's page is no payment link: French says what English says.
	p.Lang = "fr"
	buf.Reset()
	if err := Render(&buf, p); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); !strings.Contains(html, "Cette page de paiement a expiré.") {
		t.Errorf("an expired page says so in French:\n%s", html)
	}
}

func TestEveryKeyIsTranslated(t *testing.T) {
	for key := range translations["fr"] {
		if _, ok := translations["en"][key]; !ok {
			t.Errorf("%q has no English text", key)
		}
	}
	for key := range translations["en"] {
		if _, ok := translations["fr"][key]; !ok {
			t.Errorf("%q has no French text", key)
		}
	}
}

func TestStaticAssets(t *testing.T) {
	for _, name := range []string{"hosted.js", "hosted.css"} {
		rec := httptest.NewRecorder()
		Static().ServeHTTP(rec, httptest.NewRequest("GET", StaticPrefix+name, nil))
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Errorf("%s: %d", name, rec.Code)
		}
	}
}

// TestRenderShowsMoneyAsPeopleReadIt: every amount of a page (the amount to pay, its pay
// button, a link's minimum and the script's copy of it) is sika.FormatMoney's, in the page's
// language, never the API's "1000.00 XOF"; the script still gets the minimum as a number.
func TestRenderShowsMoneyAsPeopleReadIt(t *testing.T) {
	d := func(s string) *decimal.Decimal { v := decimal.RequireFromString(s); return &v }
	cases := []struct {
		lang, currency string
		amount         *decimal.Decimal
		want           string
	}{
		{"fr", "XOF", d("2500.00"), "2\u00a0500\u00a0FCFA"},
		{"en", "XOF", d("2500.00"), "XOF\u00a02,500"},
		{"fr", "XAF", d("1000000000"), "1\u00a0000\u00a0000\u00a0000\u00a0FCFA"},
		{"en", "XAF", d("1000000000"), "XAF\u00a01,000,000,000"},
		{"fr", "GNF", d("20000"), "20\u00a0000\u00a0GNF"},
		{"en", "GNF", d("20000"), "GNF\u00a020,000"},
		{"fr", "CDF", d("1234.5"), "1\u00a0234,50\u00a0CDF"},
		{"en", "CDF", d("1234.5"), "CDF\u00a01,234.50"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		p := Page{Kind: KindSession, Lang: c.lang, MerchantName: "Boutique", Amount: c.amount, Currency: c.currency}
		if err := Render(&buf, p); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		if want := sika.FormatMoney(*c.amount, c.currency, c.lang); want != c.want {
			t.Fatalf("FormatMoney = %q, want %q", want, c.want)
		}
		pay := translate(c.lang, "pay")
		for _, want := range []string{`id="amount-display"><span class="visually-hidden">` + Colon(translate(c.lang, "amount"), c.lang) + ` </span>` + c.want + `</p>`,
			`id="pay-button">` + pay + " " + c.want + `</button>`} {
			if !strings.Contains(html, want) {
				t.Errorf("%s %s: page lacks %q", c.lang, c.currency, want)
			}
		}
		if raw := c.amount.StringFixed(2); strings.Contains(html, raw) {
			t.Errorf("%s %s: page shows the API's %q", c.lang, c.currency, raw)
		}
	}

	for lang, want := range map[string][]string{
		"fr": {`<label for="amount">Montant (FCFA)</label>`, `Montant minimum_: 1_500_FCFA</p>`,
			`data-min-amount="1500"`, `data-min-amount-text="1_500_FCFA"`},
		"en": {`<label for="amount">Amount (XOF)</label>`, `Minimum amount: XOF_1,500</p>`,
			`data-min-amount="1500"`, `data-min-amount-text="XOF_1,500"`},
	} {
		var buf bytes.Buffer
		p := Page{Kind: KindLink, Lang: lang, MerchantName: "Boutique", Currency: "XOF", AskAmount: true, MinAmount: d("1500.00")}
		if err := Render(&buf, p); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		for _, w := range want {
			w = strings.ReplaceAll(w, "_", "\u00a0") // "_" stands for the no-break space
			if !strings.Contains(html, w) {
				t.Errorf("%s link: page lacks %q", lang, w)
			}
		}
		for _, absent := range []string{`id="amount-display"`, "1500.00"} {
			if strings.Contains(html, absent) {
				t.Errorf("%s link with a typed amount shows %q", lang, absent)
			}
		}
	}

	var buf bytes.Buffer
	if err := Render(&buf, Page{Kind: KindLink, Lang: "fr", Currency: "XOF", AskAmount: true}); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); strings.Contains(html, `id="amount-help"`) || !strings.Contains(html, `data-min-amount="" data-min-amount-text=""`) {
		t.Error("a link without a minimum shows one")
	}
}
