package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExchangeClassifiesWhatHappened(t *testing.T) {
	send := func(url string, timeout time.Duration) (int, []byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer a-secret-key")
		return Exchange(http.DefaultClient, "op", req, 4)
	}

	answered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("busy, try later"))
	}))
	defer answered.Close()
	status, body, err := send(answered.URL, 5*time.Second)
	require.NoError(t, err, "an answer is not an error, whatever its status")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "busy", string(body), "read up to the limit")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	_, _, err = send(closed, 5*time.Second)
	assert.Equal(t, KindUnavailable, KindOf(err), "a refused dial sent nothing: %v", err)

	hanging := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // received, never answers
	}))
	defer hanging.Close()
	_, _, err = send(hanging.URL, 200*time.Millisecond)
	assert.Equal(t, KindAmbiguous, KindOf(err), "sent, then no answer: %v", err)
	assert.NotContains(t, err.Error(), "a-secret-key")
}
