package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/api/ratelimit"
	"github.com/sikahq/sika/filestore"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/telemetry"
	"github.com/sikahq/sika/webhook"
	"github.com/sikahq/sika/workflows"
)

// openStore connects to Postgres and applies pending migrations.
func openStore(ctx context.Context, cfg Config, logger *slog.Logger) (*store.Store, error) {
	if cfg.DatabaseURL == "" {
		return nil, errors.New("DATABASE_URL is not set")
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	if len(applied) > 0 {
		logger.Info("migrations applied", "migrations", applied)
	}
	return st, nil
}

// serveStore is openStore for the processes that serve payments (the API, the worker, sika
// dev): their store keeps the read cache (store.StartReadCache) until it is closed.
func serveStore(ctx context.Context, cfg Config, logger *slog.Logger) (*store.Store, error) {
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	st.StartReadCache(ctx)
	return st, nil
}

// dialTemporal connects to the Temporal frontend. The client (and the workers built on it)
// encrypts every payload with cfg.PayloadKeys (payloadcodec), carries the trace through workflows and activities (telemetry.TemporalTracing), and reports
// the SDK's metrics into reg when one is given.
func dialTemporal(ctx context.Context, cfg Config, logger *slog.Logger, reg prometheus.Registerer) (client.Client, error) {
	if cfg.TemporalAddress == "" {
		return nil, errors.New("TEMPORAL_ADDRESS is not set")
	}
	if cfg.PayloadKeys == nil {
		return nil, payloadcodec.ErrNoKeys
	}
	tracing, err := telemetry.TemporalTracing()
	if err != nil {
		return nil, err
	}
	opts := client.Options{
		HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger:        tlog.NewStructuredLogger(logger.With("component", "temporal")),
		Interceptors:  []interceptor.ClientInterceptor{tracing},
		DataConverter: cfg.PayloadKeys.DataConverter(),
	}
	workflows.Payloads = opts.DataConverter
	if opts.ConnectionOptions.GrpcCompression, err = workflows.ClientCompression(cfg.TemporalCompression, cfg.TemporalAddress); err != nil {
		return nil, err
	}
	if reg != nil {
		if opts.MetricsHandler, err = telemetry.TemporalMetrics(reg, logger); err != nil {
			return nil, err
		}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return c, nil
}

// newLimiter is Redis when REDIS_URL is set (one budget for every replica), in-process otherwise.
func newLimiter(cfg Config) (ratelimit.Limiter, error) {
	if cfg.RedisURL == "" {
		return ratelimit.NewMemory(nil), nil
	}
	return ratelimit.NewRedisFromURL(cfg.RedisURL)
}

// serveAPI serves HTTP until ctx ends, then shuts down gracefully. Its /metrics serves reg.
func serveAPI(ctx context.Context, cfg Config, st *store.Store, tc client.Client, reg *prometheus.Registry, ln net.Listener, logger *slog.Logger) error {
	limiter, err := newLimiter(cfg)
	if err != nil {
		return fmt.Errorf("rate limiter: %w", err)
	}
	gateways, err := newGatewayRouter(cfg, st.GatewayMemory())
	if err != nil {
		return err
	}
	logger.Info("live gateways", "configured", cfg.Live.names())
	files, err := filestore.NewDir(cfg.FilesDir)
	if err != nil {
		return err
	}
	var pacer ratelimit.Pacer // in-process unless the replicas share Redis
	if shared, ok := limiter.(*ratelimit.Redis); ok {
		pacer = shared.Pacer()
	}
	srv := api.NewServer(api.Config{
		PublicURL:                cfg.PublicURL,
		JWTSecret:                []byte(cfg.JWTSecret),
		RateLimitPerMinute:       cfg.RateLimitPerMinute,
		PublicRateLimitPerMinute: cfg.PublicRateLimitPerMinute,
		Limiter:                  limiter,
		Pacer:                    pacer,
		IdempotencyTTL:           cfg.IdempotencyTTL,
		IdempotencyLease:         cfg.IdempotencyLease,
		PaymentAcceptPerSecond:   cfg.PaymentAcceptPerSecond,
		StreamsPerMerchant:       cfg.StreamsPerMerchant,
		StreamsPerKey:            cfg.StreamsPerKey,
		StreamLifetime:           cfg.StreamLifetime,
		TrustedProxies:           cfg.TrustedProxies,
		Temporal:                 tc,
		TemporalUIURL:            cfg.TemporalUIURL,
		PayloadKeys:              cfg.PayloadKeys,
		TemporalNamespace:        cfg.TemporalNamespace,
		Gateways:                 gateways,
		WebhookGuard:             webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate},
		Logger:                   logger,
		Registry:                 reg,
		Files:                    files,
		ReadinessChecks: map[string]func(context.Context) error{
			"postgres": st.Ping,
			"temporal": func(ctx context.Context) error {
				_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
				return err
			},
		},
	}, st)
	httpSrv := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	// Live streams end when shutdown starts (their clients resume elsewhere); the request log's
	// queued records are written once every request has ended.
	httpSrv.RegisterOnShutdown(srv.StopStreams)
	defer srv.Close()
	return serveUntilDone(ctx, httpSrv, ln, "api", 20*time.Second, logger, "public_url", cfg.PublicURL)
}

// serveUntilDone serves srv on ln until ctx ends, then shuts it down, waiting up to grace for
// the requests under way; what names the server in the log and in errors ("api").
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, what string, grace time.Duration, logger *slog.Logger, attrs ...any) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info(what+" listening", append([]any{"addr", ln.Addr().String()}, attrs...)...)
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", what, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down %s: %w", what, err)
	}
	return nil
}

// runWorker polls the task queue and sweeps the outbox until ctx ends. It reports the
// database's state (outbox depth, wallet holds) on reg (when given), which the process's
// /metrics serves.
func runWorker(ctx context.Context, cfg Config, st *store.Store, tc client.Client, reg prometheus.Registerer, logger *slog.Logger) error {
	gateways, err := newGatewayRouter(cfg, st.GatewayMemory())
	if err != nil {
		return err
	}
	if reg != nil {
		if err := reg.Register(telemetry.NewStateCollector(st, 5*time.Second, logger)); err != nil {
			return fmt.Errorf("register state metrics: %w", err)
		}
	}
	logger.Info("live gateways", "configured", cfg.Live.names())
	if err := workflows.EnsureSchedules(ctx, tc); err != nil {
		return err
	}
	w := worker.New(tc, workflows.TaskQueue, workflows.WorkerOptions())
	acts := &activities.Activities{
		Store: st, Gateways: gateways, CallbackBaseURL: cfg.PublicURL, PushLifetime: cfg.PushLifetime,
		WebhookGuard: webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate},
	}
	workflows.Register(w, acts)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker polling", "task_queue", workflows.TaskQueue)
	workflows.SweepOutbox(ctx, st, tc, acts, cfg.OutboxSweepInterval, logger)
	w.Stop()
	return nil
}

// serveMetrics serves reg at /metrics on ln until ctx ends (the worker's metrics listener).
func serveMetrics(ctx context.Context, ln net.Listener, reg *prometheus.Registry, logger *slog.Logger) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return serveUntilDone(ctx, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln, "metrics", 5*time.Second, logger)
}

// startTracing installs the OTLP exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set (see
// telemetry.SetupTracing) and returns what flushes it at exit.
func startTracing(ctx context.Context, service string, logger *slog.Logger) (func(), error) {
	shutdown, err := telemetry.SetupTracing(ctx, service, os.Getenv)
	if err != nil {
		return nil, err
	}
	return func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(flushCtx); err != nil {
			logger.Warn("flush traces", "err", err)
		}
	}, nil
}

// service is what the api and the worker processes run on: the JSON logger, tracing, the
// store, a metrics registry and the Temporal client that reports on it.
type service struct {
	logger *slog.Logger
	st     *store.Store
	reg    *prometheus.Registry
	tc     client.Client
	// close releases them, last opened first.
	close func()
}

// openService opens them for the process name ("sika-api"); register puts the service's own
// metrics on the registry first.
func openService(ctx context.Context, cfg Config, name string, register bool) (svc service, err error) {
	svc.logger = cfg.logger("json")
	var closers []func()
	svc.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			svc.close()
		}
	}()
	stopTracing, err := startTracing(ctx, name, svc.logger)
	if err != nil {
		return svc, err
	}
	closers = append(closers, stopTracing)
	if svc.st, err = serveStore(ctx, cfg, svc.logger); err != nil {
		return svc, err
	}
	closers = append(closers, svc.st.Close)
	svc.reg = prometheus.NewRegistry()
	if register {
		if err := telemetry.Register(svc.reg); err != nil {
			return svc, fmt.Errorf("register metrics: %w", err)
		}
	}
	if svc.tc, err = dialTemporal(ctx, cfg, svc.logger, svc.reg); err != nil {
		return svc, err
	}
	closers = append(closers, svc.tc.Close)
	return svc, nil
}

func runAPICommand(ctx context.Context, cfg Config) error {
	if len(cfg.JWTSecret) < 32 {
		return errors.New("SIKA_JWT_SECRET must be set to at least 32 bytes")
	}
	svc, err := openService(ctx, cfg, "sika-api", false)
	if err != nil {
		return err
	}
	defer svc.close()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	return serveAPI(ctx, cfg, svc.st, svc.tc, svc.reg, ln, svc.logger)
}

func runWorkerCommand(ctx context.Context, cfg Config) error {
	svc, err := openService(ctx, cfg, "sika-worker", true)
	if err != nil {
		return err
	}
	defer svc.close()
	logger, st, tc, reg := svc.logger, svc.st, svc.tc, svc.reg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsDone := make(chan error, 1)
	// Payments come first: a worker whose metrics port is taken still works, and says so.
	if ln, err := net.Listen("tcp", cfg.MetricsAddr); err != nil {
		logger.Error("metrics not served: listen failed (SIKA_METRICS_ADDR)", "addr", cfg.MetricsAddr, "err", err)
		metricsDone <- nil
	} else {
		go func() { metricsDone <- serveMetrics(ctx, ln, reg, logger) }()
	}
	err = runWorker(ctx, cfg, st, tc, reg, logger)
	cancel()
	return errors.Join(err, <-metricsDone)
}

func runMigrate(ctx context.Context, cfg Config) error {
	logger := cfg.logger("text")
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	st.Close()
	logger.Info("database is up to date")
	return nil
}
