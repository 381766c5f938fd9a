package devstack

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBalancerRoundRobinSkipsUnready: requests alternate between ready replicas; a replica whose
// /readyz fails, or that is gone, gets none once the health check has seen it; with none ready
// the one address answers 503 with Retry-After.
func TestBalancerRoundRobinSkipsUnready(t *testing.T) {
	var ready [2]atomic.Bool
	var served [2]atomic.Int64
	var urls []string
	var servers []*httptest.Server
	for i := range 2 {
		ready[i].Store(true)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/readyz" {
				if !ready[i].Load() {
					w.WriteHeader(http.StatusServiceUnavailable)
				}
				return
			}
			served[i].Add(1)
			_, _ = io.WriteString(w, r.Host)
		}))
		defer srv.Close()
		servers = append(servers, srv)
		urls = append(urls, srv.URL)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b, err := startBalancer(ln, urls)
	require.NoError(t, err)
	defer b.close()
	base := "http://" + ln.Addr().String()
	get := func() int {
		resp, err := http.Get(base + "/x")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			assert.Equal(t, ln.Addr().String(), string(body), "the replica sees the address the client used")
		}
		return resp.StatusCode
	}
	for range 10 {
		require.Equal(t, http.StatusOK, get())
	}
	assert.Equal(t, int64(5), served[0].Load())
	assert.Equal(t, int64(5), served[1].Load())

	ready[0].Store(false)
	time.Sleep(3 * healthInterval)
	for range 4 {
		require.Equal(t, http.StatusOK, get())
	}
	assert.Equal(t, int64(9), served[1].Load(), "an unready replica gets no request")

	servers[1].Close()
	time.Sleep(3 * healthInterval)
	resp, err := http.Get(base + "/x")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
}
