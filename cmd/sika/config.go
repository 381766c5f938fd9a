package main

import (
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/telemetry"
	"github.com/sikahq/sika/workflows"
)

// Config is every setting of the service. It is read from environment variables here and
// nowhere else; each variable is documented in docs/configuration.md with its default.
type Config struct {
	// DatabaseURL is the Postgres URL (DATABASE_URL). `sika dev` starts a private Postgres
	// when it is empty; the other commands need it.
	DatabaseURL string
	// TemporalAddress is host:port of the Temporal frontend (TEMPORAL_ADDRESS). `sika dev`
	// starts the Temporal dev server when it is empty.
	TemporalAddress string
	// TemporalUIURL is the Temporal UI, for links to workflows in support tools
	// (SIKA_TEMPORAL_UI_URL; `sika dev` sets it to the UI it starts).
	TemporalUIURL string
	// TemporalNamespace is the Temporal namespace (TEMPORAL_NAMESPACE, default "default").
	TemporalNamespace string
	// TemporalCompression is the gRPC compression towards Temporal (TEMPORAL_GRPC_COMPRESSION:
	// gzip or none; by default none for a frontend on a loopback address, gzip otherwise).
	TemporalCompression string
	// TaskQueue is the Temporal task queue of the service (SIKA_TASK_QUEUE, default "sika").
	TaskQueue string
	// SandboxURL is the base URL of the sandbox operator that TEST payments go to
	// (SIKA_SANDBOX_URL; `sika dev` starts the sandbox itself when it is empty).
	SandboxURL string
	// SandboxSecret is the master secret the sandbox gateways' API keys and callback secrets
	// derive from (SIKA_SANDBOX_SECRET; `sika dev` generates one and keeps it in .sika/).
	SandboxSecret string
	// SandboxAddr is where `sika sandbox` listens (SIKA_SANDBOX_ADDR, default 127.0.0.1:8090).
	SandboxAddr string
	// PushLifetime bounds how long a collection waits for the customer before it fails
	// `expired` (SIKA_PUSH_LIFETIME, default 5m).
	PushLifetime time.Duration
	// OutboxSweepInterval is how often the worker starts workflows a crash left in the outbox
	// (SIKA_OUTBOX_SWEEP_INTERVAL, default 5s).
	OutboxSweepInterval time.Duration
	// RecheckInterval is how often the attempts that ended without the operator's final word
	// are read again (SIKA_RECHECK_INTERVAL, default 1m).
	RecheckInterval time.Duration
	// WebhookAllowPrivate lets webhook endpoints target private and loopback addresses
	// (SIKA_WEBHOOK_ALLOW_PRIVATE, default false; `sika dev` defaults it to true).
	WebhookAllowPrivate bool
	// WebhookSchedule is the delivery retry schedule (SIKA_WEBHOOK_SCHEDULE, comma-separated
	// durations; default the contract's 0,5s,5m,30m,2h,5h,10h,14h,20h,24h).
	WebhookSchedule []time.Duration
	// RedisURL makes the rate limit shared by every API replica (REDIS_URL; empty: in-process).
	RedisURL string
	// HTTPAddr is where the API listens (SIKA_HTTP_ADDR, default 127.0.0.1:8080).
	HTTPAddr string
	// MetricsAddr is where `sika worker` serves its Prometheus /metrics (SIKA_METRICS_ADDR,
	// default 127.0.0.1:9091); the API serves its own on its HTTP address, and `sika dev` serves
	// the whole process's there.
	MetricsAddr string
	// PublicURL is how merchants and customers reach the API (SIKA_PUBLIC_URL, default
	// http://<SIKA_HTTP_ADDR>).
	PublicURL string
	// JWTSecret signs dashboard sessions (SIKA_JWT_SECRET; `sika dev` generates one and keeps
	// it in .sika/; `sika api` refuses to start without one of at least 32 bytes).
	JWTSecret string
	// RateLimitPerMinute is the default request rate per merchant (SIKA_RATE_LIMIT_PER_MINUTE,
	// default 300).
	RateLimitPerMinute int
	// PublicRateLimitPerMinute bounds login and registration per client IP
	// (SIKA_PUBLIC_RATE_LIMIT_PER_MINUTE, default 60).
	PublicRateLimitPerMinute int
	// PaymentAcceptPerSecond caps collections accepted per second (SIKA_PAYMENT_ACCEPT_PER_SECOND,
	// default 0: no cap); past it softpay answers 503 with Retry-After.
	PaymentAcceptPerSecond int
	// StreamsPerMerchant and StreamsPerKey cap the live streams (GET /events/stream/,
	// /request-logs/stream/) open at once over every replica (SIKA_STREAMS_PER_MERCHANT, default
	// 10; SIKA_STREAMS_PER_KEY, default 3); StreamLifetime ends a stream, which its client
	// resumes with Last-Event-ID (SIKA_STREAM_LIFETIME, default 30m, at least 5s).
	StreamsPerMerchant, StreamsPerKey int
	StreamLifetime                    time.Duration
	// IdempotencyTTL is how long Idempotency-Keys are kept (SIKA_IDEMPOTENCY_TTL, default 24h).
	IdempotencyTTL time.Duration
	// IdempotencyLease is how long a request in flight holds its key before a retry may take it
	// over, its process presumed dead (SIKA_IDEMPOTENCY_LEASE, default 1m).
	IdempotencyLease time.Duration
	// TrustedProxies are CIDR ranges whose X-Forwarded-For is believed (SIKA_TRUSTED_PROXIES,
	// comma-separated, default none).
	TrustedProxies []netip.Prefix
	// StateDir holds `sika dev` state: Postgres data, Temporal database, dev.json
	// (SIKA_STATE_DIR, default .sika).
	StateDir string
	// FilesDir is where KYC uploads are stored (SIKA_FILES_DIR, default <SIKA_STATE_DIR>/files).
	FilesDir string
	// LogLevel is debug, info, warn or error (SIKA_LOG_LEVEL, default info).
	LogLevel slog.Level
	// LogFormat is json or text (SIKA_LOG_FORMAT, default text for dev, json otherwise).
	LogFormat string
	// PayloadKeys encrypt what Sika hands to Temporal (SIKA_PAYLOAD_KEYS: id:base64key pairs,
	// comma-separated, the first encrypting; see payloadcodec). Every command that talks to
	// Temporal needs them; `sika dev` and `sika cluster` keep a generated ring in the state dir.
	PayloadKeys *payloadcodec.Ring
	// Live configures the real operators LIVE payments go to (SIKA_MTNMOMO_*, …; see live.go).
	Live LiveGateways

	// httpAddrSet and publicURLSet remember whether the operator chose them: `sika dev` may
	// move to a free port only when nobody asked for a particular one.
	httpAddrSet, publicURLSet, webhookAllowPrivateSet bool
}

// loadConfig reads the environment. It fails on a value that is present but malformed, never
// silently falling back to a default.
func loadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:         getenv("DATABASE_URL"),
		TemporalAddress:     getenv("TEMPORAL_ADDRESS"),
		TemporalNamespace:   orDefault(getenv("TEMPORAL_NAMESPACE"), "default"),
		TemporalCompression: getenv("TEMPORAL_GRPC_COMPRESSION"),
		TemporalUIURL:       strings.TrimRight(getenv("SIKA_TEMPORAL_UI_URL"), "/"),
		RedisURL:            getenv("REDIS_URL"),
		TaskQueue:           orDefault(getenv("SIKA_TASK_QUEUE"), "sika"),
		SandboxURL:          strings.TrimRight(getenv("SIKA_SANDBOX_URL"), "/"),
		SandboxSecret:       getenv("SIKA_SANDBOX_SECRET"),
		SandboxAddr:         orDefault(getenv("SIKA_SANDBOX_ADDR"), "127.0.0.1:8090"),
		HTTPAddr:            orDefault(getenv("SIKA_HTTP_ADDR"), "127.0.0.1:8080"),
		MetricsAddr:         orDefault(getenv("SIKA_METRICS_ADDR"), "127.0.0.1:9091"),
		PublicURL:           strings.TrimRight(getenv("SIKA_PUBLIC_URL"), "/"),
		JWTSecret:           getenv("SIKA_JWT_SECRET"),
		StateDir:            orDefault(getenv("SIKA_STATE_DIR"), ".sika"),
		LogFormat:           getenv("SIKA_LOG_FORMAT"),
	}
	c.FilesDir = orDefault(getenv("SIKA_FILES_DIR"), filepath.Join(c.StateDir, "files"))
	c.httpAddrSet, c.publicURLSet = getenv("SIKA_HTTP_ADDR") != "", c.PublicURL != ""
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.HTTPAddr
	}
	var errs []string
	intVar := func(name string, def int, dst *int) {
		*dst = def
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Sprintf("%s=%q is not a positive integer", name, v))
				return
			}
			*dst = n
		}
	}
	intVar("SIKA_RATE_LIMIT_PER_MINUTE", 300, &c.RateLimitPerMinute)
	intVar("SIKA_PUBLIC_RATE_LIMIT_PER_MINUTE", 60, &c.PublicRateLimitPerMinute)
	intVar("SIKA_STREAMS_PER_MERCHANT", api.DefaultStreamsPerMerchant, &c.StreamsPerMerchant)
	intVar("SIKA_STREAMS_PER_KEY", api.DefaultStreamsPerKey, &c.StreamsPerKey)
	if v := getenv("SIKA_PAYMENT_ACCEPT_PER_SECOND"); v != "" {
		intVar("SIKA_PAYMENT_ACCEPT_PER_SECOND", 0, &c.PaymentAcceptPerSecond)
	}
	durationVar := func(name string, def, least time.Duration, dst *time.Duration) {
		*dst = def
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < least {
				errs = append(errs, fmt.Sprintf("%s=%q is not a duration of at least %s", name, v, least))
				return
			}
			*dst = d
		}
	}
	durationVar("SIKA_IDEMPOTENCY_TTL", 24*time.Hour, time.Minute, &c.IdempotencyTTL)
	durationVar("SIKA_STREAM_LIFETIME", api.DefaultStreamLifetime, 5*time.Second, &c.StreamLifetime)
	durationVar("SIKA_IDEMPOTENCY_LEASE", api.DefaultIdempotencyLease, 35*time.Second, &c.IdempotencyLease)
	durationVar("SIKA_PUSH_LIFETIME", 5*time.Minute, 5*time.Second, &c.PushLifetime)
	durationVar("SIKA_OUTBOX_SWEEP_INTERVAL", 5*time.Second, 100*time.Millisecond, &c.OutboxSweepInterval)
	durationVar("SIKA_RECHECK_INTERVAL", time.Minute, time.Second, &c.RecheckInterval)
	for _, part := range strings.Split(getenv("SIKA_TRUSTED_PROXIES"), ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			errs = append(errs, fmt.Sprintf("SIKA_TRUSTED_PROXIES: %q is not a CIDR range", part))
			continue
		}
		c.TrustedProxies = append(c.TrustedProxies, p)
	}
	if v := getenv("SIKA_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Sprintf("SIKA_LOG_LEVEL=%q is not debug, info, warn or error", v))
		}
	}
	switch v := getenv("SIKA_WEBHOOK_ALLOW_PRIVATE"); v {
	case "":
	case "true", "1":
		c.WebhookAllowPrivate = true
	case "false", "0":
	default:
		errs = append(errs, fmt.Sprintf("SIKA_WEBHOOK_ALLOW_PRIVATE=%q is not true or false", v))
	}
	c.webhookAllowPrivateSet = getenv("SIKA_WEBHOOK_ALLOW_PRIVATE") != ""
	for _, part := range strings.Split(getenv("SIKA_WEBHOOK_SCHEDULE"), ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("SIKA_WEBHOOK_SCHEDULE: %q is not a duration", part))
			continue
		}
		c.WebhookSchedule = append(c.WebhookSchedule, d)
	}
	if _, err := workflows.ClientCompression(c.TemporalCompression, ""); err != nil {
		errs = append(errs, err.Error())
	}
	if c.LogFormat != "" && c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Sprintf("SIKA_LOG_FORMAT=%q is not json or text", c.LogFormat))
	}
	if v := getenv(payloadcodec.EnvKeys); v != "" {
		ring, err := payloadcodec.ParseKeys(v)
		if err != nil {
			errs = append(errs, err.Error())
		}
		c.PayloadKeys = ring
	}
	live := &envReader{getenv: getenv}
	c.Live = loadLiveGateways(live)
	errs = append(errs, live.errs...)
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// logger builds the process logger; text by default in development, JSON otherwise.
func (c Config) logger(defaultFormat string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	format := orDefault(c.LogFormat, defaultFormat)
	if format == "json" {
		return slog.New(telemetry.LogHandler(slog.NewJSONHandler(os.Stderr, opts)))
	}
	return slog.New(telemetry.LogHandler(slog.NewTextHandler(os.Stderr, opts)))
}
