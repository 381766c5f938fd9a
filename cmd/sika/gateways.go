package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
)

// newGatewayRouter builds the gateways this process can reach: the sandbox gateways for TEST
// and the configured LIVE operators, whose adapters keep what they must remember in memory.
func newGatewayRouter(cfg Config, memory gateway.Memory) (*gateway.Router, error) {
	if cfg.SandboxURL == "" || cfg.SandboxSecret == "" {
		return nil, errors.New("SIKA_SANDBOX_URL and SIKA_SANDBOX_SECRET must be set (TEST payments go to the sandbox)")
	}
	var gws []gateway.Gateway
	for _, g := range sandbox.DefaultGateways(cfg.SandboxSecret) {
		gws = append(gws, sandbox.NewClient(sandbox.ClientConfig{
			Name: g.Name, BaseURL: cfg.SandboxURL, APIKey: g.APIKey, CallbackSecret: g.CallbackSecret,
		}))
	}
	gws = append(gws, cfg.Live.gateways(memory, cfg.PublicURL)...)
	return gateway.NewRouter(gateway.HealthPolicy{}, gws...), nil
}

// serveSandbox runs the sandbox operator on a listener until ctx ends.
func serveSandbox(ctx context.Context, cfg Config, ln net.Listener, logger *slog.Logger) error {
	// 011 pays a minute after the push lifetime, so that it always ends after the deadline.
	sb := sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(cfg.SandboxSecret), LateAfter: cfg.PushLifetime + time.Minute,
		Logger: logger.With("component", "sandbox")})
	defer sb.Close()
	err := serveUntilDone(ctx, &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}, ln, "sandbox", 5*time.Second, logger)
	if ctx.Err() != nil {
		return nil // a request held past the grace (a 006 initiation) does not fail the shutdown
	}
	return err
}

func runSandboxCommand(ctx context.Context, cfg Config) error {
	logger := cfg.logger("json")
	if len(cfg.SandboxSecret) < 16 {
		return errors.New("SIKA_SANDBOX_SECRET must be set to at least 16 bytes (the service uses the same one)")
	}
	ln, err := net.Listen("tcp", cfg.SandboxAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.SandboxAddr, err)
	}
	return serveSandbox(ctx, cfg, ln, logger)
}
