package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// insertEvent writes an event row as store.recordEvent does, on q (a transaction left open by
// the caller, or the pool), and returns its id.
func insertEvent(t *testing.T, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, merchant uuid.UUID, env sika.Environment) string {
	t.Helper()
	id, err := sika.NewEventID()
	require.NoError(t, err)
	key, err := uuid.NewV7()
	require.NoError(t, err)
	payload, err := json.Marshal(sika.Event{ID: id, Type: sika.EventTransactionSucceeded, CreatedAt: time.Now().UTC(), Environment: env, Data: json.RawMessage(`{}`)})
	require.NoError(t, err)
	_, err = q.Exec(t.Context(), `INSERT INTO events (id, event_id, merchant_id, environment, type, payload) VALUES ($1, $2, $3, $4, $5, $6)`,
		key, id, merchant, env, sika.EventTransactionSucceeded, payload)
	require.NoError(t, err)
	return id
}

// openStream reads a live stream's message ids into a channel.
func openStream(t *testing.T, ts *testServer, path string, headers ...string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.url+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ids := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		defer close(ids)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids <- id
			}
		}
	}()
	return ids
}

func nextID(t *testing.T, ids <-chan string, within time.Duration) string {
	t.Helper()
	select {
	case id := <-ids:
		return id
	case <-time.After(within):
		t.Fatalf("no message within %s", within)
		return ""
	}
}

// TestEventStreamCommitOrderAndTenancy: an event whose transaction began first but commits last
// is not skipped (the stream waits for it), another merchant's or environment's events never
// come, and a Last-Event-ID of another merchant is refused in the envelope.
func TestEventStreamCommitOrderAndTenancy(t *testing.T) {
	ts := newTestServer(t)
	acct, other := ts.newAccount(t, true), ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	ids := openStream(t, ts, "/api/v1/events/stream/", key...)
	require.True(t, strings.HasPrefix(nextID(t, ids, 5*time.Second), "@"), "the stream starts with its position")

	slow, err := testStore.Pool().Begin(t.Context())
	require.NoError(t, err)
	defer func() { _ = slow.Rollback(context.Background()) }()
	first := insertEvent(t, slow, acct.Merchant.ID, sika.EnvironmentTest)
	second := insertEvent(t, testStore.Pool(), acct.Merchant.ID, sika.EnvironmentTest)
	select {
	case id := <-ids:
		t.Fatalf("%s came while an older transaction was still open", id)
	case <-time.After(4 * streamPollInterval):
	}
	require.NoError(t, slow.Commit(t.Context()))
	assert.Equal(t, first, nextID(t, ids, 5*time.Second))
	assert.Equal(t, second, nextID(t, ids, 5*time.Second))

	insertEvent(t, testStore.Pool(), other.Merchant.ID, sika.EnvironmentTest)
	insertEvent(t, testStore.Pool(), acct.Merchant.ID, sika.EnvironmentLive)
	third := insertEvent(t, testStore.Pool(), acct.Merchant.ID, sika.EnvironmentTest)
	assert.Equal(t, third, nextID(t, ids, 5*time.Second), "neither another merchant's nor a LIVE event")

	resumed := openStream(t, ts, "/api/v1/events/stream/", append(key, "Last-Event-ID", first)...)
	assert.Equal(t, second, nextID(t, resumed, 5*time.Second))
	assert.Equal(t, third, nextID(t, resumed, 5*time.Second))

	r := ts.call(t, "GET", "/api/v1/events/stream/", nil, append(other.key(sika.EnvironmentTest, sika.ScopeBoth), "Last-Event-ID", first)...)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.fields(), "Last-Event-ID")
	r = ts.call(t, "GET", "/api/v1/request-logs/stream/", nil, append(key, "Last-Event-ID", "12x")...)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	r = ts.call(t, "GET", "/api/v1/request-logs/stream/", nil)
	assert.Equal(t, http.StatusUnauthorized, r.Status)
}

// insertEventOf writes an event of a type whose data carries a transaction type where a
// transaction's JSON does (transaction_type).
func insertEventOf(t *testing.T, merchant uuid.UUID, env sika.Environment, typ sika.EventType, txType sika.TransactionType) string {
	t.Helper()
	id, err := sika.NewEventID()
	require.NoError(t, err)
	key, err := uuid.NewV7()
	require.NoError(t, err)
	payload, err := json.Marshal(sika.Event{ID: id, Type: typ, CreatedAt: time.Now().UTC().Truncate(time.Microsecond), Environment: env,
		Data: json.RawMessage(`{"transaction_type":"` + string(txType) + `"}`)})
	require.NoError(t, err)
	_, err = testStore.Pool().Exec(t.Context(), `INSERT INTO events (id, event_id, merchant_id, environment, type, payload) VALUES ($1, $2, $3, $4, $5, $6)`,
		key, id, merchant, env, typ, payload)
	require.NoError(t, err)
	return id
}

// TestStreamsAreCappedAcrossReplicas: a key and a merchant hold at most their caps of live
// streams over every replica (429 past them); a stream that ends gives its place back.
func TestStreamsAreCappedAcrossReplicas(t *testing.T) {
	configure := func(c *Config) { c.StreamsPerKey, c.StreamsPerMerchant = 2, 3 }
	ts, other := newTestServer(t, configure), newTestServer(t, configure)
	acct := ts.newAccount(t, true)
	both, payin := acct.key(sika.EnvironmentTest, sika.ScopeBoth), acct.key(sika.EnvironmentTest, sika.ScopePayin)

	ctx, cancel := context.WithCancel(t.Context())
	openStream(t, ts, "/api/v1/events/stream/", both...)
	closing := openStreamCtx(t, ctx, other, "/api/v1/request-logs/stream/", both...)
	r := ts.call(t, "GET", "/api/v1/events/stream/", nil, both...)
	assert.Equal(t, http.StatusTooManyRequests, r.Status, "a third stream of the key, on another replica than its second")
	assert.Equal(t, "rate_limited", r.code())
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	openStream(t, other, "/api/v1/events/stream/", payin...)
	r = other.call(t, "GET", "/api/v1/events/stream/", nil, payin...)
	assert.Equal(t, http.StatusTooManyRequests, r.Status, "a fourth stream of the merchant")
	assert.Contains(t, string(r.Body), "for this merchant")

	other2 := ts.newAccount(t, true)
	openStream(t, ts, "/api/v1/events/stream/", other2.key(sika.EnvironmentTest, sika.ScopeBoth)...)

	cancel()
	for range closing {
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.url+"/api/v1/events/stream/", nil)
		require.NoError(c, err)
		req.Header.Set(both[0], both[1])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(c, err)
		defer resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode, "the closed stream's place is free")
	}, settle, 100*time.Millisecond)
}

// openStreamCtx is openStream ended by ctx.
func openStreamCtx(t *testing.T, ctx context.Context, ts *testServer, path string, headers ...string) <-chan string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.url+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ids := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		defer close(ids)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids <- id
			}
		}
	}()
	return ids
}

// TestStreamLifetimeEndsAndResumes: a stream ends at its lifetime and the client resumes after
// its last id without losing what committed in between.
func TestStreamLifetimeEndsAndResumes(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.StreamLifetime = 2 * time.Second })
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	ids := openStream(t, ts, "/api/v1/events/stream/", key...)
	last := nextID(t, ids, 5*time.Second)
	require.True(t, strings.HasPrefix(last, "@"))
	first := insertEvent(t, testStore.Pool(), acct.Merchant.ID, sika.EnvironmentTest)
	// The stream ends at its lifetime having sent first and nothing else; on a slow machine it
	// may end before first reaches it, and the resume after the last id it sent brings first.
	var sent []string
	deadline := time.After(15 * time.Second)
	for open := true; open; {
		select {
		case id, ok := <-ids:
			if ok {
				sent = append(sent, id)
			}
			open = ok
		case <-deadline:
			t.Fatal("the stream outlived its lifetime")
		}
	}
	require.LessOrEqual(t, len(sent), 1, "no other message: %v", sent)
	want := []string{first}
	if len(sent) == 1 {
		require.Equal(t, first, sent[0])
		last, want = first, nil
	}
	missed := insertEvent(t, testStore.Pool(), acct.Merchant.ID, sika.EnvironmentTest)
	resumed := openStream(t, ts, "/api/v1/events/stream/", append(key, "Last-Event-ID", last)...)
	for _, id := range append(want, missed) {
		assert.Equal(t, id, nextID(t, resumed, 5*time.Second))
	}
}

// TestStreamsHonourScopes: a PAYIN key streams no payout or settlement event and no other key's
// requests; a PAYOUT key no collection; a BOTH key everything.
func TestStreamsHonourScopes(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.StreamsPerKey = 5 })
	acct := ts.newAccount(t, true)
	test := sika.EnvironmentTest
	payinIDs := openStream(t, ts, "/api/v1/events/stream/", acct.key(test, sika.ScopePayin)...)
	payoutIDs := openStream(t, ts, "/api/v1/events/stream/", acct.key(test, sika.ScopePayout)...)
	bothIDs := openStream(t, ts, "/api/v1/events/stream/", acct.key(test, sika.ScopeBoth)...)
	for _, ids := range []<-chan string{payinIDs, payoutIDs, bothIDs} {
		require.True(t, strings.HasPrefix(nextID(t, ids, 5*time.Second), "@"))
	}
	payout := insertEventOf(t, acct.Merchant.ID, test, sika.EventPayoutSucceeded, sika.TypePayout)
	payoutTx := insertEventOf(t, acct.Merchant.ID, test, sika.EventTransactionSucceeded, sika.TypePayout)
	settlement := insertEventOf(t, acct.Merchant.ID, test, sika.EventSettlementSucceeded, sika.TypePayout)
	collection := insertEventOf(t, acct.Merchant.ID, test, sika.EventTransactionSucceeded, sika.TypePayment)
	checkout := insertEventOf(t, acct.Merchant.ID, test, sika.EventCheckoutSessionPaid, sika.TypePayment)
	for _, want := range []string{payout, payoutTx, settlement, collection, checkout} {
		assert.Equal(t, want, nextID(t, bothIDs, 5*time.Second))
	}
	assert.Equal(t, collection, nextID(t, payinIDs, 5*time.Second), "a PAYIN key: the collection, not the payouts")
	assert.Equal(t, checkout, nextID(t, payinIDs, 5*time.Second))
	for _, want := range []string{payout, payoutTx, settlement} {
		assert.Equal(t, want, nextID(t, payoutIDs, 5*time.Second))
	}
	kyc := insertEventOf(t, acct.Merchant.ID, test, sika.EventKYCApproved, "")
	assert.Equal(t, kyc, nextID(t, payoutIDs, 5*time.Second), "a PAYOUT key: no collection, the KYC decision")
	assert.Equal(t, kyc, nextID(t, payinIDs, 5*time.Second))

	payinLogs := openStream(t, ts, "/api/v1/request-logs/stream/", acct.key(test, sika.ScopePayin)...)
	require.True(t, strings.HasPrefix(nextID(t, payinLogs, 5*time.Second), "@"))
	ts.call(t, "GET", "/api/v1/networks/", nil, acct.key(test, sika.ScopePayout)...)
	ts.call(t, "GET", "/api/v1/networks/?page=2", nil, acct.key(test, sika.ScopePayin)...)
	id := nextID(t, payinLogs, 10*time.Second)
	var path string
	require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT path || coalesce(api_key_id::text, '') FROM api_request_logs WHERE id = $1::bigint`, id).Scan(&path))
	assert.Equal(t, "/api/v1/networks/"+acct.KeyIDs[string(test)+"/"+string(sika.ScopePayin)].String(), path,
		"a PAYIN key's log shows its own request, not the PAYOUT key's")
}
