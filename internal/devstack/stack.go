// Package devstack starts the project's private infrastructure without
// Docker: a Postgres server from the machine's Postgres server binaries and
// the Temporal dev server from the project's own ./bin/temporal. Both listen
// on 127.0.0.1 only and run as child processes of the caller.
//
// `sika dev` uses it with long-lived state under .sika/, `make test` starts
// one shared stack for a whole `go test ./...` run, and test packages use it
// through internal/testenv.
//
// StartCluster starts the production shape instead: the Temporal server
// (./bin/temporal-server) with its persistence and visibility on Postgres, and
// API and worker replicas of sika behind one address (`sika cluster`,
// `sikachaos -cluster`, the benchmarks' scaling runs).
package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// The environment variables through which a running stack is handed to test
// binaries (see internal/testenv).
const (
	// EnvTestDatabaseURL holds an admin URL of a running Postgres server.
	EnvTestDatabaseURL = "SIKA_TEST_DATABASE_URL"
	// EnvTestTemporalAddress holds the host:port of a running Temporal
	// frontend.
	EnvTestTemporalAddress = "SIKA_TEST_TEMPORAL_ADDRESS"
)

// StackOptions configures StartStack.
type StackOptions struct {
	// RepoRoot is the repository root, where bin/temporal lives (or is built);
	// "" means the module root above the working directory.
	RepoRoot string
	// StateDir holds the servers' state: postgres/ (the data directory),
	// postgres.log, temporal.db, temporal.log and their .ports files. ""
	// (only with Ephemeral) means a temporary directory removed by Stop.
	StateDir string
	// Ephemeral runs Postgres without durability and Temporal in memory: for
	// tests.
	Ephemeral bool
	// TemporalFile keeps Temporal's state in temporal.db in the state directory
	// even when Ephemeral, as `sika dev` does: for measuring and guarding the
	// embedded default's persistence.
	TemporalFile bool
	// TemporalUI enables the Temporal Web UI.
	TemporalUI bool
	// TemporalMetricsPort, when not 0, serves the dev server's Prometheus metrics there.
	TemporalMetricsPort int
	// PostgresSettings are given to Postgres (PostgresOptions.Settings).
	PostgresSettings []string
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// Stack is a running Postgres and Temporal dev server.
type Stack struct {
	Postgres *Postgres
	Temporal *Temporal

	stateDir    string
	removeState bool
}

// StartStack starts Postgres, then Temporal; when Temporal fails, Postgres
// is stopped again.
func StartStack(ctx context.Context, opts StackOptions) (_ *Stack, err error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Stack{stateDir: opts.StateDir}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if s.stateDir == "" {
		if !opts.Ephemeral {
			return nil, errors.New("start stack: a state directory is needed unless ephemeral")
		}
		if s.stateDir, err = os.MkdirTemp("", "sika-stack-"); err != nil {
			return nil, fmt.Errorf("start stack: %w", err)
		}
		s.removeState = true
	} else if err := os.MkdirAll(s.stateDir, 0o755); err != nil {
		return nil, fmt.Errorf("start stack: %w", err)
	}

	s.Postgres, err = StartPostgres(ctx, PostgresOptions{
		DataDir:   filepath.Join(s.stateDir, "postgres"),
		Ephemeral: opts.Ephemeral,
		Settings:  opts.PostgresSettings,
		Logger:    logger,
	})
	if err != nil {
		return nil, err
	}
	cli, err := EnsureTemporalCLI(ctx, opts.RepoRoot, logger)
	if err != nil {
		return nil, err
	}
	topts := TemporalOptions{CLIPath: cli, UI: opts.TemporalUI, MetricsPort: opts.TemporalMetricsPort, Logger: logger}
	if !opts.Ephemeral || opts.TemporalFile {
		topts.DBFile = filepath.Join(s.stateDir, "temporal.db")
	}
	if s.Temporal, err = StartTemporal(ctx, topts); err != nil {
		return nil, err
	}
	return s, nil
}

// Environ returns the environment variables that hand this stack to test
// binaries: an admin Postgres URL and the Temporal address.
func (s *Stack) Environ() []string {
	return []string{
		EnvTestDatabaseURL + "=" + s.Postgres.URL("postgres"),
		EnvTestTemporalAddress + "=" + s.Temporal.Address(),
	}
}

// Stop stops Temporal, then Postgres, and removes a temporary state
// directory.
func (s *Stack) Stop() error {
	var errs []error
	if s.Temporal != nil {
		errs = append(errs, s.Temporal.Stop())
	}
	if s.Postgres != nil {
		errs = append(errs, s.Postgres.Stop())
	}
	if s.removeState {
		errs = append(errs, os.RemoveAll(s.stateDir))
	}
	return errors.Join(errs...)
}

// FindRepoRoot returns the nearest directory at or above dir holding a
// go.mod file.
func FindRepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("no go.mod at or above %s", dir)
		}
	}
}
