package dashboard

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web"
)

// app is the web app these sessions belong to: the console's are never accepted here.
const app = store.WebAppDashboard

// Cookie names. Over TLS they carry the __Secure- prefix, which browsers accept only from a
// secure origin with the Secure attribute.
const (
	sessionCookie    = "sika_dashboard"
	loginCSRFCookie  = "sika_dashboard_login"
	langCookie       = "sika_lang"
	csrfField        = "csrf_token"
	csrfHeader       = "X-CSRF-Token"
	maxFormBytes     = 64 << 10
	touchEvery       = time.Minute
	tokenBytes       = 32
	encodedTokenSize = 43 // base64url of tokenBytes, unpadded
)

// visit is one request of a member: its session, its merchants and, on merchant pages, the
// merchant and environment it acts in. Public pages have a visit with only a language.
type visit struct {
	lang string
	// tokenHash identifies the session (nil on public pages).
	tokenHash []byte
	session   store.WebSession
	member    sika.Member
	merchants []sika.MerchantMembership
	merchant  *sika.MerchantMembership
	env       sika.Environment
}

// handler serves a request of a visit; an error is rendered by fail.
type handler func(w http.ResponseWriter, r *http.Request, v *visit) error

// errForbidden refuses a request whose CSRF token or origin does not check.
var errForbidden = errors.New("request not verified (CSRF token or origin)")

// public serves a page that needs no session (the login form).
func (a *App) public(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.cfg.RouteMatched(r)
		v := &visit{lang: a.lang(r)}
		if err := h(w, r, v); err != nil {
			a.fail(w, r, v, err)
		}
	})
}

// signedIn serves a page of a signed-in member, who may not have picked a merchant yet.
func (a *App) signedIn(h handler) http.Handler { return a.withSession(h, false) }

// forMerchant serves a page that shows a merchant's data: without a merchant picked, the member
// is sent to the picker.
func (a *App) forMerchant(h handler) http.Handler { return a.withSession(h, true) }

// withSession resolves the session of the request (no session: to the login page), checks the
// CSRF token of anything but a GET, and runs h.
func (a *App) withSession(h handler, needMerchant bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.cfg.RouteMatched(r)
		v := &visit{lang: a.lang(r)}
		found, hadCookie, err := a.loadSession(w, r, v)
		if err != nil {
			a.fail(w, r, v, err)
			return
		}
		if !found {
			a.toLogin(w, r, hadCookie)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := a.checkCSRF(r, v.session.CSRFToken); err != nil {
				a.fail(w, r, v, err)
				return
			}
		}
		if needMerchant && v.merchant == nil {
			a.redirect(w, r, Prefix+"merchants/")
			return
		}
		if err := h(w, r, v); err != nil {
			a.fail(w, r, v, err)
		}
	})
}

// loadSession reads the session of the request's cookie into v. found is false without a live
// dashboard session of a member who is not staff; hadCookie tells an ended session from none.
func (a *App) loadSession(w http.ResponseWriter, r *http.Request, v *visit) (found, hadCookie bool, err error) {
	hash, ok := a.sessionToken(r)
	if !ok {
		return false, false, nil
	}
	ctx := r.Context()
	now := a.cfg.Now()
	ws, err := a.cfg.Store.WebSessionByToken(ctx, app, hash, now)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		a.clearCookie(w, r, sessionCookie)
		return false, true, nil
	}
	if err != nil {
		return false, true, err
	}
	member, err := a.cfg.Store.MemberByID(ctx, ws.Member)
	if err == nil && member.IsStaff {
		// Staff sign in to the console; a member made staff since loses this session.
		err = sika.NotFound("Member")
	}
	if sika.ErrorCode(err) == sika.CodeNotFound {
		if err := a.cfg.Store.DeleteWebSession(ctx, app, hash); err != nil {
			return false, true, err
		}
		a.clearCookie(w, r, sessionCookie)
		return false, true, nil
	}
	if err != nil {
		return false, true, err
	}
	if now.Sub(ws.LastSeenAt) >= touchEvery {
		if err := a.cfg.Store.TouchWebSession(ctx, app, hash, now, a.cfg.IdleTimeout); err != nil {
			return false, true, err
		}
	}
	merchants, err := a.cfg.Store.MemberMerchants(ctx, member.ID)
	if err != nil {
		return false, true, err
	}
	v.tokenHash, v.session, v.member, v.merchants, v.env = hash, ws, member, merchants, ws.Environment
	if ws.Merchant != nil {
		for i := range merchants {
			if merchants[i].ID == *ws.Merchant {
				v.merchant = &merchants[i]
			}
		}
	}
	// A member of one merchant has nothing to pick.
	if v.merchant == nil && len(merchants) == 1 {
		if err := a.actFor(r, v, &merchants[0], defaultEnvironment(merchants[0].Merchant)); err != nil {
			return false, true, err
		}
	}
	return true, true, nil
}

// actFor records the merchant and environment the session acts in.
func (a *App) actFor(r *http.Request, v *visit, m *sika.MerchantMembership, env sika.Environment) error {
	id := m.ID
	if err := a.cfg.Store.SetWebSessionTenancy(r.Context(), app, v.tokenHash, &id, env); err != nil {
		return err
	}
	v.merchant, v.env = m, env
	v.session.Merchant, v.session.Environment = &id, env
	return nil
}

// defaultEnvironment is where a merchant lands: LIVE once it may take real money, TEST before.
func defaultEnvironment(m sika.Merchant) sika.Environment {
	if m.IsActive && !m.IsSuspended {
		return sika.EnvironmentLive
	}
	return sika.EnvironmentTest
}

// startSession creates a session for member and sets its cookie. The id is new at every login,
// so an id planted in a browser before login (session fixation) is worth nothing.
func (a *App) startSession(w http.ResponseWriter, r *http.Request, member sika.Member, merchants []sika.MerchantMembership) error {
	token, csrf := newToken(), newToken()
	now := a.cfg.Now()
	ws := store.WebSession{
		TokenHash: hashToken(token), App: app, Member: member.ID, Environment: sika.EnvironmentTest, CSRFToken: csrf,
		ClientIP: a.cfg.ClientIP(r).String(), UserAgent: truncate(r.UserAgent(), 300),
		CreatedAt: now, LastSeenAt: now, AbsoluteExpiresAt: now.Add(a.cfg.SessionLifetime),
	}
	ws.ExpiresAt = now.Add(min(a.cfg.IdleTimeout, a.cfg.SessionLifetime))
	if len(merchants) == 1 {
		id := merchants[0].ID
		ws.Merchant, ws.Environment = &id, defaultEnvironment(merchants[0].Merchant)
	}
	if err := a.cfg.Store.CreateWebSession(r.Context(), ws); err != nil {
		return err
	}
	a.setCookie(w, r, sessionCookie, token, Prefix, 0)
	return nil
}

// endSession deletes the session of the request's cookie, if any, and clears the cookie.
func (a *App) endSession(w http.ResponseWriter, r *http.Request) error {
	if hash, ok := a.sessionToken(r); ok {
		if err := a.cfg.Store.DeleteWebSession(r.Context(), app, hash); err != nil {
			return err
		}
	}
	a.clearCookie(w, r, sessionCookie)
	return nil
}

// sessionToken is the hash of the request's session cookie, when it holds a well-formed id.
func (a *App) sessionToken(r *http.Request) ([]byte, bool) {
	c, err := r.Cookie(a.cookieName(r, sessionCookie))
	if err != nil || len(c.Value) != encodedTokenSize {
		return nil, false
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(c.Value); err != nil {
		return nil, false
	}
	return hashToken(c.Value), true
}

// checkCSRF verifies a state-changing request: its origin, when the browser names it, is this
// dashboard's, and it carries the expected token, in the X-CSRF-Token header (htmx) or the
// csrf_token form field.
func (a *App) checkCSRF(r *http.Request, want string) error {
	if !a.sameOrigin(r) {
		return errForbidden
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errForbidden
	}
	return nil
}

// sameOrigin refuses a request a browser says came from another site: Sec-Fetch-Site
// cross-site, or an Origin that is neither the public URL's nor the request's host.
func (a *App) sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return true // no claim either way: the token decides
	}
	if a.cfg.PublicURL != "" && strings.EqualFold(origin, originOf(a.cfg.PublicURL)) {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+r.Host)
}

// originOf is the scheme://host[:port] of a URL.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// cookieName is a cookie's name for this request: __Secure-name over TLS.
func (a *App) cookieName(r *http.Request, name string) string {
	if a.secure(r) {
		return "__Secure-" + name
	}
	return name
}

// setCookie sets an HttpOnly, SameSite=Lax cookie (Secure over TLS); maxAge 0 makes it last
// as long as the browser does.
func (a *App) setCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: a.cookieName(r, name), Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: a.secure(r), SameSite: http.SameSiteLaxMode})
}

func (a *App) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	path := Prefix
	if name == loginCSRFCookie {
		path = Prefix + "login/"
	}
	a.setCookie(w, r, name, "", path, -1)
}

// newToken is 32 random bytes, base64url.
func newToken() string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on a supported platform
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is what the store keeps of a session id.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// redirect sends the browser to a dashboard path: a 303, or for an htmx request an
// HX-Redirect, so that a whole page (the login form, say) never lands inside a fragment.
func (a *App) redirect(w http.ResponseWriter, r *http.Request, to string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", to)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// toLogin sends a visitor without a session to the login form, which brings a GET back to
// where it was going.
func (a *App) toLogin(w http.ResponseWriter, r *http.Request, expired bool) {
	q := url.Values{}
	if r.Method == http.MethodGet && r.URL.Path != Prefix {
		q.Set("next", r.URL.RequestURI())
	}
	if expired {
		q.Set("expired", "1")
	}
	to := Prefix + "login/"
	if len(q) > 0 {
		to += "?" + q.Encode()
	}
	a.redirect(w, r, to)
}

// safeNext is a dashboard path to go to after a form: next when it is a path of this
// dashboard (never another site: //host and /\host are refused), the home page otherwise.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, Prefix) ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return Prefix
	}
	return next
}

// lang is the page language: the visitor's choice (the switch's cookie), else the best of
// English and French in Accept-Language, else French.
func (a *App) lang(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil && (c.Value == "en" || c.Value == "fr") {
		return c.Value
	}
	return web.Lang(r) // the hosted pages' rule: Accept-Language, French by default
}

// switchLanguage records a ?lang=en|fr choice in a cookie and sends a GET back to the same
// page without it.
func (a *App) switchLanguage(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	l := strings.ToLower(q.Get("lang"))
	if l != "en" && l != "fr" {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: Prefix, MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: a.secure(r), SameSite: http.SameSiteLaxMode})
	q.Del("lang")
	to := r.URL.Path
	if enc := q.Encode(); enc != "" {
		to += "?" + enc
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// parseID is a path's uuid; anything else is not found, as an unknown id is.
func parseID(raw, kind string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, sika.NotFound(kind)
	}
	return id, nil
}
