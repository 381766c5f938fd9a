package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

const (
	tick       = 20 * time.Millisecond
	testMaster = "test-master-secret"
	// patience bounds every wait for something that must happen: generous, so that a loaded
	// machine does not fail the tests, and free when things go well.
	patience = 5 * time.Second
)

// harness is a sandbox on loopback, a callback receiver and one Client per gateway.
type harness struct {
	server   *Server
	url      string
	receiver *receiver
	clients  map[string]*Client
	http     *http.Client
}

// newHarness starts a sandbox with the default gateways, Tick = tick and PushTTL = 30 ticks;
// configure adjusts the configs before anything starts.
func newHarness(t *testing.T, configure func(*Config, *ClientConfig)) *harness {
	t.Helper()
	cfg := Config{
		Gateways:    DefaultGateways(testMaster),
		Tick:        tick,
		PushTTL:     30 * tick,
		HoldTimeout: 5 * time.Second,
		Logger:      slog.New(slog.DiscardHandler),
	}
	transport := &http.Transport{}
	clientCfg := ClientConfig{HTTPClient: &http.Client{Transport: transport}, Timeout: 2 * time.Second}
	if configure != nil {
		configure(&cfg, &clientCfg)
	}
	h := &harness{clients: map[string]*Client{}, http: &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	h.receiver = newReceiver(t, h.clients)
	h.server = NewServer(cfg)
	ts := httptest.NewServer(h.server)
	h.url = ts.URL
	for _, gw := range cfg.Gateways {
		c := clientCfg
		c.Name, c.BaseURL, c.APIKey, c.CallbackSecret = gw.Name, ts.URL, gw.APIKey, gw.CallbackSecret
		h.clients[gw.Name] = NewClient(c)
	}
	t.Cleanup(transport.CloseIdleConnections)
	t.Cleanup(ts.Close)
	t.Cleanup(h.server.Close) // runs first: it ends held responses and deliveries
	return h
}

// with returns a copy of h whose calls to gateway gw go through client.
func (h *harness) with(gw string, client *Client) *harness {
	c := *h
	c.clients = maps.Clone(h.clients)
	c.clients[gw] = client
	return &c
}

// longTTL keeps pushes pending for the whole of a test that is not about expiry.
func longTTL(cfg *Config, _ *ClientConfig) { cfg.PushTTL = time.Minute }

// newRef returns a fresh operation reference.
func newRef() string { return "ref-" + rand.Text()[:12] }

// phone returns a Benin number ending in suffix.
func phone(suffix string) string { return "+22997000" + suffix }

func (h *harness) callbackURL(gw string) string { return h.receiver.url + "/callbacks/" + gw }

func (h *harness) collect(gw, ref, network, msisdn, otp string) (gateway.CollectResult, error) {
	return h.clients[gw].Collect(context.Background(), collectRequest(ref, network, msisdn, otp, h.callbackURL(gw)))
}

// collectRequest asks for 1500 XOF from msisdn on network.
func collectRequest(ref, network, msisdn, otp, callbackURL string) gateway.CollectRequest {
	return gateway.CollectRequest{
		Reference: ref, Amount: decimal.RequireFromString("1500"), Currency: "XOF", Country: network[len(network)-2:],
		Network: network, Phone: msisdn, OTP: otp, CustomerName: "Awa Diallo", Description: "Order 42",
		CallbackURL: callbackURL,
	}
}

func (h *harness) disburse(gw, ref, network, msisdn string) (gateway.OperationStatus, error) {
	return h.clients[gw].Disburse(context.Background(), gateway.DisburseRequest{
		Reference: ref, Amount: decimal.RequireFromString("2500.5"), Currency: "XOF", Country: network[len(network)-2:],
		Network: network, Phone: msisdn, RecipientName: "Kofi Mensah", Description: "Payout 7",
		CallbackURL: h.callbackURL(gw),
	})
}

// operation reads GET /sandbox/operations/{ref}; ok is false on 404.
func (h *harness) operation(t require.TestingT, ref string) (view OperationView, ok bool) {
	resp, err := h.http.Get(h.url + "/sandbox/operations/" + url.PathEscape(ref))
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return OperationView{}, false
	}
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&view))
	return view, true
}

// post sends a JSON (or empty) POST to the sandbox and returns the status and body.
func (h *harness) post(t *testing.T, path string, body any) (int, []byte) {
	t.Helper()
	var payload io.Reader = http.NoBody
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		payload = bytes.NewReader(raw)
	}
	resp, err := h.http.Post(h.url+path, "application/json", payload)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// requireOneOperation checks the sandbox's counters for ref once they have settled.
func (h *harness) requireOneOperation(t *testing.T, ref string, requests, callbacks int) OperationView {
	t.Helper()
	var view OperationView
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		v, ok := h.operation(c, ref)
		require.True(c, ok, "no operation %s", ref)
		assert.Equal(c, 1, v.Pushes, "pushes")
		assert.Equal(c, requests, v.Requests, "requests")
		assert.Equal(c, callbacks, v.CallbacksSent, "callbacks_sent")
		view = v
	}, patience, tick/2)
	return view
}

// receiver records the callbacks the sandbox sends, verified with the gateway's ParseCallback.
type receiver struct {
	url     string
	clients map[string]*Client

	mu       sync.Mutex
	got      map[string][]gateway.Callback // by reference, in arrival order
	rejected []error
	failNext map[string]int // reference → deliveries to answer 500
}

func newReceiver(t *testing.T, clients map[string]*Client) *receiver {
	r := &receiver{clients: clients, got: map[string][]gateway.Callback{}, failNext: map[string]int{}}
	ts := httptest.NewServer(http.HandlerFunc(r.serve))
	r.url = ts.URL
	t.Cleanup(func() {
		ts.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Empty(t, r.rejected, "callbacks that failed verification")
	})
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	client := r.clients[strings.TrimPrefix(req.URL.Path, "/callbacks/")]
	r.mu.Lock()
	defer r.mu.Unlock()
	if client == nil {
		http.NotFound(w, req)
		return
	}
	cb, err := client.ParseCallback(req.Context(), req.Header, body)
	if err != nil {
		r.rejected = append(r.rejected, err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if r.failNext[cb.Reference] > 0 {
		r.failNext[cb.Reference]--
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	r.got[cb.Reference] = append(r.got[cb.Reference], cb)
}

// callbacks returns the callbacks received for ref.
func (r *receiver) callbacks(ref string) []gateway.Callback {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gateway.Callback(nil), r.got[ref]...)
}

// statuses returns the statuses of the callbacks received for ref, in arrival order.
func (r *receiver) statuses(ref string) []gateway.Status {
	var out []gateway.Status
	for _, cb := range r.callbacks(ref) {
		out = append(out, cb.Status)
	}
	return out
}

func (r *receiver) failDeliveries(ref string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failNext[ref] = n
}

// requireCallbacks waits for exactly want callback statuses for ref, then checks that no
// further one arrives for a few ticks.
func (r *receiver) requireCallbacks(t *testing.T, ref string, want ...gateway.Status) {
	t.Helper()
	if len(want) > 0 {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, want, r.statuses(ref))
		}, patience, tick/2)
	}
	require.Never(t, func() bool { return len(r.statuses(ref)) > len(want) }, 5*tick, tick/2,
		"more callbacks than %v: %v", want, r.statuses(ref))
}

// requireKind checks that err is a gateway error of kind (and code, when not empty).
func requireKind(t require.TestingT, err error, kind gateway.Kind, code string) {
	require.Error(t, err)
	require.Equal(t, kind, gateway.KindOf(err), "kind of %v", err)
	if code != "" {
		require.Equal(t, code, gateway.CodeOf(err), "code of %v", err)
	}
}
