package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// apiClient is a merchant's backend talking to the API through the faults: a request without a
// definitive answer (the connection failed, the answer was lost, a 5xx, 409
// idempotency_key_in_use, 429) is sent again, identical and with the same Idempotency-Key, until
// one comes or the operation's deadline passes.
type apiClient struct {
	http  *http.Client
	root  string // http://127.0.0.1:port
	key   string // the merchant's TEST key
	stats *requestStats
}

// opDeadline bounds how long one request is retried: longer than the API's idempotency lease
// (2 min), which holds a key claimed by a process that died mid-request.
const opDeadline = 5 * time.Minute

// errNoAnswer is a request that never got a definitive answer before its deadline.
var errNoAnswer = errors.New("no definitive answer before the deadline")

func newAPIClient(root string, stats *requestStats) *apiClient {
	return &apiClient{
		// Longer than the API's own waits (confirm-otp: 30 s; redirect next action: 15 s).
		http:  &http.Client{Timeout: 45 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}},
		root:  root,
		stats: stats,
	}
}

// call is one request as the merchant means it.
type call struct {
	kind   opKind
	method string
	path   string // under the root, e.g. /api/v1/payouts/initialize/
	body   any
	// key is the Idempotency-Key ("" sends none).
	key string
	// bearer overrides the API key (a dashboard token); public sends no Authorization at all.
	bearer string
	public bool
	// environment is the X-Environment of a dashboard call.
	environment string
	// once returns the first answer, whatever it is (a hosted payment's caller decides itself).
	once bool
}

// answer is a response the client received.
type answer struct {
	status   int
	body     []byte
	replayed bool
	// retryAfter is the answer's Retry-After header.
	retryAfter string
	requestID  string // X-Request-Id: the request in the API's log
	err        error  // transport error: no answer
}

// code returns the error code of an error envelope ("" for a success or a field error).
func (a answer) code() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(a.body, &env)
	return env.Error.Code
}

// definitive reports whether the answer settles the request: a 2xx or a 4xx the merchant cannot
// wait away.
func (a answer) definitive() bool {
	switch {
	case a.err != nil, a.status >= 500:
		return false
	case a.status == http.StatusTooManyRequests:
		return false
	case a.status == http.StatusConflict && a.code() == "idempotency_key_in_use":
		return false
	}
	return true
}

// data decodes the success envelope's data into v.
func (a answer) data(v any) error {
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil || !env.Success {
		return fmt.Errorf("not a success envelope (HTTP %d): %.200s", a.status, a.body)
	}
	return json.Unmarshal(env.Data, v)
}

// do sends c until a definitive answer and returns it with every answer seen on the way (for the
// idempotency bookkeeping). The error is errNoAnswer past the deadline, or the context's.
func (cl *apiClient) do(ctx context.Context, c call) (answer, []answer, error) {
	var raw []byte
	if c.body != nil {
		var err error
		if raw, err = json.Marshal(c.body); err != nil {
			return answer{}, nil, fmt.Errorf("encode %s %s: %w", c.method, c.path, err)
		}
	}
	deadline := time.Now().Add(opDeadline)
	backoff := 150 * time.Millisecond
	var seen []answer
	for {
		a := cl.send(ctx, c, raw)
		cl.stats.record(c.kind, a)
		seen = append(seen, a)
		if c.once || a.definitive() {
			return a, seen, nil
		}
		wait := backoff + rand.N(backoff/2)
		if s, err := strconv.Atoi(a.retryAfter); err == nil && s > 0 {
			wait = min(time.Duration(s)*time.Second, 2*time.Second)
		}
		if time.Now().Add(wait).After(deadline) {
			return a, seen, fmt.Errorf("%s %s: %w (last: %s)", c.method, c.path, errNoAnswer, a.describe())
		}
		select {
		case <-ctx.Done():
			return a, seen, fmt.Errorf("%s %s: %w", c.method, c.path, ctx.Err())
		case <-time.After(wait):
		}
		backoff = min(backoff*3/2, 2*time.Second)
	}
}

// send makes one HTTP request.
func (cl *apiClient) send(ctx context.Context, c call, raw []byte) answer {
	var body io.Reader
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, cl.root+c.path, body)
	if err != nil {
		return answer{err: err}
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.public:
	case c.bearer != "":
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	default:
		req.Header.Set("Authorization", "Bearer "+cl.key)
	}
	if c.environment != "" {
		req.Header.Set("X-Environment", c.environment)
	}
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return answer{err: fmt.Errorf("read the answer: %w", err)}
	}
	return answer{status: resp.StatusCode, body: b, replayed: resp.Header.Get("Idempotent-Replayed") == "true",
		retryAfter: resp.Header.Get("Retry-After"), requestID: resp.Header.Get("X-Request-Id")}
}

// brief is describe without a transport error's details.
func (a answer) brief() string {
	if a.err != nil {
		return "no answer"
	}
	return a.describe()
}

func (a answer) describe() string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	if c := a.code(); c != "" {
		return fmt.Sprintf("HTTP %d %s", a.status, c)
	}
	return fmt.Sprintf("HTTP %d", a.status)
}

// requestStats counts the requests of each kind of operation and how they were answered.
type requestStats struct {
	mu    sync.Mutex
	kinds map[opKind]*kindStats
}

// kindStats are the request counts of one kind of operation.
type kindStats struct {
	ops, requests, lost, unavailable, internal, inUse, limited, replayed int
	// took and longest time whole operations, retries and waits included.
	took, longest time.Duration
}

func newRequestStats() *requestStats { return &requestStats{kinds: map[opKind]*kindStats{}} }

func (s *requestStats) of(k opKind) *kindStats {
	ks := s.kinds[k]
	if ks == nil {
		ks = &kindStats{}
		s.kinds[k] = ks
	}
	return ks
}

func (s *requestStats) record(k opKind, a answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := s.of(k)
	ks.requests++
	switch {
	case a.err != nil:
		ks.lost++
	case a.status == http.StatusInternalServerError:
		ks.internal++
	case a.status >= 500:
		ks.unavailable++
	case a.status == http.StatusTooManyRequests:
		ks.limited++
	case a.status == http.StatusConflict && a.code() == "idempotency_key_in_use":
		ks.inUse++
	}
	if a.replayed {
		ks.replayed++
	}
}

// op counts one operation of kind k that took d.
func (s *requestStats) op(k opKind, d time.Duration) {
	s.mu.Lock()
	ks := s.of(k)
	ks.ops++
	ks.took += d
	ks.longest = max(ks.longest, d)
	s.mu.Unlock()
}

// newKey returns a fresh Idempotency-Key.
func newKey() string { return "chaos-" + uuid.NewString() }
