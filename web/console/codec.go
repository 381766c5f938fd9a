package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CodecPath is the codec server of the Temporal UI, under the console so that the console's
// session cookie reaches it: the UI's codec endpoint is <public URL>/console/codec and it posts
// to …/decode.
const CodecPath = Prefix + "codec/decode"

// codec serves the Temporal UI's codec server (Config.Codec: decode only) to staff sessions, so
// that operators read the encrypted payloads of a history in the UI. The UI runs on an origin
// of its own and calls it with the browser's credentials (its codec setting includeCredentials):
// the console answers the UI's origins (Config.CodecOrigins) with CORS, refuses any other
// browser origin, and without a staff session answers 401 (403 for a merchant's session). A
// request without Origin (the Temporal CLI with the session cookie as a header) needs the
// session just the same. Decoding changes nothing, so there is no CSRF token to carry; a page of
// another site cannot send the cookie (SameSite=Lax) nor read the answer (CORS).
func (a *App) codec(w http.ResponseWriter, r *http.Request) {
	a.cfg.RouteMatched(r)
	h := w.Header()
	h.Add("Vary", "Origin")
	if origin := r.Header.Get("Origin"); origin != "" {
		if !slices.Contains(a.cfg.CodecOrigins, origin) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if r.Method == http.MethodOptions { // the preflight carries no cookie
		h.Set("Access-Control-Allow-Methods", http.MethodPost)
		h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if a.cfg.Codec == nil {
		http.NotFound(w, r)
		return
	}
	found, _, err := a.host.Load(w, r, a.host.Visit(r))
	switch {
	case err != nil:
		a.cfg.Logger.ErrorContext(r.Context(), "codec server: load session", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	case !found && a.host.ForeignSession(r):
		http.Error(w, "staff only", http.StatusForbidden)
		return
	case !found:
		http.Error(w, "sign in to the support console first", http.StatusUnauthorized)
		return
	}
	a.cfg.Codec.ServeHTTP(w, r)
}

// OriginOf is the origin (scheme://host[:port]) of a URL, "" when it has none: the CORS origin
// of the Temporal UI at that URL.
func OriginOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
