package api

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// operation is a money-moving stand-in: each execution gets a new id, so a replay that shows
// the first id proves nothing ran twice.
type operation struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
	fail    atomic.Bool
}

func (op *operation) handler(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Amount string `json:"amount"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	n := op.runs.Add(1)
	if op.started != nil {
		op.started <- struct{}{}
		<-op.release
	}
	if op.fail.Load() {
		return sika.Errorf(sika.CodeServiceUnavailable, "gateway down")
	}
	writeData(w, http.StatusCreated, map[string]any{"id": uuid.NewString(), "amount": req.Amount, "run": n})
	return nil
}

func TestIdempotencyLayer(t *testing.T) {
	ts := newTestServer(t)
	op := &operation{}
	ts.mountProbe("/op/", routeOpts{access: accessMerchant, idempotent: true}, op.handler)
	ts.mountProbe("/other-op/", routeOpts{access: accessMerchant, idempotent: true}, op.handler)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	withKey := func(k string) []string { return append(key, "Idempotency-Key", k) }

	t.Run("a replay returns the first response byte for byte", func(t *testing.T) {
		k := uuid.NewString()
		first := ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "100"}`, withKey(k)...)
		require.Equal(t, 201, first.Status, "%s", first.Body)
		assert.Empty(t, first.Header.Get("Idempotent-Replayed"))
		// Same JSON, other spacing and key order: the same request.
		again := ts.call(t, "POST", "/api/v1/test/op/", `{ "amount":"100" }`, withKey(k)...)
		assert.Equal(t, first.Status, again.Status)
		assert.Equal(t, string(first.Body), string(again.Body))
		assert.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
		assert.Equal(t, "application/json", again.Header.Get("Content-Type"))
		assert.EqualValues(t, 1, op.runs.Load())
	})
	t.Run("another body or route with the same key is 409 idempotency_key_reused", func(t *testing.T) {
		k := uuid.NewString()
		require.Equal(t, 201, ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "100"}`, withKey(k)...).Status)
		r := ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "200"}`, withKey(k)...)
		assert.Equal(t, 409, r.Status)
		assert.Equal(t, "idempotency_key_reused", r.code())
		r = ts.call(t, "POST", "/api/v1/test/other-op/", `{"amount": "100"}`, withKey(k)...)
		assert.Equal(t, 409, r.Status)
		assert.Equal(t, "idempotency_key_reused", r.code())
	})
	t.Run("without the header every call is new", func(t *testing.T) {
		before := op.runs.Load()
		ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "1"}`, key...)
		ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "1"}`, key...)
		assert.Equal(t, before+2, op.runs.Load())
	})
	t.Run("keys are scoped by merchant and environment", func(t *testing.T) {
		k := uuid.NewString()
		other := ts.newAccount(t, true)
		before := op.runs.Load()
		for _, h := range [][]string{key, acct.key(sika.EnvironmentLive, sika.ScopeBoth), other.key(sika.EnvironmentTest, sika.ScopeBoth)} {
			r := ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "5"}`, append(h, "Idempotency-Key", k)...)
			assert.Equal(t, 201, r.Status)
			assert.Empty(t, r.Header.Get("Idempotent-Replayed"))
		}
		assert.Equal(t, before+3, op.runs.Load())
	})
	t.Run("a 5xx is not stored: the client may retry with the same key", func(t *testing.T) {
		k := uuid.NewString()
		op.fail.Store(true)
		r := ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "7"}`, withKey(k)...)
		assert.Equal(t, 503, r.Status)
		op.fail.Store(false)
		r = ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "7"}`, withKey(k)...)
		assert.Equal(t, 201, r.Status)
		assert.Empty(t, r.Header.Get("Idempotent-Replayed"))
	})
	t.Run("a key longer than 255 characters is a validation error", func(t *testing.T) {
		long := make([]byte, 256)
		for i := range long {
			long[i] = 'k'
		}
		r := ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "1"}`, withKey(string(long))...)
		assert.Equal(t, 400, r.Status)
		assert.Contains(t, r.fields(), "Idempotency-Key")
		r = ts.call(t, "POST", "/api/v1/test/op/", `{"amount": "1"}`, withKey(string(long[:255]))...)
		assert.Equal(t, 201, r.Status)
	})
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	ts := newTestServer(t)
	op := &operation{started: make(chan struct{}, 1), release: make(chan struct{})}
	ts.mountProbe("/slow-op/", routeOpts{access: accessMerchant, idempotent: true}, op.handler)
	acct := ts.newAccount(t, true)
	h := append(acct.key(sika.EnvironmentTest, sika.ScopeBoth), "Idempotency-Key", uuid.NewString())

	firstDone := make(chan *response, 1)
	go func() { firstDone <- ts.call(t, "POST", "/api/v1/test/slow-op/", `{"amount": "100"}`, h...) }()
	<-op.started // the first request holds the key and is running

	var wg sync.WaitGroup
	results := make([]*response, 20)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = ts.call(t, "POST", "/api/v1/test/slow-op/", `{"amount": "100"}`, h...)
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		assert.Equal(t, 409, r.Status)
		assert.Equal(t, "idempotency_key_in_use", r.code())
	}
	close(op.release)
	first := <-firstDone
	require.Equal(t, 201, first.Status)
	assert.EqualValues(t, 1, op.runs.Load(), "the operation ran once")

	replay := ts.call(t, "POST", "/api/v1/test/slow-op/", `{"amount": "100"}`, h...)
	assert.Equal(t, string(first.Body), string(replay.Body))
	assert.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
}

func TestIdempotencyRacingClaims(t *testing.T) {
	ts := newTestServer(t)
	op := &operation{}
	ts.mountProbe("/fast-op/", routeOpts{access: accessMerchant, idempotent: true}, op.handler)
	acct := ts.newAccount(t, true)
	h := append(acct.key(sika.EnvironmentTest, sika.ScopeBoth), "Idempotency-Key", uuid.NewString())

	// 20 requests racing from the start: exactly one runs; each other one is either told the
	// key is in use or gets the stored response.
	var wg sync.WaitGroup
	results := make([]*response, 20)
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			results[i] = ts.call(t, "POST", "/api/v1/test/fast-op/", `{"amount": "9"}`, h...)
		}(i)
	}
	close(start)
	wg.Wait()
	assert.EqualValues(t, 1, op.runs.Load())
	var bodies = map[string]bool{}
	for _, r := range results {
		switch r.Status {
		case 201:
			bodies[string(r.Body)] = true
		case 409:
			assert.Equal(t, "idempotency_key_in_use", r.code())
		default:
			t.Errorf("unexpected status %d: %s", r.Status, r.Body)
		}
	}
	assert.Len(t, bodies, 1, "every success shows the one operation")
}
