package mtnmomo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sikahq/sika/gateway"
)

// Products, each with its own subscription key and token endpoint.
const (
	productCollection   = "collection"
	productDisbursement = "disbursement"
)

// tokenSource caches one product's OAuth access token. Concurrent callers share one token
// request: the first fetches while holding mu, the others wait and reuse its token.
type tokenSource struct {
	c       *Client
	product string
	key     string // the product's subscription key

	mu     sync.Mutex
	token  string
	expiry time.Time
}

// tokenAnswer is the answer of POST /{product}/token/.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"` // seconds
}

// get returns a token valid for a while yet, fetching one when none is cached or the cached
// one is about to expire. Failures are gateway errors: nothing was sent to the operation's
// endpoint yet, so anything but a refusal of our credentials is Unavailable.
func (ts *tokenSource) get(ctx context.Context) (string, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != "" && ts.c.cfg.Now().Before(ts.expiry) {
		return ts.token, nil
	}
	path := "/" + ts.product + "/token/"
	op := ts.c.cfg.Name + " POST " + path
	req, err := http.NewRequest(http.MethodPost, "", nil) // only to build the Basic header
	if err != nil {
		return "", gateway.Unavailable(fmt.Errorf("%s: %w", op, err))
	}
	req.SetBasicAuth(ts.c.cfg.APIUser, ts.c.cfg.APIKey)
	headers := http.Header{
		"Authorization":             {req.Header.Get("Authorization")},
		"Ocp-Apim-Subscription-Key": {ts.key},
	}
	status, raw, err := ts.c.send(ctx, op, http.MethodPost, path, headers, nil)
	if err != nil {
		// a token request creates nothing: losing its answer is not ambiguous
		return "", gateway.Unavailable(err)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", gateway.AuthFailed(fmt.Errorf("%s: %d: %s", op, status, snippet(raw)))
	case status != http.StatusOK:
		return "", gateway.Unavailable(fmt.Errorf("%s: %d: %s", op, status, snippet(raw)))
	}
	var ans tokenAnswer
	if err := json.Unmarshal(raw, &ans); err != nil || ans.AccessToken == "" {
		return "", gateway.Unavailable(fmt.Errorf("%s: answer without access_token", op))
	}
	lifetime := time.Duration(ans.ExpiresIn) * time.Second
	if lifetime <= 0 {
		lifetime = time.Hour
	}
	// refresh ahead of expiry: a minute early, or halfway through a short lifetime
	margin := min(time.Minute, lifetime/2)
	ts.token, ts.expiry = ans.AccessToken, ts.c.cfg.Now().Add(lifetime-margin)
	return ts.token, nil
}

// invalidate drops token if it is still the cached one (MTN refused it), so that the next get
// fetches a new one; a token another caller already replaced is left alone.
func (ts *tokenSource) invalidate(token string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token == token {
		ts.token = ""
	}
}
