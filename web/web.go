// Package web renders the hosted payment pages a customer sees: the checkout page of a
// checkout session (/pay/{slug}/) and the page of a payment link (/l/{slug}/). Templates and
// assets are embedded (no CDN, vanilla JavaScript); pages are French by default and English by
// Accept-Language or ?lang=en. The pages talk only to the public endpoints of the API, which
// authorise them by the page's slug.
package web

import (
	"embed"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// StaticPrefix is the path the page assets are served under.
const StaticPrefix = "/hosted/"

// ContentSecurityPolicy allows the pages nothing but their own origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// funcs are the template functions of the pages: t translates a key; money (sika.FormatMoney,
// e.g. {{money .Amount .Currency .Lang}}) writes every amount the pages show, as people in the
// region read it ("2 500 FCFA", "XOF 2,500"); currency (sika.CurrencyLabel) names a currency
// the way money does ("FCFA").
var funcs = template.FuncMap{
	"t":        func(lang, key string) string { return translate(lang, key) },
	"tc":       func(lang, key string) string { return Colon(translate(lang, key), lang) },
	"country":  CountryName,
	"money":    sika.FormatMoney,
	"currency": sika.CurrencyLabel,
}

var pageTemplate = template.Must(template.New("page.html").Funcs(funcs).ParseFS(templateFS, "templates/page.html"))

// Network is a network the customer may pick.
type Network struct {
	Code    string `json:"code"`
	Name    string `json:"name"`
	Country string `json:"country"`
	// PrePaymentOTP networks need a code the customer obtains first (OTPInstructions say how).
	PrePaymentOTP   bool   `json:"pre_payment_otp"`
	OTPInstructions string `json:"otp_instructions"`
}

// Country is a country the customer may pick.
type Country struct {
	ISO  string
	Name string
}

// Kind says which page is rendered.
type Kind string

// Kinds of pages.
const (
	KindSession Kind = "session"
	KindLink    Kind = "link"
)

// Page is what a hosted page shows.
type Page struct {
	Kind         Kind
	Lang         string
	MerchantName string
	// Title is the link's name (links) or the session's description (sessions).
	Title       string
	Description string
	// Amount is the amount to pay; nil when the customer types it (AskAmount). The page writes
	// it, and every other amount, with sika.FormatMoney in its language.
	Amount    *decimal.Decimal
	Currency  string
	AskAmount bool
	// MinAmount is the least the customer may type (AskAmount); nil when any amount goes.
	MinAmount *decimal.Decimal
	// AskCustomer asks the payer's name and email (links; a session knows its customer).
	AskCustomer bool
	Country     string
	// PhoneMask is the masked number the merchant gave for the customer (sika.MaskPhone), never
	// the number itself: the page is public to whoever holds its link. The field is then
	// optional, and the payment falls back to the stored number when it is left empty.
	PhoneMask string
	Countries []Country
	Networks  []Network
	// PayURL, OTPURL, PollURL and PredictURL are the public API endpoints of the page; PollURL is the
	// session status, or the prefix of a link payment (the payment id and "/" are appended).
	PayURL  string
	OTPURL  string
	PollURL string
	// PredictURL predicts the network of the number typed (?phone=&country=), which the page
	// preselects until the customer picks one.
	PredictURL string
	// Closed is why the page takes no payment: PAID, EXPIRED, CANCELLED, INACTIVE or USED_UP (a link
	// that generated its usage_limit transactions).
	Closed string
	// Test marks a sandbox page.
	Test bool
	// SwitchURL is this page in the other language.
	SwitchURL string
	// Error is the key of what a link that shows no payment says instead: page_not_found (a
	// slug unknown) or error_generic.
	Error string
}

// Messages are the strings the page script needs, in the page's language.
func (p Page) Messages() map[string]string {
	out := map[string]string{}
	for _, k := range scriptKeys {
		out[k] = translate(p.Lang, k)
	}
	return out
}

// Render writes the page.
func Render(w io.Writer, p Page) error {
	sort.Slice(p.Countries, func(i, j int) bool { return p.Countries[i].Name < p.Countries[j].Name })
	return pageTemplate.Execute(w, p)
}

// Catalogue is every string of the pages by language and key (a test checks that a page says
// none of the other language's).
func Catalogue() map[string]map[string]string { return translations }

// Static serves the pages' assets under StaticPrefix.
func Static() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.StripPrefix(StaticPrefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
}

// Lang picks the page language: ?lang=en|fr first, then the best of English and French in
// Accept-Language, French otherwise.
func Lang(r *http.Request) string {
	switch q := strings.ToLower(r.URL.Query().Get("lang")); q {
	case "en", "fr":
		return q
	}
	best, bestQ := "fr", -1.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		lang := strings.ToLower(strings.SplitN(tag, "-", 2)[0])
		if lang != "en" && lang != "fr" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}
