package api

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/filestore"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/telemetry"
	"github.com/sikahq/sika/webhook"
	"github.com/sikahq/sika/workflows"
)

// paymentStack is the whole collection path of this test package, started once: the sandbox
// operator on loopback, the API (which receives the callbacks), the real Temporal dev server and
// a worker running the real workflows and activities against the package's Postgres.
type paymentStack struct {
	*testServer
	sandbox  *sandbox.Server
	temporal client.Client
	// keys encrypt the payloads of temporal (and of its workers); temporalAddr is its server.
	keys         *payloadcodec.Ring
	temporalAddr string
	worker       worker.Worker
	acts         *activities.Activities
	secret       string
	sbURL        string
}

func (ps *paymentStack) sandboxURL() string { return ps.sbURL }

const (
	stackTick         = 50 * time.Millisecond
	stackPushLifetime = 4 * time.Second
)

var (
	stackOnce sync.Once
	stack     *paymentStack
	stackErr  error
)

// payments returns the package's payment stack, starting it on first use.
func payments(t *testing.T) *paymentStack {
	t.Helper()
	stackOnce.Do(func() { stack, stackErr = startPaymentStack() })
	require.NoError(t, stackErr)
	stack.validator = newOpenAPIValidator(t)
	return stack
}

func startPaymentStack() (*paymentStack, error) {
	env := testenv.Current()
	addr, err := env.TemporalAddress()
	if err != nil {
		return nil, err
	}
	workflows.TaskQueue = "test-" + env.DatabaseName
	tracing, err := telemetry.TemporalTracing()
	if err != nil {
		return nil, err
	}
	keys, err := payloadcodec.NewRing()
	if err != nil {
		return nil, err
	}
	workflows.Payloads = keys.DataConverter()
	tc, err := client.Dial(client.Options{HostPort: addr, Logger: quietTemporal(), Interceptors: []interceptor.ClientInterceptor{tracing},
		DataConverter: workflows.Payloads})
	if err != nil {
		return nil, err
	}
	ps := &paymentStack{temporal: tc, keys: keys, temporalAddr: addr, secret: "sandbox master secret for the api tests"}
	ps.sandbox = sandbox.NewServer(sandbox.Config{
		Gateways: sandbox.DefaultGateways(ps.secret), Tick: stackTick, PushTTL: 6 * time.Second,
		HoldTimeout: 10 * time.Second, LateAfter: stackPushLifetime + 2*time.Second, Logger: slog.New(slog.DiscardHandler),
	})
	sb := httptest.NewServer(ps.sandbox)
	ps.sbURL = sb.URL
	var gws []gateway.Gateway
	for _, g := range sandbox.DefaultGateways(ps.secret) {
		gws = append(gws, sandbox.NewClient(sandbox.ClientConfig{
			Name: g.Name, BaseURL: sb.URL, APIKey: g.APIKey, CallbackSecret: g.CallbackSecret, Timeout: time.Second,
		}))
	}
	router := gateway.NewRouter(gateway.HealthPolicy{}, gws...)

	// KYC uploads of the browser tests go to a directory of their own, left to the OS's
	// temporary files.
	filesDir, err := os.MkdirTemp("", "sika-api-files-")
	if err != nil {
		return nil, err
	}
	files, err := filestore.NewDir(filesDir)
	if err != nil {
		return nil, err
	}
	hs := httptest.NewUnstartedServer(nil)
	cfg := Config{
		Files:     files,
		PublicURL: "http://" + hs.Listener.Addr().String(), JWTSecret: []byte("test secret of at least thirty-two bytes"),
		RateLimitPerMinute: 100000, Logger: testLogger(), Temporal: tc, Gateways: router, PayloadKeys: keys,
		WebhookGuard: webhook.Guard{AllowPrivate: true},
		// Checkout tests expire sessions within seconds and drive hosted pages from one address.
		CheckoutMinExpiry: time.Second, PublicRateLimitPerMinute: 100000,
		// and start many payments on one link from one address and number
		LinkStartsPerClient: 100000, LinkStartsPerPhone: 100000,
	}
	srv := NewServer(cfg, testStore)
	hs.Config.Handler = validatedHandler(srv, recordUnattributed) // shared by every test: no one t to fail
	hs.Start()
	ps.testServer = &testServer{Server: srv, url: hs.URL}

	ps.acts = &activities.Activities{Store: testStore, Gateways: router, CallbackBaseURL: hs.URL, PushLifetime: stackPushLifetime,
		WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookTimeout: 300 * time.Millisecond}
	workflows.WebhookSchedule = []time.Duration{0, 20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
		200 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second,
		time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second,
		time.Second, time.Second, time.Second, time.Second, time.Second}
	ps.worker = worker.New(tc, workflows.TaskQueue, workflows.WorkerOptions())
	workflows.Register(ps.worker, ps.acts)
	if err := ps.worker.Start(); err != nil {
		return nil, err
	}
	go workflows.SweepOutbox(context.Background(), testStore, tc, ps.acts, 200*time.Millisecond, slog.New(slog.DiscardHandler))
	return ps, nil
}

// quietTemporal keeps the SDK's logs out of test output.
func quietTemporal() *slogTemporal { return &slogTemporal{} }

type slogTemporal struct{}

func (*slogTemporal) Debug(string, ...any) {}
func (*slogTemporal) Info(string, ...any)  {}
func (*slogTemporal) Warn(string, ...any)  {}
func (*slogTemporal) Error(string, ...any) {}

// testLogger discards logs unless SIKA_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("SIKA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}
