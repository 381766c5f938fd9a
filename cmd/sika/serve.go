package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/api/ratelimit"
	"github.com/sikahq/sika/filestore"
	"github.com/sikahq/sika/store"
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

// dialTemporal connects to the Temporal frontend.
func dialTemporal(ctx context.Context, cfg Config, logger *slog.Logger) (client.Client, error) {
	if cfg.TemporalAddress == "" {
		return nil, errors.New("TEMPORAL_ADDRESS is not set")
	}
	c, err := client.DialContext(ctx, client.Options{
		HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: tlog.NewStructuredLogger(logger.With("component", "temporal")),
	})
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

// serveAPI serves HTTP until ctx ends, then shuts down gracefully.
func serveAPI(ctx context.Context, cfg Config, st *store.Store, tc client.Client, ln net.Listener, logger *slog.Logger) error {
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
		TrustedProxies:           cfg.TrustedProxies,
		Temporal:                 tc,
		TemporalUIURL:            cfg.TemporalUIURL,
		TemporalNamespace:        cfg.TemporalNamespace,
		Gateways:                 gateways,
		WebhookGuard:             webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate},
		Logger:                   logger,
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
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	logger.Info("api listening", "addr", ln.Addr().String(), "public_url", cfg.PublicURL)
	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down http: %w", err)
	}
	return nil
}

// runWorker polls the task queue and sweeps the outbox until ctx ends.
func runWorker(ctx context.Context, cfg Config, st *store.Store, tc client.Client, logger *slog.Logger) error {
	gateways, err := newGatewayRouter(cfg, st.GatewayMemory())
	if err != nil {
		return err
	}
	logger.Info("live gateways", "configured", cfg.Live.names())
	if err := workflows.EnsureSchedules(ctx, tc); err != nil {
		return err
	}
	w := worker.New(tc, workflows.TaskQueue, worker.Options{})
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

func runAPICommand(ctx context.Context, cfg Config) error {
	logger := cfg.logger("json")
	if len(cfg.JWTSecret) < 32 {
		return errors.New("SIKA_JWT_SECRET must be set to at least 32 bytes")
	}
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	tc, err := dialTemporal(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer tc.Close()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	return serveAPI(ctx, cfg, st, tc, ln, logger)
}

func runWorkerCommand(ctx context.Context, cfg Config) error {
	logger := cfg.logger("json")
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	tc, err := dialTemporal(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer tc.Close()
	return runWorker(ctx, cfg, st, tc, logger)
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
