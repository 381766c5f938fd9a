package api

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestStreamLoadFigures measures what live streams cost Postgres: one TEST key opens
// SIKA_STREAM_LOAD streams (e.g. 150) on one replica, then for 12 s the test counts the pool's
// acquisitions and waits and the database's committed transactions. A measurement, not a check
// (figures in docs/security.md): run it with SIKA_STREAM_LOAD set; without it the test only
// says so. SIKA_STREAM_LOAD_CAPPED=1 keeps the default caps (the streams past them are refused).
func TestStreamLoadFigures(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIKA_STREAM_LOAD"))
	if n <= 0 {
		t.Log("SIKA_STREAM_LOAD unset: no measurement")
		return
	}
	ts := newTestServer(t, streamLoadConfig)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	held, refused := 0, 0
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.url+"/api/v1/events/stream/", nil)
		require.NoError(t, err)
		req.Header.Set(key[0], key[1])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		if resp.StatusCode == http.StatusOK {
			held++
			defer resp.Body.Close()
		} else {
			refused++
			resp.Body.Close()
		}
	}
	time.Sleep(time.Second) // every stream past its first read
	commits := func() int64 {
		var c int64
		require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&c))
		return c
	}
	st0, c0 := testStore.Pool().Stat(), commits()
	const window = 12 * time.Second // more than one idle read of every stream (streamIdleRead)
	time.Sleep(window)
	st1, c1 := testStore.Pool().Stat(), commits()
	secs := window.Seconds()
	t.Logf("streams held %d, refused %d; pool acquisitions %.0f/s, waits for a connection %d in %s, committed transactions %.0f/s",
		held, refused, float64(st1.AcquireCount()-st0.AcquireCount())/secs, st1.EmptyAcquireCount()-st0.EmptyAcquireCount(), window,
		float64(c1-c0-1)/secs)
}

// streamLoadConfig lifts the caps unless SIKA_STREAM_LOAD_CAPPED is set, so that the figures
// compare the same number of streams held.
func streamLoadConfig(c *Config) {
	if os.Getenv("SIKA_STREAM_LOAD_CAPPED") == "" {
		c.StreamsPerKey, c.StreamsPerMerchant = 100000, 100000
	}
}
