package sika

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// transport is the HttpRequestDoer under the generated client. It adds the credentials and
// headers of Options, gives a money-moving call (a POST to one of idempotentRoutes, generated
// from the document) an Idempotency-Key unless it has one, retries, and turns every answer that
// is not 2xx into an *Error.
//
// Retries, at most maxRetries per call, with the same request and so the same
// Idempotency-Key:
//   - no answer (network error, connection cut) or 503, when repeating is safe: an idempotent
//     method (GET, HEAD, OPTIONS, PUT, DELETE) or a request with an Idempotency-Key, which the
//     API answers at most once whatever the number of tries (a 5xx is not stored by the API, so
//     the retry carries the operation out or finds it done). A POST without one (creating a
//     checkout session, say) is not repeated: it could be carried out twice.
//   - 429 always: it was not carried out.
//   - 409 idempotency_key_in_use on a request with an Idempotency-Key: the API is still
//     carrying out an earlier try with the same key (one whose answer was lost to a network
//     error or a timeout, say); the retry gets its stored answer once it is done, so the
//     caller sees the one operation instead of a conflict. Other 409s are not retried.
//
// The wait is the answer's Retry-After when it has one, else an exponential back-off with
// jitter from initialDelay; a wait beyond maxDelay is not made and the answer is returned.
type transport struct {
	http         *http.Client
	base         *url.URL
	header       http.Header
	maxRetries   int
	initialDelay time.Duration
	maxDelay     time.Duration
	newKey       func() string
}

func newTransport(o Options, base *url.URL) *transport {
	t := &transport{
		http:         o.HTTPClient,
		base:         base,
		header:       http.Header{},
		maxRetries:   o.MaxRetries,
		initialDelay: o.InitialRetryDelay,
		maxDelay:     o.MaxRetryDelay,
		newKey:       o.IdempotencyKey,
	}
	if t.http == nil {
		t.http = &http.Client{Timeout: 60 * time.Second}
	}
	switch {
	case o.DisableRetries:
		t.maxRetries = 0
	case t.maxRetries <= 0:
		t.maxRetries = 2
	}
	if t.initialDelay <= 0 {
		t.initialDelay = 500 * time.Millisecond
	}
	if t.maxDelay <= 0 {
		t.maxDelay = 30 * time.Second
	}
	if t.newKey == nil {
		t.newKey = uuid.NewString
	}
	for name, values := range o.Header {
		for _, v := range values {
			t.header.Add(name, v)
		}
	}
	if o.APIKey != "" {
		t.header.Set("Authorization", "Bearer "+o.APIKey)
	}
	if o.Environment != "" {
		t.header.Set("X-Environment", string(o.Environment))
	}
	if o.MerchantID != "" {
		t.header.Set("X-Merchant-Id", o.MerchantID)
	}
	return t
}

// Do sends req (see transport).
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	for name, values := range t.header {
		if req.Header.Get(name) == "" {
			req.Header[name] = values
		}
	}
	if req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" && t.moneyMoving(req.URL.Path) {
		req.Header.Set("Idempotency-Key", t.newKey())
	}
	body, err := replayableBody(req)
	if err != nil {
		return nil, err
	}
	keyed := req.Header.Get("Idempotency-Key") != ""
	safe := keyed
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		safe = true
	}
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		last := attempt >= t.maxRetries
		try := req.Clone(ctx)
		try.Body, try.GetBody = body()
		resp, err := t.http.Do(try)
		if err != nil {
			if ctx.Err() != nil || last || !safe {
				return nil, &Error{Code: CodeConnection, Message: "no answer from " + req.URL.Host + ": " + err.Error(), Err: err}
			}
			if err := sleep(ctx, t.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		retry := resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusServiceUnavailable && safe) ||
			(resp.StatusCode == http.StatusConflict && keyed && !last && keyInUse(resp))
		if retry && !last {
			wait, ok := retryAfter(resp.Header, time.Now())
			if !ok {
				wait = t.backoff(attempt)
			}
			if wait <= t.maxDelay {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				continue
			}
		}
		return nil, errorFromResponse(resp)
	}
}

// keyInUse says whether resp, a 409, is idempotency_key_in_use. It reads the body (an error
// envelope is small) and puts it back for errorFromResponse.
func keyInUse(resp *http.Response) bool {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	var envelope struct {
		Error struct {
			Code ErrorCode `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(b, &envelope) == nil && envelope.Error.Code == ErrorCodeIdempotencyKeyInUse
}

// moneyMoving says whether path (the request's, under the base URL) is one of
// idempotentRoutes, whose `{param}` segments match any segment.
func (t *transport) moneyMoving(path string) bool {
	rel, ok := strings.CutPrefix(path, t.base.Path)
	if !ok {
		return false
	}
	if !strings.HasSuffix(rel, "/") {
		rel += "/"
	}
	segments := strings.Split(rel, "/")
	for _, route := range idempotentRoutes {
		pattern := strings.Split(route, "/")
		if len(pattern) != len(segments) {
			continue
		}
		match := true
		for i, p := range pattern {
			if p != segments[i] && !(strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") && segments[i] != "") {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// backoff is the wait before retry attempt+1 without Retry-After: initialDelay·2^attempt,
// capped at maxDelay, with jitter (50–100 %).
func (t *transport) backoff(attempt int) time.Duration {
	d := t.initialDelay << min(attempt, 20)
	if d <= 0 || d > t.maxDelay {
		d = t.maxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// replayableBody answers a function giving a fresh copy of req's body per try (nil without a
// body).
func replayableBody(req *http.Request) (func() (io.ReadCloser, func() (io.ReadCloser, error)), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return func() (io.ReadCloser, func() (io.ReadCloser, error)) { return http.NoBody, nil }, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, &Error{Code: CodeConnection, Message: "read the request body: " + err.Error(), Err: err}
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return func() (io.ReadCloser, func() (io.ReadCloser, error)) {
		r, _ := open()
		return r, open
	}, nil
}

// retryAfter reads a Retry-After header (delta-seconds or an HTTP date) as a wait from now.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}

// sleep waits d, or less when ctx ends (answering its error).
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
