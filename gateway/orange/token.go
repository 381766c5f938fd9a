package orange

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sikahq/sika/gateway"
)

// tokenPath is Orange's OAuth client-credentials endpoint.
const tokenPath = "/oauth/v3/token"

// tokenSource caches the application's access token. One caller at a time fetches: the others
// wait on mu and take the token it got.
type tokenSource struct {
	c *Client

	mu      sync.Mutex
	token   string
	refresh time.Time              // when to fetch a new one, ahead of the token's expiry
	latest  atomic.Pointer[string] // the last token issued, read without mu to scrub errors
}

// current returns the last token issued ("" before the first).
func (ts *tokenSource) current() string {
	if tok := ts.latest.Load(); tok != nil {
		return *tok
	}
	return ""
}

// tokenAnswer is the answer of POST /oauth/v3/token.
type tokenAnswer struct {
	TokenType   string `json:"token_type"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
}

// tokenError is the OAuth error body of the token endpoint.
type tokenError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// get returns the cached token, or a new one when there is none or the cached one is near its
// expiry. A token request creates nothing at Orange, so every failure is Unavailable, except a
// refusal of our credentials (AuthFailed).
func (ts *tokenSource) get(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	now := ts.c.cfg.Now()
	if ts.token != "" && now.Before(ts.refresh) {
		return ts.token, nil
	}
	op := ts.c.cfg.Name + " POST " + tokenPath
	credentials := base64.StdEncoding.EncodeToString([]byte(ts.c.cfg.ClientID + ":" + ts.c.cfg.ClientSecret))
	headers := http.Header{
		"Authorization": {"Basic " + credentials},
		"Content-Type":  {"application/x-www-form-urlencoded"},
	}
	form := url.Values{"grant_type": {"client_credentials"}}.Encode()
	status, raw, err := ts.c.send(ctx, op, tokenPath, headers, []byte(form))
	if err != nil {
		return "", gateway.Unavailable(err) // nothing to be ambiguous about
	}
	if status != http.StatusOK {
		var te tokenError
		_ = json.Unmarshal(raw, &te)
		detail := fmt.Errorf("%s: %d %s", op, status, ts.c.scrub(truncate(te.Error+" "+te.Description, 200)))
		if status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden {
			return "", gateway.AuthFailed(detail)
		}
		return "", gateway.Unavailable(detail)
	}
	var ans tokenAnswer
	if err := json.Unmarshal(raw, &ans); err != nil || ans.AccessToken == "" {
		return "", gateway.Unavailable(fmt.Errorf("%s: answer without access_token", op))
	}
	ts.token, ts.refresh = ans.AccessToken, now.Add(refreshAfter(time.Duration(ans.ExpiresIn)*time.Second))
	ts.latest.Store(&ans.AccessToken)
	return ts.token, nil
}

// refreshAfter is how long a token of the given lifetime is used before a new one is fetched:
// all of it but the last tenth, or but the last five minutes for a long-lived token.
func refreshAfter(lifetime time.Duration) time.Duration {
	if lifetime <= 0 {
		lifetime = time.Hour // Orange's v3 tokens live an hour
	}
	return lifetime - min(lifetime/10, 5*time.Minute)
}

// drop forgets token after Orange refused it, unless another caller already replaced it.
func (ts *tokenSource) drop(token string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token == token {
		ts.token = ""
	}
}
