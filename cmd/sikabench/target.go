package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/telemetry"
	"github.com/sikahq/sika/webhook"
	"github.com/sikahq/sika/workflows"
)

// target is the service under load and what the harness reads besides its API.
type target struct {
	describe string
	baseURL  string // …/api/v1
	key      string
	db       *pgxpool.Pool // the harness's own connections to the service's database
	tc       client.Client // nil: no history counting
	// statementsOff is why pg_stat_statements cannot be read in the service's database through
	// db ("" when it can: db then logs in as harnessRole).
	statementsOff string

	// In -self mode only: the service's store and merchant (the parts besides collections set
	// up their data through it), the Postgres server's admin URL (pgbench gets a database of
	// its own there), the service's own Postgres pool, and timings taken inside it.
	store              *store.Store
	merchant           uuid.UUID
	adminURL           string
	pool               *pgxpool.Pool
	poolStart, poolEnd *pgxpool.Stat
	timings            *serverTimings
	rpcs               *rpcStats // the service's calls to Temporal
	temporalMetrics    string    // the dev server's Prometheus metrics ("" when not served)
	logPath            string

	closers []func()
}

func (t *target) close() {
	for i := len(t.closers) - 1; i >= 0; i-- {
		t.closers[i]()
	}
}

// startSelf assembles the service in this process the way `sika dev` does (cmd/sika: runDev,
// serveAPI, runWorker, newGatewayRouter, serveSandbox), on an ephemeral devstack.
func startSelf(ctx context.Context, o options) (_ *target, err error) {
	t := &target{timings: &serverTimings{}}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	logger, err := serviceLogger(o, t)
	if err != nil {
		return nil, err
	}
	progress := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fmt.Fprintln(os.Stderr, "sikabench: starting an ephemeral Postgres and Temporal dev server")
	metricsPort, err := devstack.FreePort()
	if err != nil {
		return nil, err
	}
	stack, err := devstack.StartStack(ctx, devstack.StackOptions{Ephemeral: true, TemporalFile: o.temporalFile,
		TemporalMetricsPort: metricsPort, PostgresSettings: postgresSettings(), Logger: progress})
	if err != nil {
		return nil, err
	}
	t.temporalMetrics = stack.Temporal.MetricsURL()
	t.closers = append(t.closers, func() {
		if err := stack.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "sikabench: stop stack:", err)
		}
	})
	const database = "sika"
	if err := stack.Postgres.CreateDatabase(ctx, database); err != nil {
		return nil, err
	}
	// From here on the goroutines this one starts are the service's (the store's pool and read
	// cache, the Temporal client's connection), unless labelled otherwise below: see profile.go.
	svcCtx := pprof.WithLabels(ctx, pprof.Labels(componentKey, compService))
	pprof.SetGoroutineLabels(svcCtx)
	defer pprof.SetGoroutineLabels(ctx)
	dbURL := stack.Postgres.URL(database)
	serviceURL := dbURL
	if o.poolConns > 0 {
		serviceURL += fmt.Sprintf("&pool_max_conns=%d", o.poolConns)
	}
	st, err := store.Open(ctx, serviceURL)
	if err != nil {
		return nil, err
	}
	st.StartReadCache(ctx) // as `sika api` and `sika worker` do
	t.closers = append(t.closers, st.Close)
	t.store, t.pool, t.adminURL = st, st.Pool(), stack.Postgres.URL("postgres")
	if _, err := st.Migrate(ctx); err != nil {
		return nil, err
	}
	if t.merchant, t.key, err = benchMerchant(ctx, st); err != nil {
		return nil, err
	}
	if t.db, t.statementsOff, err = harnessDB(ctx, dbURL); err != nil {
		return nil, err
	}
	t.closers = append(t.closers, t.db.Close)

	// The service's client always carries the tracing interceptor (cmd/sika dialTemporal); with
	// tracing off it has no exporter behind it.
	tracing, err := telemetry.TemporalTracing()
	if err != nil {
		return nil, err
	}
	if o.tracing {
		stopTracing, err := exportTraces(ctx)
		if err != nil {
			return nil, err
		}
		t.closers = append(t.closers, stopTracing)
	}
	keys, err := payloadcodec.NewRing() // as the service's client (cmd/sika dialTemporal), payloads encrypted
	if err != nil {
		return nil, err
	}
	copts := client.Options{
		HostPort: stack.Temporal.Address(), Namespace: o.namespace,
		Logger:        tlog.NewStructuredLogger(logger.With("component", "temporal")),
		Interceptors:  []interceptor.ClientInterceptor{tracing},
		DataConverter: keys.DataConverter(),
	}
	workflows.Payloads = copts.DataConverter
	if copts.ConnectionOptions.GrpcCompression, err = workflows.ClientCompression(o.compression, copts.HostPort); err != nil {
		return nil, err
	}
	t.rpcs = newRPCStats()
	copts.ConnectionOptions.DialOptions = append(copts.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(t.rpcs.interceptor()))
	rawTC, err := client.DialContext(ctx, copts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal: %w", err)
	}
	t.closers = append(t.closers, rawTC.Close)
	t.tc = rawTC

	var sandboxURL, secret string
	labelled(svcCtx, compSandbox, func() { sandboxURL, secret, err = startSandbox(t, o.tick, logger.With("component", "sandbox")) })
	if err != nil {
		return nil, err
	}
	router := func() *gateway.Router { // one per component, as in cmd/sika
		var gws []gateway.Gateway
		for _, g := range sandbox.DefaultGateways(secret) {
			gws = append(gws, sandbox.NewClient(sandbox.ClientConfig{
				Name: g.Name, BaseURL: sandboxURL, APIKey: g.APIKey, CallbackSecret: g.CallbackSecret,
			}))
		}
		return gateway.NewRouter(gateway.HealthPolicy{}, gws...)
	}

	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	publicURL := "http://" + apiLn.Addr().String()
	srv := api.NewServer(api.Config{
		PublicURL: publicURL,
		JWTSecret: []byte(secret),
		// The bench measures capacity: the per-merchant budget (300/min by default) would
		// turn most requests into 429s.
		RateLimitPerMinute: 1 << 30,
		// The service's own back-pressure, as a deployment on this machine would set it.
		PaymentAcceptPerSecond: o.acceptRate,
		Temporal:               timedTemporal{Client: rawTC, timings: t.timings},
		Gateways:               router(),
		WebhookGuard:           webhook.Guard{AllowPrivate: true}, // the receiver is on loopback
		Logger:                 logger,
	}, st)
	labelled(svcCtx, compAPI, func() {
		serve(t, &http.Server{
			Handler: t.timings.wrap(srv), ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second,
		}, apiLn)
	})
	t.baseURL = publicURL + "/api/v1"

	w := worker.New(rawTC, workflows.TaskQueue, workflows.WorkerOptions())
	acts := &activities.Activities{
		Store: st, Gateways: router(), CallbackBaseURL: publicURL, PushLifetime: 5 * time.Minute,
		WebhookGuard: webhook.Guard{AllowPrivate: true},
	}
	workflows.Register(w, acts)
	sweepCtx, cancelSweep := context.WithCancel(context.WithoutCancel(ctx))
	var sweeping sync.WaitGroup
	labelled(svcCtx, compWorker, func() {
		if err = w.Start(); err != nil {
			return
		}
		sweeping.Go(func() { workflows.SweepOutbox(sweepCtx, st, rawTC, acts, 5*time.Second, logger) })
	})
	if err != nil {
		cancelSweep()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	t.closers = append(t.closers, func() { cancelSweep(); sweeping.Wait(); w.Stop() })

	temporalState := "in memory"
	if o.temporalFile {
		temporalState = "state in a SQLite file, as sika dev"
	}
	t.describe = fmt.Sprintf("self: ephemeral Postgres (fsync off) + Temporal dev server (%s), sandbox tick %s, API/worker/sandbox in this process", temporalState, o.tick)
	if o.acceptRate > 0 {
		t.describe += fmt.Sprintf(", service accepts at most %d payments/s (503 + Retry-After past it)", o.acceptRate)
	}
	if o.poolConns > 0 {
		t.describe += fmt.Sprintf(", EXPERIMENT pool_max_conns=%d", o.poolConns)
	}
	if o.compression != "" {
		t.describe += ", EXPERIMENT Temporal gRPC compression " + o.compression
	}
	return t, nil
}

// startSandbox serves the sandbox operator on loopback until the target closes, with a master
// secret made up for the run; it returns its URL and the secret.
func startSandbox(t *target, tick time.Duration, logger *slog.Logger) (string, string, error) {
	secret, err := sika.RandomBase62(48)
	if err != nil {
		return "", "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	sb := sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(secret), Tick: tick, Logger: logger})
	t.closers = append(t.closers, sb.Close) // closers run in reverse: after the HTTP server's shutdown
	serve(t, &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}, ln)
	return "http://" + ln.Addr().String(), secret, nil
}

// serve runs an HTTP server on ln until the target closes.
func serve(t *target, srv *http.Server, ln net.Listener) {
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "sikabench: serve:", err)
		}
	}()
	t.closers = append(t.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// exportTraces turns tracing on as OTEL_EXPORTER_OTLP_ENDPOINT does (telemetry.SetupTracing),
// towards an in-process OTLP/HTTP collector that reads and discards what it is sent: the cost
// measured is the service's (spans, batching, encoding, the HTTP export), not a collector's.
func exportTraces(ctx context.Context) (func(), error) {
	var exported atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		exported.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			collector.Close()
			return nil, err
		}
	}
	shutdown, err := telemetry.SetupTracing(ctx, "sikabench", func(k string) string { return env[k] })
	if err != nil {
		collector.Close()
		return nil, err
	}
	return func() {
		_ = shutdown(context.WithoutCancel(ctx))
		collector.Close()
		fmt.Fprintf(os.Stderr, "sikabench: tracing on: %d bytes of OTLP spans exported\n", exported.Load())
	}, nil
}

// serviceLogger sends the in-process service's logs (access logs included: they are part of
// its cost) to a file, so that the report stays readable.
func serviceLogger(o options, t *target) (*slog.Logger, error) {
	path := o.logFile
	if path == "" {
		dir := o.out
		if dir == "" {
			dir = os.TempDir()
		}
		path = filepath.Join(dir, "service.log")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t.closers = append(t.closers, func() { _ = f.Close() })
	t.logPath = path
	return slog.New(slog.NewJSONHandler(f, nil)), nil
}

// benchMerchant creates an active, verified merchant and returns it with a TEST key of PAYIN
// scope.
func benchMerchant(ctx context.Context, st *store.Store) (uuid.UUID, string, error) {
	pw, err := sika.RandomBase62(20)
	if err != nil {
		return uuid.Nil, "", err
	}
	hash, err := sika.HashPassword(pw)
	if err != nil {
		return uuid.Nil, "", err
	}
	member, merchant, err := st.RegisterMember(ctx, "bench@sika.local", hash, "Sika Bench", "",
		&store.NewMerchant{Name: "Bench Shop", Country: "BJ", KYCStatus: sika.KYCVerified, IsActive: true})
	if err != nil {
		return uuid.Nil, "", fmt.Errorf("register the bench merchant: %w", err)
	}
	key, err := st.CreateAPIKey(ctx, merchant.ID, sika.EnvironmentTest, sika.ScopePayin, "sikabench", &member.ID)
	if err != nil {
		return uuid.Nil, "", fmt.Errorf("create the bench key: %w", err)
	}
	return merchant.ID, key.Secret, nil
}

// connectRemote reaches a service that already runs; what the flags leave out comes from the
// environment, then from the state `sika dev` keeps in .sika/.
func connectRemote(ctx context.Context, o options) (_ *target, err error) {
	t := &target{baseURL: strings.TrimRight(o.baseURL, "/"), key: o.key,
		statementsOff: "not read with -base-url (the bench's own connections cannot be told from the service's)"}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	state := stateDir()
	var dev struct {
		BaseURL  string `json:"base_url"`
		Merchant struct {
			APIKeys struct {
				TestPayin string `json:"test_payin"`
				TestBoth  string `json:"test_both"`
			} `json:"api_keys"`
		} `json:"merchant"`
	}
	if b, err := os.ReadFile(filepath.Join(state, "dev.json")); err == nil {
		_ = json.Unmarshal(b, &dev)
	}
	if t.baseURL == "" {
		t.baseURL = strings.TrimRight(dev.BaseURL, "/")
	}
	if t.key == "" {
		t.key = orDefault(dev.Merchant.APIKeys.TestPayin, dev.Merchant.APIKeys.TestBoth)
	}
	dbURL := orDefault(o.databaseURL, os.Getenv("DATABASE_URL"))
	if dbURL == "" {
		if port := statePort(filepath.Join(state, "postgres.ports"), "postgres"); port != 0 {
			dbURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/sika?sslmode=disable", port)
		}
	}
	temporalAddr := orDefault(o.temporal, os.Getenv("TEMPORAL_ADDRESS"))
	if temporalAddr == "" {
		if port := statePort(filepath.Join(state, "temporal.db.ports"), "frontend"); port != 0 {
			temporalAddr = fmt.Sprintf("127.0.0.1:%d", port)
		}
	}
	switch {
	case t.baseURL == "":
		return nil, errors.New("no -base-url and no .sika/dev.json: start the service with `make run` or use -self")
	case t.key == "":
		return nil, errors.New("no -key and none in .sika/dev.json")
	case !strings.HasPrefix(t.key, "sk_test_"):
		return nil, errors.New("-key must be a TEST key (sk_test_…): the bench sends payments")
	case dbURL == "":
		return nil, errors.New("no -database-url: completion times are read in Postgres")
	}
	u, err := url.Parse(t.baseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("-base-url %q is not a URL", t.baseURL)
	}
	if err := requireLoopback("-base-url", u.Hostname()); err != nil {
		return nil, err
	}
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	if !strings.HasPrefix(pcfg.ConnConfig.Host, "/") {
		if err := requireLoopback("-database-url", pcfg.ConnConfig.Host); err != nil {
			return nil, err
		}
	}
	if t.db, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return nil, err
	}
	t.closers = append(t.closers, t.db.Close)
	if err := t.db.Ping(ctx); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	history := "no Temporal address: history not counted"
	if temporalAddr != "" {
		host, _, err := net.SplitHostPort(temporalAddr)
		if err != nil {
			return nil, fmt.Errorf("-temporal %q: %w", temporalAddr, err)
		}
		if err := requireLoopback("-temporal", host); err != nil {
			return nil, err
		}
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		copts := client.Options{HostPort: temporalAddr, Namespace: o.namespace, Logger: tlog.NewStructuredLogger(quiet)}
		if v := os.Getenv(payloadcodec.EnvKeys); v != "" { // the service's ring, to read its payloads
			keys, err := payloadcodec.ParseKeys(v)
			if err != nil {
				return nil, err
			}
			copts.DataConverter = keys.DataConverter()
		}
		if t.tc, err = client.DialContext(ctx, copts); err != nil {
			return nil, fmt.Errorf("connect to temporal at %s: %w", temporalAddr, err)
		}
		t.closers = append(t.closers, t.tc.Close)
		history = "Temporal " + temporalAddr
	}
	t.describe = fmt.Sprintf("running service at %s (%s)", t.baseURL, history)
	return t, nil
}

// requireLoopback refuses to load anything but this machine.
func requireLoopback(flagName, host string) error {
	if host == "localhost" {
		return nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("%s: %s is not a loopback address; the bench only loads this machine", flagName, host)
		}
	}
	return nil
}

// stateDir is where `sika dev` keeps its state: $SIKA_STATE_DIR, else .sika at the module root.
func stateDir() string {
	if d := os.Getenv("SIKA_STATE_DIR"); d != "" {
		return d
	}
	root, err := devstack.FindRepoRoot(".")
	if err != nil {
		return ".sika"
	}
	return filepath.Join(root, ".sika")
}

// statePort reads a port remembered in one of devstack's .ports files (0 when absent).
func statePort(path, name string) int {
	var f struct {
		Ports map[string]int `json:"ports"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &f) != nil {
		return 0
	}
	return f.Ports[name]
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// serverTimings are taken inside the in-process API: the whole softpay handler, and the
// Temporal calls it makes (the workflow start; the callback signals).
type serverTimings struct {
	mu      sync.Mutex
	softpay []timed
	start   []timed
	signal  []timed
}

type timed struct {
	at time.Time
	d  time.Duration
}

func (s *serverTimings) add(dst *[]timed, at time.Time) {
	d := time.Since(at)
	s.mu.Lock()
	*dst = append(*dst, timed{at, d})
	s.mu.Unlock()
}

// between returns the durations of the calls that began in [from, to).
func between(ts []timed, from, to time.Time) []time.Duration {
	var out []time.Duration
	for _, x := range ts {
		if !x.at.Before(from) && x.at.Before(to) {
			out = append(out, x.d)
		}
	}
	return out
}

func (s *serverTimings) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/payments/softpay/") {
			h.ServeHTTP(w, r)
			return
		}
		at := time.Now()
		h.ServeHTTP(w, r)
		s.add(&s.softpay, at)
	})
}

// timedTemporal is the API's Temporal client with its calls timed.
type timedTemporal struct {
	client.Client
	timings *serverTimings
}

func (c timedTemporal) ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	defer c.timings.add(&c.timings.start, time.Now())
	return c.Client.ExecuteWorkflow(ctx, opts, wf, args...)
}

func (c timedTemporal) SignalWorkflow(ctx context.Context, id, runID, name string, arg any) error {
	defer c.timings.add(&c.timings.signal, time.Now())
	return c.Client.SignalWorkflow(ctx, id, runID, name, arg)
}
