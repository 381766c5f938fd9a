// Package webapp is what Sika's web apps share (issue 14): the merchant dashboard
// (web/dashboard, under /dashboard/) and the support console (web/console, under /console/).
// One implementation of each piece of browser security, used by both: the session cookie (a
// random id in an HttpOnly, SameSite=Lax cookie, Secure over TLS, only its SHA-256 kept in
// Postgres as a store.WebSession of the app's own kind, so a session of one app is never
// found by the other), the CSRF token of every request that is not a GET, the security headers
// and Content-Security-Policy, the static files (the shared stylesheet and htmx, vendored from
// the npm registry by scripts/vendor-web.sh and embedded here), the rendering of a page with its
// layout, the mapping of an error to its page, and the language choice (French unless English
// is asked for, by Accept-Language or the switch).
package webapp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web"
)

// ContentSecurityPolicy allows the pages nothing but their own origin: no inline script, no
// eval (htmx is configured without it), no inline style, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Defaults of the session lifetime: a bank's, not a social network's.
const (
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultSessionLifetime = 12 * time.Hour
)

// Names and bounds shared by the apps.
const (
	LangCookie = "sika_lang"
	CSRFField  = "csrf_token"
	CSRFHeader = "X-CSRF-Token"
	// MaxFormBytes bounds the body of every request that is not a GET, before its token is read.
	MaxFormBytes = 64 << 10
	// MaxUploadBytes bounds the body of an upload form: the largest KYC file the API takes
	// (sika.MaxKYCFileSize) and the form's other fields and framing. The file's own limit is the
	// API's, checked on the bytes it reads.
	MaxUploadBytes = sika.MaxKYCFileSize + MaxFormBytes
	// TouchEvery is how often a session's idle deadline is moved forward by use.
	TouchEvery       = time.Minute
	tokenBytes       = 32
	encodedTokenSize = 43 // base64url of tokenBytes, unpadded
)

// ErrForbidden refuses a request whose CSRF token or origin does not check.
var ErrForbidden = errors.New("request not verified (CSRF token or origin)")

//go:embed static
var sharedStatic embed.FS

// SharedStatic is the files every app serves under its static/ path: sika.css and vendor/.
func SharedStatic() fs.FS { return sharedStatic }

// SessionStore is the part of the store a web app's sessions live in; *store.Store is it.
type SessionStore interface {
	CreateWebSession(ctx context.Context, ws store.WebSession) error
	WebSessionByToken(ctx context.Context, app store.WebApp, tokenHash []byte, now time.Time) (store.WebSession, error)
	TouchWebSession(ctx context.Context, app store.WebApp, tokenHash []byte, now time.Time, idle time.Duration) error
	DeleteWebSession(ctx context.Context, app store.WebApp, tokenHash []byte) error
}

// Kit is one app's use of the shared pieces: its path prefix, its kind of session, its cookie
// names and where it is reached.
type Kit struct {
	// Prefix is the path the app is served under ("/dashboard/").
	Prefix string
	// App is the kind of session the app keeps and accepts.
	App store.WebApp
	// SessionCookie and LoginCookie name the session's cookie and the login form's CSRF cookie.
	SessionCookie, LoginCookie string
	// PublicURL is the scheme and host the service is reached at (no trailing slash); https
	// marks cookies Secure.
	PublicURL       string
	IdleTimeout     time.Duration
	SessionLifetime time.Duration
	Now             func() time.Time
}

// Secure reports whether the app is reached over TLS: this request came over TLS, or the
// public URL is https (TLS ended at a proxy in front).
func (k *Kit) Secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(k.PublicURL, "https://")
}

// SecurityHeaders are set on every answer: the CSP, no sniffing, no framing, no caching of
// pages that show money, the origin alone as referrer, and HSTS when served over TLS.
func (k *Kit) SecurityHeaders(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin: a form's POST keeps its Origin header (no-referrer would send "null").
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	h.Set("Cache-Control", "no-store")
	if k.Secure(r) {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
}

// CookieName is a cookie's name for this request: __Secure-name over TLS.
func (k *Kit) CookieName(r *http.Request, name string) string {
	if k.Secure(r) {
		return "__Secure-" + name
	}
	return name
}

// SetCookie sets an HttpOnly, SameSite=Lax cookie (Secure over TLS); maxAge 0 makes it last
// as long as the browser does.
func (k *Kit) SetCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: k.CookieName(r, name), Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: k.Secure(r), SameSite: http.SameSiteLaxMode})
}

// ClearCookie removes the session cookie or the login cookie.
func (k *Kit) ClearCookie(w http.ResponseWriter, r *http.Request, name string) {
	p := k.Prefix
	if name == k.LoginCookie {
		p = k.Prefix + "login/"
	}
	k.SetCookie(w, r, name, "", p, -1)
}

// NewToken is 32 random bytes, base64url.
func NewToken() string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on a supported platform
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is what the store keeps of a session id.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// SessionToken is the hash of the request's session cookie, when it holds a well-formed id.
func (k *Kit) SessionToken(r *http.Request) ([]byte, bool) {
	c, err := r.Cookie(k.CookieName(r, k.SessionCookie))
	if err != nil || len(c.Value) != encodedTokenSize {
		return nil, false
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(c.Value); err != nil {
		return nil, false
	}
	return HashToken(c.Value), true
}

// LoadSession reads the live session of the request's cookie, of this app only, and moves its
// idle deadline forward (at most once a TouchEvery). found is false without one; hadCookie
// tells an ended session from none (an ended one's cookie is cleared).
func (k *Kit) LoadSession(w http.ResponseWriter, r *http.Request, st SessionStore) (ws store.WebSession, hash []byte, found, hadCookie bool, err error) {
	hash, ok := k.SessionToken(r)
	if !ok {
		return ws, nil, false, false, nil
	}
	now := k.Now()
	ws, err = st.WebSessionByToken(r.Context(), k.App, hash, now)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		k.ClearCookie(w, r, k.SessionCookie)
		return ws, nil, false, true, nil
	}
	if err != nil {
		return ws, nil, false, true, err
	}
	if now.Sub(ws.LastSeenAt) >= TouchEvery {
		if err := st.TouchWebSession(r.Context(), k.App, hash, now, k.IdleTimeout); err != nil {
			return ws, nil, false, true, err
		}
	}
	return ws, hash, true, true, nil
}

// DropSession deletes a session found but no longer wanted (its member may not use the app
// any more) and clears its cookie.
func (k *Kit) DropSession(w http.ResponseWriter, r *http.Request, st SessionStore, hash []byte) error {
	if err := st.DeleteWebSession(r.Context(), k.App, hash); err != nil {
		return err
	}
	k.ClearCookie(w, r, k.SessionCookie)
	return nil
}

// StartSession creates a session of this app for member (with the tenancy of ws, when the app
// has one) and sets its cookie. The id is new at every login, so an id planted in a browser
// before login (session fixation) is worth nothing.
func (k *Kit) StartSession(w http.ResponseWriter, r *http.Request, st SessionStore, ws store.WebSession, clientIP string) (store.WebSession, error) {
	token := NewToken()
	now := k.Now()
	ws.TokenHash, ws.App, ws.CSRFToken = HashToken(token), k.App, NewToken()
	if ws.Environment == "" {
		ws.Environment = sika.EnvironmentTest
	}
	ws.ClientIP, ws.UserAgent = clientIP, Truncate(r.UserAgent(), 300)
	ws.CreatedAt, ws.LastSeenAt, ws.AbsoluteExpiresAt = now, now, now.Add(k.SessionLifetime)
	ws.ExpiresAt = now.Add(min(k.IdleTimeout, k.SessionLifetime))
	if err := st.CreateWebSession(r.Context(), ws); err != nil {
		return ws, err
	}
	k.SetCookie(w, r, k.SessionCookie, token, k.Prefix, 0)
	return ws, nil
}

// EndSession deletes the session of the request's cookie, if any, and clears the cookie.
func (k *Kit) EndSession(w http.ResponseWriter, r *http.Request, st SessionStore) error {
	if hash, ok := k.SessionToken(r); ok {
		if err := st.DeleteWebSession(r.Context(), k.App, hash); err != nil {
			return err
		}
	}
	k.ClearCookie(w, r, k.SessionCookie)
	return nil
}

// CheckCSRF verifies a state-changing request: its origin, when the browser names it, is this
// app's, and it carries the expected token, in the X-CSRF-Token header (htmx) or the
// csrf_token form field.
func (k *Kit) CheckCSRF(r *http.Request, want string) error {
	if !k.SameOrigin(r) {
		return ErrForbidden
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		got = r.PostFormValue(CSRFField)
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return ErrForbidden
	}
	return nil
}

// CheckUploadCSRF verifies a multipart upload without reading its file: its origin, and its
// token, in the X-CSRF-Token header (a script's upload) or else in the csrf_token field, which
// must be the body's first part (a form's upload puts it first). It returns the body's parts
// after the token, for the handler to stream.
func (k *Kit) CheckUploadCSRF(r *http.Request, want string) (*multipart.Reader, error) {
	if !k.SameOrigin(r) || want == "" {
		return nil, ErrForbidden
	}
	parts, err := r.MultipartReader()
	if err != nil {
		return nil, ErrForbidden
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		p, err := parts.NextPart()
		if err != nil || p.FormName() != CSRFField {
			return nil, ErrForbidden
		}
		raw, err := io.ReadAll(io.LimitReader(p, encodedTokenSize+1))
		if err != nil {
			return nil, ErrForbidden
		}
		got = string(raw)
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return nil, ErrForbidden
	}
	return parts, nil
}

// NewLoginToken sets the login form's CSRF cookie and returns the token the form carries:
// there is no session to keep a token in yet, and a forged login (into the attacker's
// account) is refused too.
func (k *Kit) NewLoginToken(w http.ResponseWriter, r *http.Request) string {
	t := NewToken()
	k.SetCookie(w, r, k.LoginCookie, t, k.Prefix+"login/", 3600)
	return t
}

// CheckLoginCSRF verifies a login form (its body already parsed): same origin, and the form's
// token is the login cookie's.
func (k *Kit) CheckLoginCSRF(r *http.Request) error {
	c, err := r.Cookie(k.CookieName(r, k.LoginCookie))
	if !k.SameOrigin(r) || err != nil || c.Value == "" ||
		subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get(CSRFField))) != 1 {
		return ErrForbidden
	}
	return nil
}

// SameOrigin refuses a request a browser says came from another site: Sec-Fetch-Site
// cross-site, or an Origin that is neither the public URL's nor the request's host.
func (k *Kit) SameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return true // no claim either way: the token decides
	}
	if k.PublicURL != "" && strings.EqualFold(origin, originOf(k.PublicURL)) {
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

// Redirect sends the browser to a path of the app: a 303, or for an htmx request an
// HX-Redirect, so that a whole page (the login form, say) never lands inside a fragment.
func Redirect(w http.ResponseWriter, r *http.Request, to string) {
	if r.Header.Get("HX-Request") == "true" {
		w.Header().Set("HX-Redirect", to)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// ToLogin sends a visitor without a session to the login form, which brings a GET back to
// where it was going.
func (k *Kit) ToLogin(w http.ResponseWriter, r *http.Request, expired bool) {
	q := url.Values{}
	if r.Method == http.MethodGet && r.URL.Path != k.Prefix {
		q.Set("next", r.URL.RequestURI())
	}
	if expired {
		q.Set("expired", "1")
	}
	Redirect(w, r, Query(k.Prefix+"login/", q))
}

// SafeNext is a path to go to after a form: next when it is a path of this app (never another
// site: //host and /\host are refused), the app's home otherwise. A path with a dot segment
// (/dashboard/../api/, also written %2e%2e) is refused: the browser resolves it before it asks,
// out of the prefix the check saw.
func (k *Kit) SafeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, k.Prefix) ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") || hasDotSegment(u.Path) || strings.Contains(u.Path, "\\") {
		return k.Prefix
	}
	return next
}

// hasDotSegment reports whether a (decoded) path has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// Lang is the page language: the visitor's choice (the switch's cookie), else the best of
// English and French in Accept-Language, else French.
func Lang(r *http.Request) string {
	if c, err := r.Cookie(LangCookie); err == nil && (c.Value == "en" || c.Value == "fr") {
		return c.Value
	}
	return web.Lang(r) // the hosted pages' rule: Accept-Language, French by default
}

// SwitchLanguage records a ?lang=en|fr choice in a cookie and sends a GET back to the same
// page without it; it reports whether it answered.
func (k *Kit) SwitchLanguage(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	l := strings.ToLower(q.Get("lang"))
	if l != "en" && l != "fr" {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: LangCookie, Value: l, Path: k.Prefix, MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: k.Secure(r), SameSite: http.SameSiteLaxMode})
	q.Del("lang")
	http.Redirect(w, r, Query(r.URL.Path, q), http.StatusSeeOther)
	return true
}

// SwitchLangURL is the page of r in the other language.
func SwitchLangURL(r *http.Request, lang string) string {
	q := r.URL.Query()
	q.Set("lang", map[string]string{"fr": "en", "en": "fr"}[lang])
	return r.URL.Path + "?" + q.Encode()
}

// Query is a URL with a query string (none when empty).
func Query(path string, q url.Values) string {
	if enc := q.Encode(); enc != "" {
		return path + "?" + enc
	}
	return path
}

// Truncate cuts s to at most n bytes of valid UTF-8.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// FormatTime is a date and time in UTC: "25/11/2026 08:06 UTC" in French, "25 Nov 2026 08:06
// UTC" in English.
func FormatTime(t time.Time, lang string) string {
	if lang == "en" {
		return t.UTC().Format("2 Jan 2006 15:04 UTC")
	}
	return t.UTC().Format("02/01/2006 15:04 UTC")
}

// Render writes block of a page template (the layout: the whole page; another block: the part
// an htmx swap replaces).
func Render(w http.ResponseWriter, status int, t *template.Template, block string, data any) error {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "HX-Request, HX-Target, Accept-Language, Cookie")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// ErrorPage is the status and message key of the error page for a handler's error: 403 for a
// request that did not verify, 404 for what is not the visitor's (or does not exist), 400 for
// a bad form, 429; anything else is a 500 the caller logs (internal true).
func ErrorPage(err error) (status int, key string, internal bool) {
	switch {
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden, "error_forbidden", false
	case sika.ErrorCode(err) == sika.CodeNotFound:
		return http.StatusNotFound, "error_not_found", false
	case sika.ErrorCode(err) == sika.CodeValidation:
		return http.StatusBadRequest, "error_bad_request", false
	case sika.ErrorCode(err) == sika.CodeRateLimited:
		return http.StatusTooManyRequests, "too_many_attempts", false
	}
	return http.StatusInternalServerError, "error_internal", true
}

// Static serves an app's CSS and JavaScript under prefix+"static/": the app's own files (from
// appFS, rooted at its static/ directory; nil for none) and the shared ones (sika.css and the
// vendored libraries), gzipped for browsers that take it (htmx is 52 kB, 16 kB gzipped: it
// matters on a phone), with an ETag of their content. The files are embedded in the binary and
// change only with it. Licences and VERSIONS are for people reading the repository, not served.
func Static(prefix string, appFS fs.FS, notFound http.HandlerFunc, matched func(*http.Request)) http.Handler {
	files := map[string]staticFile{}
	loadStatic(files, sharedStatic)
	if appFS != nil {
		loadStatic(files, appFS)
	}
	return http.StripPrefix(prefix+"static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		matched(r)
		f, ok := files[r.URL.Path]
		if !ok {
			notFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", f.etag)
		h.Set("Vary", "Accept-Encoding")
		if r.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		body := f.data
		if f.gzipped != nil && acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			body = f.gzipped
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	}))
}

// staticFile is an embedded asset, ready to serve.
type staticFile struct {
	data, gzipped []byte
	contentType   string
	etag          string
}

// loadStatic adds the CSS and JavaScript under fsys's static/ to out.
func loadStatic(out map[string]staticFile, fsys fs.FS) {
	err := fs.WalkDir(fsys, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := path.Ext(p)
		if ext != ".css" && ext != ".js" {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		_, _ = zw.Write(data)
		_ = zw.Close()
		sum := sha256.Sum256(data)
		f := staticFile{data: data, contentType: mime.TypeByExtension(ext), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		if gz.Len() < len(data) {
			f.gzipped = gz.Bytes()
		}
		out[strings.TrimPrefix(p, "static/")] = f
		return nil
	})
	if err != nil {
		panic(err)
	}
}

// AcceptsGzip reports whether the request's Accept-Encoding takes gzip (not with q=0): the
// API's document and reference are served gzipped by the same rule as the apps' assets.
func AcceptsGzip(r *http.Request) bool { return acceptsGzip(r) }

// acceptsGzip reports whether the request's Accept-Encoding takes gzip (not with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
