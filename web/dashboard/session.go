package dashboard

import (
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// app is the web app these sessions belong to: the console's are never accepted here.
const app = store.WebAppDashboard

// visit is one request of a member (webapp.Visit: language, session, member), with the
// member's merchants and, on merchant pages, the merchant and environment it acts in. Public
// pages have a visit with only a language.
type visit struct {
	webapp.Visit
	merchants []sika.MerchantMembership
	merchant  *sika.MerchantMembership
	env       sika.Environment
}

// handler serves a request of a visit; an error is rendered by the kit's error page.
type handler = webapp.Handler[*visit]

// policy is the dashboard's part of the web kit (webapp.Host): members who are not staff, a
// session that acts for one of the member's merchants in one environment.
type policy struct{ a *App }

func (policy) NewVisit() *visit { return &visit{} }

// Refusal admits members who are not staff: staff sign in to the console, and a member made
// staff since loses this session.
func (policy) Refusal(m sika.Member) string {
	if m.IsStaff {
		return "staff_refused"
	}
	return ""
}

// Resume reads the member's merchants and the one the session acts for; a member of one
// merchant has nothing to pick.
func (p policy) Resume(r *http.Request, v *visit) error {
	merchants, err := p.a.cfg.Store.MemberMerchants(r.Context(), v.Member.ID)
	if err != nil {
		return err
	}
	v.merchants, v.env = merchants, v.Session.Environment
	if v.Session.Merchant != nil {
		for i := range merchants {
			if merchants[i].ID == *v.Session.Merchant {
				v.merchant = &merchants[i]
			}
		}
	}
	if v.merchant == nil && len(merchants) == 1 {
		return p.a.actFor(r, v, &merchants[0], defaultEnvironment(merchants[0].Merchant))
	}
	return nil
}

// Landing starts a session that acts at once for a member's only merchant; a member of several
// is sent to pick one.
func (p policy) Landing(r *http.Request, m sika.Member, next string) (store.WebSession, string, error) {
	merchants, err := p.a.cfg.Store.MemberMerchants(r.Context(), m.ID)
	if err != nil {
		return store.WebSession{}, "", err
	}
	ws := store.WebSession{Member: m.ID, Environment: sika.EnvironmentTest}
	if len(merchants) == 1 {
		id := merchants[0].ID
		ws.Merchant, ws.Environment = &id, defaultEnvironment(merchants[0].Merchant)
	}
	if len(merchants) > 1 && next == Prefix {
		next = Prefix + "merchants/"
	}
	return ws, next, nil
}

func (policy) View(v *visit, title string, data any) any {
	return &view{visit: v, Title: title, Data: data}
}

// signedIn serves a page of a signed-in member, who may not have picked a merchant yet.
func (a *App) signedIn(h handler) http.Handler { return a.host.Session(h) }

// forMerchant serves a page that shows a merchant's data: without a merchant picked, the member
// is sent to the picker.
func (a *App) forMerchant(h handler) http.Handler { return a.host.Session(needMerchant(h)) }

// forUpload serves a multipart POST of a merchant that carries a file (a KYC document), streamed
// to h as v.Parts (webapp.Host.Upload).
func (a *App) forUpload(h handler) http.Handler { return a.host.Upload(needMerchant(h)) }

func needMerchant(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		if v.merchant == nil {
			webapp.Redirect(w, r, Prefix+"merchants/")
			return nil
		}
		return h(w, r, v)
	}
}

// actFor records the merchant and environment the session acts in.
func (a *App) actFor(r *http.Request, v *visit, m *sika.MerchantMembership, env sika.Environment) error {
	id := m.ID
	if err := a.cfg.Store.SetWebSessionTenancy(r.Context(), app, v.TokenHash, &id, env); err != nil {
		return err
	}
	v.merchant, v.env = m, env
	v.Session.Merchant, v.Session.Environment = &id, env
	return nil
}

// defaultEnvironment is where a merchant lands: LIVE once it may take real money, TEST before.
func defaultEnvironment(m sika.Merchant) sika.Environment {
	if m.IsActive && !m.IsSuspended {
		return sika.EnvironmentLive
	}
	return sika.EnvironmentTest
}

// safeNext is a dashboard path to go to after a form (webapp.Kit.SafeNext).
func safeNext(next string) string {
	return (&webapp.Kit{Prefix: Prefix}).SafeNext(next)
}
