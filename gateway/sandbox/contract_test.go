package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
)

// The sandbox Client passes the contract every adapter must pass. The sandbox is steered by the
// customer's number (operators.md's suffix table), so the harness turns each Behaviour into the
// number of the next initiation: Decline 001, Unavailable503 005 (on sandbox-a), TimeoutAfterAccept
// 006, Succeed any other number. A refused connection is a real refused dial.
func TestContract(t *testing.T) { gatewaytest.Run(t, contractHarness{}) }

type contractHarness struct{}

func (contractHarness) Features() gatewaytest.Features {
	return gatewaytest.Features{Payouts: true, SignedCallbacks: true, Cancels: true, Refunds: true, RefundCallbacks: true, Country: "BJ", Currency: "XOF",
		Network: "MTN_BJ", Phone: phone("123")}
}

func (contractHarness) New(t *testing.T) (gateway.Gateway, gatewaytest.Controls) {
	c := &contractControls{t: t, phones: map[string]string{}, callbacks: map[string][]recordedCallback{}}
	receiver := httptest.NewServer(http.HandlerFunc(c.receive))
	t.Cleanup(receiver.Close)
	gw := DefaultGateways(testMaster)[0] // sandbox-a: the one that answers 503 to 005
	c.server = NewServer(Config{Gateways: []GatewayConfig{gw}, Tick: tick, PushTTL: 30 * tick,
		HoldTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(c.server)
	t.Cleanup(ts.Close)
	t.Cleanup(c.server.Close)
	c.client = NewClient(ClientConfig{Name: gw.Name, BaseURL: ts.URL, APIKey: gw.APIKey, CallbackSecret: gw.CallbackSecret,
		HTTPClient: c.HTTPClient(t), Timeout: 300 * time.Millisecond})
	c.callbackURL = receiver.URL
	return &steeredClient{Client: c.client, c: c}, c
}

type recordedCallback struct {
	header http.Header
	body   []byte
	status gateway.Status
}

// contractControls drive one sandbox for the contract.
type contractControls struct {
	gatewaytest.Script // Next, HTTPClient and Take

	t           *testing.T
	server      *Server
	client      *Client
	callbackURL string

	mu        sync.Mutex
	phones    map[string]string // reference → number it was created with
	callbacks map[string][]recordedCallback
}

// phoneFor is the number of an initiation of ref: the one it was created with, else the next
// behaviour's.
func (c *contractControls) phoneFor(ref string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.phones[ref]; ok {
		return p
	}
	b := c.Take()
	p := map[gatewaytest.Behaviour]string{
		gatewaytest.Succeed: phone("123"), gatewaytest.Decline: phone("001"),
		gatewaytest.Unavailable503: phone("005"), gatewaytest.TimeoutAfterAccept: phone("006"),
	}[b]
	if b != gatewaytest.Unavailable503 { // a 503 creates nothing: the next send is a new customer
		c.phones[ref] = p
	}
	return p
}

func (c *contractControls) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var cb callbackBody
	if err := json.Unmarshal(body, &cb); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.callbacks[cb.Reference] = append(c.callbacks[cb.Reference], recordedCallback{header: r.Header.Clone(), body: body, status: cb.Status})
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (c *contractControls) Operations() int { return len(c.server.Operations()) }

// Callback returns the final callback the sandbox sent about reference.
func (c *contractControls) Callback(_ gateway.CallbackKind, reference string) (http.Header, []byte) {
	var found recordedCallback
	require.EventuallyWithT(c.t, func(ct *assert.CollectT) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, cb := range c.callbacks[reference] {
			if cb.status.Final() {
				found = cb
			}
		}
		assert.NotNil(ct, found.body, "no final callback for %s yet", reference)
	}, patience, tick)
	return found.header, found.body
}

func (c *contractControls) ExpireToken()       {}
func (c *contractControls) TokenRequests() int { return 0 }

// steeredClient is the sandbox Client whose initiations carry the number of the behaviour the
// contract asked for, and the harness's callback URL.
type steeredClient struct {
	*Client
	c *contractControls
}

func (s *steeredClient) Collect(ctx context.Context, req gateway.CollectRequest) (gateway.CollectResult, error) {
	req.Phone, req.CallbackURL = s.c.phoneFor(req.Reference), s.c.callbackURL
	return s.Client.Collect(ctx, req)
}

func (s *steeredClient) Disburse(ctx context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	req.Phone, req.CallbackURL = s.c.phoneFor(req.Reference), s.c.callbackURL
	return s.Client.Disburse(ctx, req)
}

func (s *steeredClient) Refund(ctx context.Context, req gateway.RefundRequest) (gateway.OperationStatus, error) {
	req.Phone, req.CallbackURL = s.c.phoneFor(req.Reference), s.c.callbackURL
	return s.Client.Refund(ctx, req)
}
