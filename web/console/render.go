package console

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// view is what every page template is given: the visit (webapp.Visit: language, member,
// session, and the writing of text, money and dates), the page's Data, and the console's own
// helpers.
type view struct {
	*visit
	Title string
	Nav   string
	Data  any
	// Flash is the key of a message about the action just done (shown once, role=status).
	Flash string
}

// menu is the console's navigation (webapp.MenuEntry); staffEntry only for a role that
// manages staff.
var (
	menu = []webapp.MenuEntry{
		webapp.Entry("", "stuck", "nav_stuck", "stuck"),
		webapp.Entry("unclear/", "unclear", "nav_unclear", "unclear"),
		webapp.Entry("flags/", "flags", "nav_flags", "flags"),
		webapp.Entry("search/", "search", "nav_search", "search"),
		webapp.Entry("kyc/", "kyc", "nav_kyc", "kyc"),
		webapp.Entry("merchants/", "merchants", "nav_merchants", "merchants"),
		webapp.Entry("payout-methods/", "payout-methods", "nav_payout_methods", "payout_methods"),
		webapp.Entry("decisions/", "decisions", "nav_decisions", "decisions"),
		webapp.Entry("actions/", "actions", "nav_actions", "actions"),
	}
	staffEntry = webapp.Entry("staff/", "staff", "nav_staff", "staff")
)

// Menu is the layout's menu.
func (v *view) Menu() []webapp.MenuItem {
	entries := menu
	if v.Member.Can(sika.PermManageStaff) {
		entries = append(slices.Clip(menu), staffEntry)
	}
	return v.MenuOf(v.Nav, entries...)
}

// Since is how long ago t was, rounded to the minute ("3h05m", "12m").
func (v *view) Since(t time.Time) string {
	d := time.Since(t).Round(time.Minute)
	if d < time.Minute {
		return "<1m"
	}
	s := d.String()
	return s[:len(s)-2] // "1h5m0s" → "1h5m"
}

// Can reports whether the signed-in member's role allows p ("reverify", "review_kyc", …): the
// pages show only the actions it allows (the routes check it again).
func (v *view) Can(p string) bool { return v.Member.Can(sika.StaffPermission(p)) }

// Role is the member's staff role, in the page's language.
func (v *view) Role() string { return v.T("role_" + string(v.Member.StaffRole)) }

// JSON is a staff action's detail as text.
func (v *view) JSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "{}" {
		return ""
	}
	return string(raw)
}

// render writes a whole page.
func (a *App) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	return a.host.Render(w, r, status, page, "layout", v)
}

// renderBlock writes the named part of a page (an htmx swap).
func (a *App) renderBlock(w http.ResponseWriter, r *http.Request, status int, page, block string, v *view) error {
	return a.host.Render(w, r, status, page, block, v)
}

// Table is a table of transactions across merchants (the kit's "txtable").
func (v *view) Table(rows []sika.Transaction) webapp.TxTable {
	return webapp.TxTable{V: &v.Visit, Rows: rows, Caption: "transactions", AcrossMerchants: true}
}

// proposal is a form that proposes the final status of a payout with a reason (the
// "propose-status" partial): an unclear payout resolved, a re-held one settled.
type proposal struct {
	V      *view
	Action string
	// ID names the form (ID-form), its buttons (ID-<status>) and its submit button; a form in a
	// list has none.
	ID     string
	Status webapp.Choice
	Reason webapp.Field
}

// Proposal is the form that proposes a payout's final status to action: its id ("" in a list,
// where row names the reason's input), the key of its legend, and the statuses in order, each
// labelled by the text of keyPrefix and the status.
func (v *view) Proposal(action, id, row, legend, keyPrefix string, statuses ...string) proposal {
	p := proposal{V: v, Action: action, ID: id,
		Status: v.Choice("status", legend, "", "", v.Options(keyPrefix, statuses), "required", "id="+id),
		Reason: v.Field("reason", "reason", "", "", "required", "max=500", "rows=2")}
	if row != "" {
		p.Reason.ID = "reason-" + row
	}
	return p
}

// rowsOf pairs rows with the view, for the shared row templates (attempts, actions).
type rowsOf struct {
	V    *view
	Rows any
}

// RowsOf pairs rows with the view.
func (v *view) RowsOf(rows any) rowsOf { return rowsOf{V: v, Rows: rows} }
