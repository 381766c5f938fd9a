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
