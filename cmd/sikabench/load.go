package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// sample is one softpay request as the client saw it.
type sample struct {
	sent    time.Time
	latency time.Duration
	status  int       // 0: transport error
	id      uuid.UUID // of an accepted (201) payment
	err     string
	backoff time.Duration // asked by a 429 or 503 (Retry-After, at most 1 s)
}

// loadResult is every request of the run and the measurement window.
type loadResult struct {
	clients                       int
	start, windowStart, windowEnd time.Time
	samples                       []sample
	stoppedByMax                  bool
}

func (l *loadResult) window() time.Duration { return l.windowEnd.Sub(l.windowStart) }

func (l *loadResult) inWindow(s sample) bool {
	return !s.sent.Before(l.windowStart) && s.sent.Before(l.windowEnd)
}

// acceptedIDs are the payments accepted during the whole run, warm-up included (their
// completions fall in the window too).
func (l *loadResult) acceptedIDs() []uuid.UUID {
	var ids []uuid.UUID
	for _, s := range l.samples {
		if s.status == http.StatusCreated && s.id != uuid.Nil {
			ids = append(ids, s.id)
		}
	}
	return ids
}

// loadHooks run when the measurement window opens and closes (profiles, CPU counters); either
// may be nil.
type loadHooks struct{ windowStart, windowEnd func() }

// apiClient sends one kind of money-moving request (softpay, payout) with a fresh
// Idempotency-Key each time; one per load, shared by its clients.
type apiClient struct {
	http    *http.Client
	url     string
	key     string
	body    func(n int64) string // the body of the n-th request
	counter atomic.Int64
}

func newAPIClient(t *target, conns int, path, key string, body func(n int64) string) *apiClient {
	return &apiClient{
		http: &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
				IdleConnTimeout: 90 * time.Second, DisableCompression: true,
			},
		},
		url:  t.baseURL + path,
		key:  key,
		body: body,
	}
}

// newSoftpayClient posts payments of XOF 1000 on MTN_BJ from a number ending in 123 (the
// sandbox approves it after one tick).
func newSoftpayClient(t *target, conns int) *apiClient {
	return newAPIClient(t, conns, "/payments/softpay/", t.key, func(n int64) string {
		return fmt.Sprintf(`{"amount":"1000","currency":"XOF","country":"BJ","network":"MTN_BJ","customer_phone":"97%03d123","customer_name":"Bench Customer","description":"sikabench %d"}`, n%1000, n)
	})
}

// send posts one request with a fresh Idempotency-Key; a 201 must carry the transaction's id.
func (c *apiClient) send(ctx context.Context) sample {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewBufferString(c.body(c.counter.Add(1))))
	if err != nil {
		return sample{sent: time.Now(), err: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", uuid.NewString())
	s := sample{sent: time.Now()}
	resp, err := c.http.Do(req)
	if err != nil {
		s.latency, s.err = time.Since(s.sent), err.Error()
		return s
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.latency, s.status = time.Since(s.sent), resp.StatusCode
	if err != nil {
		s.status, s.err = 0, err.Error()
		return s
	}
	if s.status != http.StatusCreated {
		s.err = string(raw)
		if s.status == http.StatusTooManyRequests || s.status == http.StatusServiceUnavailable {
			s.backoff = time.Second
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
				s.backoff = min(time.Duration(secs)*time.Second, time.Second)
			}
		}
		return s
	}
	var env struct {
		Data struct {
			ID uuid.UUID `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Data.ID == uuid.Nil {
		s.err = "201 without a transaction id: " + string(raw)
	}
	s.id = env.Data.ID
	return s
}

// preflight sends one request of c and waits for its transaction to succeed, so that a wrong
// key, a missing worker or a broken callback path fails in seconds instead of after the whole
// run. It returns the transaction's id.
func preflight(ctx context.Context, t *target, c *apiClient, what string) (uuid.UUID, error) {
	s := c.send(ctx)
	if s.status != http.StatusCreated || s.id == uuid.Nil {
		return uuid.Nil, fmt.Errorf("pre-flight %s answered %d: %s", what, s.status, s.err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var status, code string
		err := t.db.QueryRow(ctx, `SELECT status, failure_code FROM transactions WHERE id = $1`, s.id.String()).Scan(&status, &code)
		if err != nil {
			return uuid.Nil, fmt.Errorf("pre-flight: read transaction %s in Postgres (is -database-url the API's database?): %w", s.id, err)
		}
		switch status {
		case "SUCCESS":
			return s.id, nil
		case "PENDING":
		default:
			return uuid.Nil, fmt.Errorf("pre-flight %s %s ended %s (%s)", what, s.id, status, code)
		}
		if time.Now().After(deadline) {
			return uuid.Nil, fmt.Errorf("pre-flight %s %s still PENDING after 60 s: is the worker running?", what, s.id)
		}
		select {
		case <-ctx.Done():
			return uuid.Nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// loadPlan is how a load runs: clients sending one request at a time, a warm-up then a
// measured window, an optional cap on the requests and an optional pace (requests/s in all).
type loadPlan struct {
	clients          int
	warmup, duration time.Duration
	max              int
	rate             float64
}

// runLoad runs o.clients clients sending c's requests, each one at a time (so never more than
// o.clients in flight), for o.warmup + o.duration or until o.max requests were sent. Requests
// in flight when the time is up are waited for; none starts after.
func runLoad(ctx context.Context, c *apiClient, o loadPlan, hooks loadHooks) (*loadResult, error) {
	defer c.http.CloseIdleConnections()
	res := &loadResult{clients: o.clients, start: time.Now()}
	warmEnd := res.start.Add(o.warmup)
	end := warmEnd.Add(o.duration)

	stop := make(chan struct{}) // closed at the end of the window: no new request
	var sent atomic.Int64
	maxHit := make(chan struct{})
	var maxOnce sync.Once

	// The window's bounds, and its hooks, on one goroutine.
	windowDone := make(chan struct{})
	go func() {
		defer close(windowDone)
		select {
		case <-time.After(time.Until(warmEnd)):
			res.windowStart = time.Now()
		case <-maxHit:
			res.windowStart = time.Now()
		case <-ctx.Done():
			res.windowStart = time.Now()
		}
		if hooks.windowStart != nil {
			hooks.windowStart()
		}
		select {
		case <-time.After(time.Until(end)):
		case <-maxHit:
			res.stoppedByMax = true
		case <-ctx.Done():
		}
		res.windowEnd = time.Now()
		close(stop)
		if hooks.windowEnd != nil {
			hooks.windowEnd()
		}
	}()

	pace := newPacer(o.rate)
	perClient := make([][]sample, o.clients)
	var wg sync.WaitGroup
	for i := range o.clients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if o.max > 0 && sent.Add(1) > int64(o.max) {
					maxOnce.Do(func() { close(maxHit) })
					return
				}
				if !pace.wait(stop) {
					return
				}
				// A request is not cancelled when the window closes: it is waited for and
				// counted by when it was sent.
				s := c.send(ctx)
				perClient[i] = append(perClient[i], s)
				if s.backoff > 0 { // a client told to wait waits (capped, so the run goes on)
					select {
					case <-time.After(s.backoff):
					case <-stop:
					}
				}
			}
		})
	}
	wg.Wait()
	if o.max > 0 {
		maxOnce.Do(func() { close(maxHit) }) // every client stopped early (cap reached exactly)
	}
	<-windowDone
	return res.gather(perClient)
}

// gather takes the samples of every client of a load; a load that sent nothing failed.
func (l *loadResult) gather(perClient [][]sample) (*loadResult, error) {
	for _, s := range perClient {
		l.samples = append(l.samples, s...)
	}
	if len(l.samples) == 0 {
		return nil, errors.New("no request was sent")
	}
	return l, nil
}

// pacer spaces the requests of all clients evenly at a given rate; a client that falls behind
// sends at once (the concurrency bound still holds), so the offered rate is at most rate.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{interval: time.Duration(float64(time.Second) / rate)}
}

// wait blocks until the caller's slot; false when stop closed first.
func (p *pacer) wait(stop <-chan struct{}) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	now := time.Now()
	slot := p.next
	if slot.Before(now) {
		slot = now
	}
	p.next = slot.Add(p.interval)
	p.mu.Unlock()
	select {
	case <-time.After(time.Until(slot)):
		return true
	case <-stop:
		return false
	}
}
