package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
)

// devInfo is what `sika dev` prints and writes to .sika/dev.json.
type devInfo struct {
	BaseURL       string         `json:"base_url"`
	TemporalUIURL string         `json:"temporal_ui_url"`
	SandboxURL    string         `json:"sandbox_url"`
	Admin         devCredentials `json:"admin"`
	// Support is a second staff member (SUPPORT_AGENT): money decisions take two people, one
	// proposing, another approving (docs/security.md).
	Support  devCredentials `json:"support"`
	Merchant devMerchant    `json:"merchant"`
}

type devCredentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type devMerchant struct {
	ID string `json:"id"`
	devCredentials
	APIKeys devKeys `json:"api_keys"`
}

type devKeys struct {
	TestBoth   string `json:"test_both"`
	TestPayin  string `json:"test_payin"`
	TestPayout string `json:"test_payout"`
	LiveBoth   string `json:"live_both"`
}

const (
	devAdminEmail    = "admin@sika.local"
	devSupportEmail  = "support@sika.local"
	devMerchantEmail = "merchant@sika.local"
	devDatabase      = "sika"
)

// runDev runs the whole service on its embedded default: Postgres and the Temporal dev server
// are started from the machine unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere; then
// migrations, seeds, the demo accounts, the API and the worker. Ctrl-C stops all of it.
func runDev(ctx context.Context, cfg Config) (err error) {
	logger := cfg.logger("text")
	slog.SetDefault(logger)
	stopTracing, err := startTracing(ctx, "sika", logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	stateDir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if cfg.JWTSecret == "" {
		if cfg.JWTSecret, err = devSecret(filepath.Join(stateDir, "jwt_secret")); err != nil {
			return err
		}
	}
	if !cfg.webhookAllowPrivateSet {
		cfg.WebhookAllowPrivate = true // a developer's receiver runs on localhost
	}
	if cfg.SandboxSecret == "" {
		if cfg.SandboxSecret, err = devSecret(filepath.Join(stateDir, "sandbox_secret")); err != nil {
			return err
		}
	}
	if err := devPayloadKeys(&cfg, stateDir); err != nil {
		return err
	}
	var stops []func() error
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if stopErr := stops[i](); stopErr != nil {
				logger.Warn("stop", "err", stopErr)
			}
		}
	}()
	// Listen first: the Temporal UI is told where the codec server is (the public URL).
	ln, err := devListener(&cfg)
	if err != nil {
		return err
	}
	stops = append(stops, func() error { ln.Close(); return nil })
	temporalUI := ""
	if cfg.DatabaseURL == "" {
		pg, err := devstack.StartPostgres(ctx, devstack.PostgresOptions{DataDir: filepath.Join(stateDir, "postgres"), Logger: logger})
		if err != nil {
			return err
		}
		stops = append(stops, pg.Stop)
		if err := pg.CreateDatabase(ctx, devDatabase); err != nil {
			return err
		}
		cfg.DatabaseURL = pg.URL(devDatabase)
	}
	if cfg.TemporalAddress == "" {
		root, err := devstack.FindRepoRoot(".")
		if err != nil {
			root, _ = os.Getwd()
		}
		cli, err := devstack.EnsureTemporalCLI(ctx, root, logger)
		if err != nil {
			return err
		}
		t, err := devstack.StartTemporal(ctx, devstack.TemporalOptions{
			CLIPath: cli, DBFile: filepath.Join(stateDir, "temporal.db"), Logger: logger,
		})
		if err != nil {
			return err
		}
		stops = append(stops, t.Stop)
		cfg.TemporalAddress = t.Address()
		// The UI server of its own (not the dev server's): only it can call the codec server
		// with the browser's credentials, the console's session.
		if ui, err := startDevTemporalUI(ctx, cfg, root, stateDir, logger); err != nil {
			logger.Warn("running without the Temporal UI", "err", err)
		} else {
			stops = append(stops, ui.Stop)
			temporalUI = ui.URL
			if cfg.TemporalUIURL == "" {
				cfg.TemporalUIURL = temporalUI
			}
		}
	}

	st, err := serveStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	stops = append(stops, func() error { st.Close(); return nil })
	// One process, one registry: the API's /metrics serves the worker's metrics too.
	reg := prometheus.NewRegistry()
	tc, err := dialTemporal(ctx, cfg, logger, reg)
	if err != nil {
		return err
	}
	stops = append(stops, func() error { tc.Close(); return nil })

	infoPath := filepath.Join(stateDir, "dev.json")
	info, err := bootstrapDev(ctx, st, readDevInfo(infoPath))
	if err != nil {
		return err
	}
	info.BaseURL = cfg.PublicURL + "/api/v1"
	info.TemporalUIURL = temporalUI

	var wg sync.WaitGroup
	errc := make(chan error, 3)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.SandboxURL == "" {
		sbln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("listen for the sandbox: %w", err)
		}
		cfg.SandboxURL = "http://" + sbln.Addr().String()
		wg.Add(1)
		go func() { defer wg.Done(); errc <- serveSandbox(runCtx, cfg, sbln, logger) }()
	}
	info.SandboxURL = cfg.SandboxURL
	if err := writeDevInfo(infoPath, info); err != nil {
		return err
	}
	wg.Add(2)
	go func() { defer wg.Done(); errc <- serveAPI(runCtx, cfg, st, tc, reg, ln, logger) }()
	go func() { defer wg.Done(); errc <- runWorker(runCtx, cfg, st, tc, reg, logger) }()
	printDevInfo(info, infoPath)

	select {
	case <-ctx.Done():
		logger.Info("stopping")
	case err = <-errc:
		logger.Error("a component stopped", "err", err)
	}
	cancel()
	wg.Wait()
	return err
}

// startDevTemporalUI starts the Temporal UI server (bin/temporal-ui-server, built when missing)
// against the dev server, decoding payloads through the console's codec server.
func startDevTemporalUI(ctx context.Context, cfg Config, root, stateDir string, logger *slog.Logger) (*devstack.TemporalUI, error) {
	bin, err := devstack.EnsureTemporalUI(ctx, root, logger)
	if err != nil {
		return nil, err
	}
	return devstack.StartTemporalUI(ctx, devstack.TemporalUIOptions{Bin: bin, TemporalAddress: cfg.TemporalAddress,
		Namespace: cfg.TemporalNamespace, Dir: filepath.Join(stateDir, "temporal-ui"), LogPath: filepath.Join(stateDir, "temporal-ui.log"),
		Logger: logger, CodecEndpoint: cfg.PublicURL + devstack.CodecEndpointPath})
}

// devListener listens on SIKA_HTTP_ADDR; when that is the default and busy, it takes a free
// loopback port instead so that `make run` works next to another service. The public URL
// follows the port actually taken unless SIKA_PUBLIC_URL was set.
func devListener(cfg *Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil && !cfg.httpAddrSet {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	cfg.HTTPAddr = ln.Addr().String()
	if !cfg.publicURLSet {
		cfg.PublicURL = "http://" + cfg.HTTPAddr
	}
	return ln, nil
}

// devSecret reads a secret kept in the state directory, creating it on first use.
// devPayloadKeys gives cfg the key ring kept in <stateDir>/payload_keys (made on first use)
// unless SIKA_PAYLOAD_KEYS set one: the Temporal histories of the dev state outlive a process.
func devPayloadKeys(cfg *Config, stateDir string) error {
	if cfg.PayloadKeys != nil {
		return nil
	}
	keys, err := payloadcodec.LoadOrCreate(filepath.Join(stateDir, "payload_keys"))
	if err != nil {
		return err
	}
	cfg.PayloadKeys, err = payloadcodec.ParseKeys(keys)
	return err
}

func devSecret(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return string(b), nil
	}
	secret, err := sika.RandomBase62(48)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return secret, nil
}

func readDevInfo(path string) devInfo {
	var info devInfo
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &info)
	}
	return info
}

func writeDevInfo(path string, info devInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// bootstrapDev makes sure the staff member and the active demo merchant exist, with API keys of
// every scope and the loopback addresses whitelisted. What the previous run wrote in dev.json is
// kept when it still works, so a second run prints the same credentials.
func bootstrapDev(ctx context.Context, st *store.Store, prev devInfo) (devInfo, error) {
	var info devInfo
	var err error
	info.Admin.Email = devAdminEmail
	if info.Admin.Password, _, err = bootstrapMember(ctx, st, devAdminEmail, "Sika Admin", sika.StaffAdmin, prev.Admin.Password); err != nil {
		return info, err
	}
	info.Support.Email = devSupportEmail
	if info.Support.Password, _, err = bootstrapMember(ctx, st, devSupportEmail, "Sika Support", sika.StaffSupportAgent, prev.Support.Password); err != nil {
		return info, err
	}
	info.Merchant.Email = devMerchantEmail
	if info.Merchant.Password, _, err = bootstrapMember(ctx, st, devMerchantEmail, "Demo Merchant", "", prev.Merchant.Password); err != nil {
		return info, err
	}
	member, _, err := st.MemberByEmail(ctx, devMerchantEmail)
	if err != nil {
		return info, err
	}
	merchants, err := st.MemberMerchants(ctx, member.ID)
	if err != nil {
		return info, err
	}
	var merchant sika.Merchant
	if len(merchants) > 0 {
		merchant = merchants[0].Merchant
	} else if merchant, err = st.CreateMerchant(ctx, member.ID, store.NewMerchant{Name: "Sika Demo Shop", Country: "BJ"}); err != nil {
		return info, err
	}
	if err := st.SetMerchantStatus(ctx, merchant.ID, sika.KYCVerified, true); err != nil {
		return info, err
	}
	info.Merchant.ID = merchant.ID.String()
	keys := []struct {
		dst   *string
		prev  string
		env   sika.Environment
		scope sika.Scope
		name  string
	}{
		{&info.Merchant.APIKeys.TestBoth, prev.Merchant.APIKeys.TestBoth, sika.EnvironmentTest, sika.ScopeBoth, "dev test both"},
		{&info.Merchant.APIKeys.TestPayin, prev.Merchant.APIKeys.TestPayin, sika.EnvironmentTest, sika.ScopePayin, "dev test payin"},
		{&info.Merchant.APIKeys.TestPayout, prev.Merchant.APIKeys.TestPayout, sika.EnvironmentTest, sika.ScopePayout, "dev test payout"},
		{&info.Merchant.APIKeys.LiveBoth, prev.Merchant.APIKeys.LiveBoth, sika.EnvironmentLive, sika.ScopeBoth, "dev live both"},
	}
	for _, k := range keys {
		if keyStillValid(ctx, st, k.prev, merchant, k.env, k.scope) {
			*k.dst = k.prev
			continue
		}
		created, err := st.CreateAPIKey(ctx, merchant.ID, k.env, k.scope, k.name, &member.ID)
		if err != nil {
			return info, err
		}
		*k.dst = created.Secret
	}
	for _, env := range []sika.Environment{sika.EnvironmentTest, sika.EnvironmentLive} {
		for _, ip := range []string{"127.0.0.1/32", "::1/128"} {
			_, err := st.AddIPWhitelistEntry(ctx, merchant.ID, env, netip.MustParsePrefix(ip), "local development")
			if err != nil && !errors.Is(err, store.ErrIPAlreadyListed) {
				return info, err
			}
		}
	}
	return info, nil
}

func keyStillValid(ctx context.Context, st *store.Store, secret string, m sika.Merchant, env sika.Environment, scope sika.Scope) bool {
	if secret == "" {
		return false
	}
	key, owner, err := st.APIKeyWithMerchant(ctx, sika.HashAPIKey(secret))
	return err == nil && key.RevokedAt == nil && owner.ID == m.ID && key.Environment == env && key.Scope == scope
}

func printDevInfo(info devInfo, path string) {
	fmt.Printf(`
Sika is running.

  API            %s
  API docs       %s
  Dashboard      %s   (log in with the merchant login below)
  Console        %s   (support console: log in with the staff login below)
  Temporal UI    %s
  Sandbox        %s   (TEST operator: outcome by the number's last 3 digits)

  Staff login    %s / %s   (ADMIN)
  Support login  %s / %s   (SUPPORT_AGENT: proposes what an approver approves)
  Merchant login %s / %s   (merchant %s)
  TEST key BOTH  %s
  TEST key PAYIN %s
  TEST key PAYOUT %s
  LIVE key BOTH  %s

  Try:  curl -H "Authorization: Bearer %s" %s/networks/

These are also in %s. Press Ctrl-C to stop everything.
`, info.BaseURL, info.BaseURL+"/docs/", strings.TrimSuffix(info.BaseURL, "/api/v1")+"/dashboard/",
		strings.TrimSuffix(info.BaseURL, "/api/v1")+"/console/", orDefault(info.TemporalUIURL, "(external Temporal)"), info.SandboxURL,
		info.Admin.Email, info.Admin.Password, info.Support.Email, info.Support.Password, info.Merchant.Email, info.Merchant.Password, info.Merchant.ID,
		info.Merchant.APIKeys.TestBoth, info.Merchant.APIKeys.TestPayin, info.Merchant.APIKeys.TestPayout,
		info.Merchant.APIKeys.LiveBoth, info.Merchant.APIKeys.TestBoth, info.BaseURL, path)
}
