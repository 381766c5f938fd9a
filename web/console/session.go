package console

import (
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// visit is one request: its language and, signed in, the staff member and session.
type visit struct{ webapp.Visit }

// handler serves a request of a visit; an error is rendered by the kit's error page.
type handler = webapp.Handler[*visit]

// policy is the console's part of the web kit (webapp.Host): staff only, a session with no
// tenancy, a merchant's dashboard session refused (Host.Foreign).
type policy struct{}

func (policy) NewVisit() *visit { return &visit{} }

// Refusal admits staff only; a member who is no longer staff loses the session.
func (policy) Refusal(m sika.Member) string {
	if !m.IsStaff {
		return "merchant_refused"
	}
	return ""
}

func (policy) Resume(*http.Request, *visit) error { return nil }

func (policy) Landing(_ *http.Request, m sika.Member, next string) (store.WebSession, string, error) {
	return store.WebSession{Member: m.ID}, next, nil
}

func (policy) View(v *visit, title string, data any) any {
	return &view{visit: v, Title: title, Data: data}
}

// dashboardKit names the dashboard's session cookie, to recognise a merchant's session: the
// console answers it 403, not a login form.
var dashboardKit = webapp.Kit{Prefix: "/dashboard/", App: store.WebAppDashboard, SessionCookie: "sika_dashboard"}

// staff serves a page of a signed-in staff member (webapp.Host.Session): without a console
// session, to the login form; anything but a GET must carry the session's CSRF token.
func (a *App) staff(h handler) http.Handler { return a.host.Session(h) }

// staffCan serves a page or action of a staff member whose role allows p (sika.StaffRole.Can);
// another staff member gets 403 with the role it needs.
func (a *App) staffCan(p sika.StaffPermission, h handler) http.Handler {
	return a.staff(func(w http.ResponseWriter, r *http.Request, v *visit) error {
		if !v.Member.Can(p) {
			return sika.ErrStaffRole(p)
		}
		return h(w, r, v)
	})
}
