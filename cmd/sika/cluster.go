package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/payloadcodec"
)

// clusterStateDir is where `sika cluster` keeps its state, under SIKA_STATE_DIR: apart from
// `sika dev`'s, since the Temporal server and the dev server keep different stores.
const clusterStateDir = "cluster"

// runCluster runs the service as it runs in production, on one machine: Postgres, the Temporal
// server (persistence and visibility on Postgres), -apis `sika api` and -workers `sika worker`
// processes behind one address, and the sandbox operator in this process. It prints the one
// address, the Temporal address and the demo credentials like `sika dev`; Ctrl-C stops it all.
func runCluster(ctx context.Context, cfg Config, args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	apis := fs.Int("apis", 2, "API replicas behind the one address")
	workers := fs.Int("workers", 2, "worker replicas")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *apis < 1 || *workers < 1 {
		return fmt.Errorf("-apis and -workers must be at least 1")
	}
	logger := cfg.logger("text")
	slog.SetDefault(logger)
	stateDir, err := filepath.Abs(filepath.Join(cfg.StateDir, clusterStateDir))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	addr := "" // the one address: SIKA_HTTP_ADDR, else 8080 when free, else any free port
	if cfg.httpAddrSet {
		addr = cfg.HTTPAddr
	} else if devstack.PortFree(8080) {
		addr = "127.0.0.1:8080"
	}
	c, info, stop, err := startDemoCluster(ctx, cfg, bin, stateDir, addr, *apis, *workers, false, true, logger)
	if err != nil {
		return err
	}
	defer stop()
	ui := "the Temporal UI at " + c.TemporalUIURL
	if c.TemporalUIURL == "" {
		ui = "no Temporal UI (" + uiFailure(c.TemporalUIError) + "): bin/temporal --address " + c.TemporalAddress + " workflow list"
		info.TemporalUIURL = "(not running: see above)"
	}
	fmt.Printf("\nSika cluster: %d API replica(s) behind %s (the API below), %d worker(s), the Temporal server at %s,\n"+
		"%s; logs in %s\n",
		len(c.APIs), c.BaseURL, len(c.Workers), c.TemporalAddress, ui, stateDir)
	printDevInfo(info, filepath.Join(stateDir, "dev.json"))
	<-ctx.Done()
	logger.Info("stopping")
	return nil
}

// uiFailure is the first line of why the Temporal UI did not start (its output is in the log).
func uiFailure(err error) string {
	if err == nil {
		return "not started"
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg, _, _ = strings.Cut(msg, "; last output:")
	return msg
}

// startDemoCluster starts a devstack cluster of the sika binary bin with the sandbox operator served
// here, and the demo accounts of `sika dev` (written to <stateDir>/dev.json); its one address
// listens on addr ("": a free loopback port). With ui, it starts the Temporal UI too (optional: see
// devstack.ClusterOptions.TemporalUI), whose URL the API replicas link to unless cfg names
// another (SIKA_TEMPORAL_UI_URL), like `sika dev`. stop stops it all.
func startDemoCluster(ctx context.Context, cfg Config, bin, stateDir, addr string, apis, workers int, ephemeral, ui bool,
	logger *slog.Logger) (_ *devstack.Cluster, _ devInfo, stop func(), err error) {
	var info devInfo
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	jwt, err := devSecret(filepath.Join(stateDir, "jwt_secret"))
	if err != nil {
		return nil, info, stop, err
	}
	if cfg.SandboxSecret == "" {
		if cfg.SandboxSecret, err = devSecret(filepath.Join(stateDir, "sandbox_secret")); err != nil {
			return nil, info, stop, err
		}
	}
	if err := devPayloadKeys(&cfg, stateDir); err != nil {
		return nil, info, stop, err
	}
	sbln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, info, stop, fmt.Errorf("listen for the sandbox: %w", err)
	}
	sbCtx, cancelSandbox := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := serveSandbox(sbCtx, cfg, sbln, logger); err != nil {
			logger.Error("sandbox", "err", err)
		}
	}()
	stops = append(stops, func() { cancelSandbox(); wg.Wait() })
	sandboxURL := "http://" + sbln.Addr().String()
	root, err := devstack.FindRepoRoot(".")
	if err != nil {
		root = filepath.Dir(filepath.Dir(bin)) // <checkout>/bin/sika, run from elsewhere
	}
	var apiEnv []string
	if cfg.TemporalUIURL != "" { // an operator's own UI wins over the one the cluster starts
		apiEnv = append(apiEnv, "SIKA_TEMPORAL_UI_URL="+cfg.TemporalUIURL)
	}
	c, err := devstack.StartCluster(ctx, devstack.ClusterOptions{
		RepoRoot: root, StateDir: stateDir, Ephemeral: ephemeral, APIs: apis, Workers: workers, SikaBin: bin, Addr: addr, Logger: logger,
		Env: []string{"SIKA_SANDBOX_URL=" + sandboxURL, "SIKA_SANDBOX_SECRET=" + cfg.SandboxSecret, "SIKA_JWT_SECRET=" + jwt,
			payloadcodec.EnvKeys + "=" + cfg.PayloadKeys.Secret(),
			"SIKA_WEBHOOK_ALLOW_PRIVATE=" + strconv.FormatBool(cfg.WebhookAllowPrivate || !cfg.webhookAllowPrivateSet)},
		APIEnv: apiEnv, TemporalUI: ui,
	})
	if err != nil {
		return nil, info, stop, err
	}
	stops = append(stops, func() {
		if err := c.Stop(); err != nil {
			logger.Warn("stop the cluster", "err", err)
		}
	})
	cfg.DatabaseURL = c.DatabaseURL
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return nil, info, stop, err
	}
	defer st.Close()
	infoPath := filepath.Join(stateDir, "dev.json")
	if info, err = bootstrapDev(ctx, st, readDevInfo(infoPath)); err != nil {
		return nil, info, stop, err
	}
	info.BaseURL, info.SandboxURL, info.TemporalUIURL = c.BaseURL+"/api/v1", sandboxURL, c.TemporalUIURL
	if err := writeDevInfo(infoPath, info); err != nil {
		return nil, info, stop, err
	}
	return c, info, stop, nil
}
