package dashboard

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// pageNames are the page templates; each is parsed with layout.html, which frames it.
var pageNames = slices.Concat([]string{"login", "merchants", "home", "transactions", "transaction", "networks", "error"}, moneyPages,
	[]string{"payout_batches", "payout_batch"}, developerPages)

// view is what every page template is given: the visit (webapp.Visit: language, member,
// session, and the writing of text, money and dates; the merchant and environment), the page's
// own Data, and the dashboard's helpers.
type view struct {
	*visit
	// Title and Nav are translation keys: the page title, and the menu entry to mark current.
	Title string
	Nav   string
	Data  any
}

// Merchant is the merchant acted for (nil before one is picked).
func (v *view) Merchant() *sika.MerchantMembership { return v.merchant }

// Merchants are the member's merchants.
func (v *view) Merchants() []sika.MerchantMembership { return v.merchants }

// Env is the environment acted in.
func (v *view) Env() string { return string(v.env) }

// Test reports whether the page shows TEST data.
func (v *view) Test() bool { return v.env == sika.EnvironmentTest }

// OtherEnv is the environment the switch goes to.
func (v *view) OtherEnv() string {
	if v.env == sika.EnvironmentTest {
		return string(sika.EnvironmentLive)
	}
	return string(sika.EnvironmentTest)
}

// menu is the dashboard's navigation of a merchant (webapp.MenuEntry); pickerEntry only for a
// member of several merchants.
var (
	menu = []webapp.MenuEntry{
		webapp.Entry("", "home", "nav_home", "home"),
		webapp.Entry("transactions/", "transactions", "nav_transactions", "transactions"),
		webapp.Entry("payment-links/", "payment-links", "nav_payment_links", "payment-links"),
		webapp.Entry("checkout-sessions/", "checkout-sessions", "nav_checkout_sessions", "checkout-sessions"),
		webapp.Entry("payouts/", "payouts", "nav_payouts", "payouts"),
		webapp.Entry("networks/", "networks", "nav_networks", "networks"),
		webapp.Entry("developers/", "developers", "nav_developers", "developers"),
		webapp.Entry("kyc/", "kyc", "nav_kyc", "kyc"),
		webapp.Entry("settings/", "settings", "nav_settings", "settings"),
	}
	pickerEntry = webapp.Entry("merchants/", "merchants", "nav_merchants", "merchants")
)

// Menu is the layout's menu: the merchant's pages once one is picked, the picker for a member
// of several.
func (v *view) Menu() []webapp.MenuItem {
	var entries []webapp.MenuEntry
	if v.merchant != nil {
		entries = menu
	}
	if len(v.merchants) > 1 {
		entries = append(slices.Clip(entries), pickerEntry)
	}
	return v.MenuOf(v.Nav, entries...)
}

// render writes a whole page.
func (a *App) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	return a.host.Render(w, r, status, page, "layout", v)
}

// renderBlock writes the named part of a page alone (an htmx swap).
func (a *App) renderBlock(w http.ResponseWriter, r *http.Request, status int, page, block string, v *view) error {
	return a.host.Render(w, r, status, page, block, v)
}

// query is a dashboard URL with a query string (none when empty).
func query(path string, q url.Values) string { return webapp.Query(path, q) }

// IsCurrent reports whether id is the merchant acted for.
func (v *view) IsCurrent(id uuid.UUID) bool { return v.merchant != nil && v.merchant.ID == id }

// Table is a table of the merchant's transactions (the kit's "txtable").
func (v *view) Table(rows []sika.Transaction) webapp.TxTable {
	return webapp.TxTable{V: &v.Visit, Rows: rows, Caption: "transactions_title"}
}

// Select describes the filter select of a query parameter (the kit's "choice"), with its
// current value and error.
func (v *view) Select(name, labelKey string, opts []option) webapp.Choice {
	f := webapp.Choice{Name: name, Label: v.T(labelKey), All: v.T("all"), Options: opts}
	if d, ok := v.Data.(*transactionsData); ok {
		f.Value = strings.ToUpper(d.Form[name])
		if key := d.Errors[name]; key != "" {
			f.Error = template.HTML(template.HTMLEscapeString(v.T(key)))
		}
	}
	return f
}

// Pick describes a select of a form (the kit's "choice", webapp.Visit.Choice): its value as
// submitted and the API's error about it.
func (v *view) Pick(f *formState, name, labelKey string, opts []option, words ...string) webapp.Choice {
	return v.Choice(name, labelKey, f.Val(name), f.Err(name), opts, words...)
}
