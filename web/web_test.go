package web

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
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
	p := Page{Kind: KindSession, Lang: "fr", MerchantName: `<script>alert(1)</script>`, Amount: "1000.00", Currency: "XOF",
		Countries: []Country{{"SN", "Senegal"}, {"BJ", "Benin"}}, Country: "BJ",
		Networks: []Network{{Code: "ORANGE_SN", Name: "Orange", Country: "SN", PrePaymentOTP: true, OTPInstructions: `Dial #144# "now"`}},
		PayURL:   "/api/v1/checkout/x/pay/"}
	var buf bytes.Buffer
	if err := Render(&buf, p); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `lang="fr"`, "Payer 1000.00 XOF", `<option value="BJ" selected>Benin</option>`,
		`data-otp="1"`, `for="customer_phone"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert") {
		t.Error("merchant name not escaped")
	}
	if strings.Index(html, "Benin") > strings.Index(html, "Senegal") {
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
