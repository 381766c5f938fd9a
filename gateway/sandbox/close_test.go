package sandbox

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// TestCloseStopsEverything is not parallel: it looks at the process's goroutines.
func TestCloseStopsEverything(t *testing.T) {
	before := goroutines()

	var mu sync.Mutex
	received := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		received++
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable) // every delivery is retried
	}))
	server := NewServer(Config{Gateways: DefaultGateways(testMaster), Tick: tick, PushTTL: time.Minute,
		Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(server)
	transport := &http.Transport{}
	gw := DefaultGateways(testMaster)[0]
	client := NewClient(ClientConfig{Name: gw.Name, BaseURL: ts.URL, APIKey: gw.APIKey,
		HTTPClient: &http.Client{Transport: transport}})
	collect := func(ctx context.Context, suffix string) error {
		_, err := client.Collect(ctx, collectRequest(newRef(), "MTN_BJ", phone(suffix), "", receiver.URL))
		return err
	}

	require.NoError(t, collect(context.Background(), "009")) // an outcome timer
	require.NoError(t, collect(context.Background(), "004")) // only the expiry timer
	require.NoError(t, collect(context.Background(), "000")) // a delivery in its retries
	require.NoError(t, collect(context.Background(), "011")) // the LateAfter timer only
	// A lost answer, then the operation's hidden phase.
	requireKind(t, collect(context.Background(), "010"), gateway.KindAmbiguous, "")
	held := make(chan error, 1)
	go func() { held <- collect(context.Background(), "006") }() // a held response
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return received > 0 && len(server.Operations()) == 6
	}, patience, tick/2)

	closed := make(chan struct{})
	go func() { server.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return")
	}
	require.NoError(t, <-held, "Close releases a held response")
	server.Close() // idempotent

	// A delivery written just before Close may reach the receiver's handler just after it:
	// let what was already on the wire land (two quiet ticks); then nothing more may come.
	deliveries := -1
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		settled := received == deliveries
		deliveries = received
		return settled
	}, patience, 2*tick)
	require.Never(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return received != deliveries
	}, 25*tick, tick, "a callback was sent after Close")
	for _, op := range server.Operations() {
		if op.Status.Final() {
			continue
		}
		assert.Equal(t, gateway.StatusPending, op.Status, "timers ran after Close")
	}
	requireKind(t, collect(context.Background(), "000"), gateway.KindUnavailable, "")

	ts.Close()
	receiver.Close()
	transport.CloseIdleConnections()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Empty(c, newGoroutines(before), "goroutines left behind")
	}, patience, tick)
}

func TestLogsMaskSecrets(t *testing.T) {
	t.Parallel()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "sandbox.log"))
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	h := newHarness(t, func(cfg *Config, _ *ClientConfig) {
		cfg.Logger = slog.New(slog.NewJSONHandler(logFile, nil))
	})
	ref := newRef()
	_, err = h.collect(GatewayA, ref, "MTN_BJ", phone("123"), "")
	require.NoError(t, err)
	h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)

	raw, err := os.ReadFile(logFile.Name())
	require.NoError(t, err)
	logs := string(raw)
	require.Contains(t, logs, "+229*****123")
	require.Contains(t, logs, ref)
	gw := DefaultGateways(testMaster)[0]
	for _, secret := range []string{"97000123", gw.APIKey, gw.CallbackSecret, testMaster} {
		require.NotContains(t, logs, secret)
	}
}

// goroutines returns the stacks of the process's goroutines (not the runtime's own) by id.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	stacks := map[string]string{}
	for stack := range strings.SplitSeq(string(buf), "\n\n") {
		header, _, _ := strings.Cut(stack, " [")
		stacks[header] = stack
	}
	return stacks
}

// newGoroutines returns the stacks of goroutines that did not exist in before, except the
// caller's own.
func newGoroutines(before map[string]string) []string {
	var found []string
	for id, stack := range goroutines() {
		if _, old := before[id]; !old && !strings.Contains(stack, "newGoroutines") {
			found = append(found, stack)
		}
	}
	return found
}
