package webapp

import (
	"fmt"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web"
)

// Visit is one request of a web app: its language and, signed in, the member and the session;
// and the writing of its pages in that language (the methods the templates call: text, money,
// dates, the CSRF token). Each app's own visit embeds it and adds what its policy keeps (the
// dashboard's merchant and environment); the app's page view embeds the app's visit.
type Visit struct {
	// Lang is the page language ("fr" or "en").
	Lang string
	// TokenHash identifies the session (nil on public pages).
	TokenHash []byte
	Session   store.WebSession
	Member    sika.Member
	// Parts is the multipart body of an upload (Host.Upload), its CSRF token already checked.
	Parts *multipart.Reader

	r      *http.Request
	cat    Catalogue
	prefix string
}

// base is the kit's part of an app's visit.
func (v *Visit) base() *Visit { return v }

// Visitor is an app's visit: a struct that embeds Visit.
type Visitor interface{ base() *Visit }

// T is the page's text for a key.
func (v *Visit) T(key string) string { return v.cat.Text(v.Lang, key) }

// L is the text of a key followed by a colon as the language writes it ("Marchand :" with a
// no-break space in French, "Merchant:" in English).
func (v *Visit) L(key string) string { return web.Colon(v.T(key), v.Lang) }

// Prefix is the path the app is served under ("/dashboard/").
func (v *Visit) Prefix() string { return v.prefix }

// Money is an amount through sika.FormatMoney, the one formatting of every page and document
// ("2 500 FCFA" in French, "XOF 2,500" in English).
func (v *Visit) Money(a sika.Amount, currency string) string { return v.Dec(a.Decimal, currency) }

// Dec is an amount held as a plain decimal (a sum, a quote), as Money writes it.
func (v *Visit) Dec(d decimal.Decimal, currency string) string {
	return sika.FormatMoney(d, currency, v.Lang)
}

// MoneyPtr is Money for an optional amount ("—" when absent).
func (v *Visit) MoneyPtr(a *sika.Amount, currency string) string {
	if a == nil {
		return "—"
	}
	return v.Money(*a, currency)
}

// TxAmount is a transaction's amount, negative when money leaves the wallet (a payout).
func (v *Visit) TxAmount(t sika.Transaction) string {
	if t.FlowDirection == sika.DirectionOutbound {
		return v.Dec(t.Amount.Neg(), t.Currency)
	}
	return v.Dec(t.Amount.Decimal, t.Currency)
}

// When is a date and time in the page's language, in UTC (the ledger's clock).
func (v *Visit) When(t time.Time) string { return FormatTime(t, v.Lang) }

// WhenPtr is When for an optional time ("—" when absent).
func (v *Visit) WhenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return FormatTime(*t, v.Lang)
}

// Day is a UTC date in the page's language ("25/11/2026", "25 Nov 2026").
func (v *Visit) Day(t time.Time) string {
	if v.Lang == "en" {
		return t.UTC().Format("2 Jan 2006")
	}
	return t.UTC().Format("02/01/2006")
}

// ISO is a time as the datetime attribute of <time> wants it.
func (v *Visit) ISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// CSRF is the session's token, for forms.
func (v *Visit) CSRF() string { return v.Session.CSRFToken }

// HXHeaders is the hx-headers attribute of the body: every htmx request carries the token.
func (v *Visit) HXHeaders() string { return `{"` + CSRFHeader + `":"` + v.Session.CSRFToken + `"}` }

// SignedIn reports whether the page belongs to a session (it shows the menu).
func (v *Visit) SignedIn() bool { return v.TokenHash != nil }

// Here is the page's own path and query, where forms come back to.
func (v *Visit) Here() string { return v.r.URL.RequestURI() }

// Path is the page's own path, without its query (a filter form's action).
func (v *Visit) Path() string { return v.r.URL.Path }

// SwitchLang is this page in the other language.
func (v *Visit) SwitchLang() string { return SwitchLangURL(v.r, v.Lang) }

// StatusLabel is a transaction status in the page's language.
func (v *Visit) StatusLabel(status sika.TransactionStatus) string {
	return v.T("status_" + string(status))
}

// StatusClass is the CSS class of a status's badge, whatever it is the status of (a
// transaction, an attempt, a checkout session, a KYC dossier, a money decision): ok for what
// ended well, ko for what ended otherwise, wait for what has not ended.
func (v *Visit) StatusClass(status any) string {
	switch fmt.Sprint(status) {
	case "SUCCESS", "PAID", "APPROVED", "VERIFIED":
		return "badge ok"
	case "FAILED", "CANCELLED", "EXPIRED", "REJECTED":
		return "badge ko"
	}
	return "badge wait"
}

// Country is a country's name in the page's language (Catalogue.Country).
func (v *Visit) Country(iso, name string) string { return v.cat.Country(v.Lang, iso, name) }

// MenuEntry is a page of an app's menu: its path under the prefix, its id (the link's is
// nav-<ID>), its text's key, and the Nav of the pages that mark it current.
type MenuEntry struct{ Path, ID, Key, Nav string }

// Entry is a MenuEntry.
func Entry(path, id, key, nav string) MenuEntry {
	return MenuEntry{Path: path, ID: id, Key: key, Nav: nav}
}

// MenuItem is an entry of the menu as the layout shows it.
type MenuItem struct {
	Href, ID, Text string
	Current        bool
}

// MenuOf is the layout's menu of entries, on a page whose Nav is current.
func (v *Visit) MenuOf(current string, entries ...MenuEntry) []MenuItem {
	out := make([]MenuItem, len(entries))
	for i, e := range entries {
		out[i] = MenuItem{Href: v.prefix + e.Path, ID: e.ID, Text: v.T(e.Key), Current: e.Nav == current}
	}
	return out
}

// Said is a text and, Marked, the language it is in when not the page's (lang="en" on its
// element; "" for unknown: what a person wrote).
type Said struct {
	Text, Lang string
	Marked     bool
}

// reasons are the status log's and the pending reasons the service writes (English, in the
// log), and the key of their text; a pattern's first group is the text's %s, its second %t.
var reasons = []struct {
	re  *regexp.Regexp
	key string
}{
	{regexp.MustCompile(`^Payment requested$`), "reason_payment_requested"},
	{regexp.MustCompile(`^Payment requested on the checkout page$`), "reason_checkout_requested"},
	{regexp.MustCompile(`^Payment requested on the payment link page$`), "reason_link_requested"},
	{regexp.MustCompile(`^Payout requested$`), "reason_payout_requested"},
	{regexp.MustCompile(`^Settlement requested$`), "reason_settlement_requested"},
	{regexp.MustCompile(`^Wallet transfer requested$`), "reason_transfer_requested"},
	{regexp.MustCompile(`^Refund of (\S+) requested$`), "reason_refund_requested"},
	{regexp.MustCompile(`^Confirmed$`), "reason_confirmed"},
	{regexp.MustCompile(`^Confirmed by (\S+) callback$`), "reason_confirmed_callback"},
	{regexp.MustCompile(`^Confirmed by (\S+)$`), "reason_confirmed_by"},
	{regexp.MustCompile(`^Refused by (\S+): (\S+)$`), "reason_refused_by"},
	{regexp.MustCompile(`^Awaiting the operator's final answer`), "reason_awaiting_operator"},
}

// Reason is a status log's or a pending reason in the page's language. One the service writes
// in words of its own (an operator's message) stays as written, marked English on a French
// page; a person's (support's reason, triggeredBy ADMIN) is theirs, in a language unknown.
func (v *Visit) Reason(reason, triggeredBy string) *Said {
	if reason == "" {
		return nil
	}
	for _, p := range reasons {
		if m := p.re.FindStringSubmatch(reason); m != nil {
			text := v.T(p.key)
			if len(m) > 1 {
				text = strings.Replace(text, "%s", m[1], 1)
			}
			if len(m) > 2 {
				text = strings.Replace(text, "%t", m[2], 1)
			}
			return &Said{Text: text}
		}
	}
	if triggeredBy == string(sika.TriggerAdmin) {
		return &Said{Text: reason, Marked: true}
	}
	return &Said{Text: reason, Lang: "en", Marked: v.Lang != "en"}
}
