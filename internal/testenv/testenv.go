// Package testenv gives a test package a fresh Postgres database and, on
// demand, a Temporal server, from its TestMain:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Run(m, func(env *testenv.Env) error {
//			return migrate(env.DatabaseURL) // optional setup
//		}))
//	}
//
// and in tests:
//
//	db := testenv.Current().DatabaseURL
//	addr, err := testenv.Current().TemporalAddress() // starts Temporal on first use
//
// The Postgres server is the one named by $SIKA_TEST_DATABASE_URL (an admin
// URL; `make test` starts one stack for the whole run), else an ephemeral
// server started for this test binary. Either way the package gets its own
// database, sika_test_<package>_<random>, created before the tests and
// dropped after them. Temporal is $SIKA_TEST_TEMPORAL_ADDRESS, else an
// in-memory dev server started with the repository's bin/temporal the first
// time TemporalAddress is called.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sikahq/sika/internal/devstack"
)

// setupTimeout bounds starting the servers (building the Temporal CLI, when
// bin/temporal is missing, takes minutes).
const setupTimeout = 15 * time.Minute

// Env is the infrastructure of one test binary.
type Env struct {
	// AdminURL is a superuser URL of the Postgres server (database postgres).
	AdminURL string
	// DatabaseName is the name of the fresh database of this test binary.
	DatabaseName string
	// DatabaseURL is the URL of the fresh database. No migrations are run on
	// it: do that in the setup function given to Run.
	DatabaseURL string

	logger *slog.Logger

	postgres *devstack.Postgres // nil when the server is not ours
	tempDir  string

	temporalOnce sync.Once
	temporalAddr string
	temporalErr  error
	temporal     *devstack.Temporal // nil when not started by us
}

var current *Env

// Current returns the Env set up by Run; it panics when Run is not in use.
func Current() *Env {
	if current == nil {
		panic("testenv: Current called without testenv.Run in TestMain")
	}
	return current
}

// Run sets up the Env, calls setup (if not nil) with it, runs the tests, tears
// the Env down and returns the exit code for os.Exit. A failing setup is
// reported on stderr and makes the code 1.
func Run(m *testing.M, setup func(*Env) error) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	env := &Env{logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))}
	defer env.close()
	if err := env.open(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	current = env
	if setup != nil {
		if err := setup(env); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: setup: %v\n", err)
			return 1
		}
	}
	return m.Run()
}

// open finds or starts the Postgres server and creates the database.
func (e *Env) open() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	e.AdminURL = os.Getenv(devstack.EnvTestDatabaseURL)
	if e.AdminURL == "" {
		dir, err := os.MkdirTemp("", "sika-testenv-")
		if err != nil {
			return err
		}
		e.tempDir = dir
		e.postgres, err = devstack.StartPostgres(ctx, devstack.PostgresOptions{
			DataDir:   filepath.Join(dir, "postgres"),
			Ephemeral: true,
			Logger:    e.logger,
		})
		if err != nil {
			return err
		}
		e.AdminURL = e.postgres.URL("postgres")
	}
	e.DatabaseName = databaseName(os.Args[0])
	var err error
	if e.DatabaseURL, err = devstack.DatabaseURL(e.AdminURL, e.DatabaseName); err != nil {
		return fmt.Errorf("%s: %w", devstack.EnvTestDatabaseURL, err)
	}
	return devstack.CreateDatabase(ctx, e.AdminURL, e.DatabaseName)
}

// close drops the database and stops what open and TemporalAddress started.
func (e *Env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if e.DatabaseName != "" {
		errs = append(errs, devstack.DropDatabase(ctx, e.AdminURL, e.DatabaseName))
	}
	if e.temporal != nil {
		errs = append(errs, e.temporal.Stop())
	}
	if e.postgres != nil {
		errs = append(errs, e.postgres.Stop())
	}
	if e.tempDir != "" {
		errs = append(errs, os.RemoveAll(e.tempDir))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: teardown: %v\n", err)
	}
}

// TemporalAddress returns the host:port of a Temporal frontend serving the
// "default" namespace: $SIKA_TEST_TEMPORAL_ADDRESS, else an in-memory dev
// server started on the first call (and stopped after the tests). It is safe
// for concurrent use; a failed start is not retried.
func (e *Env) TemporalAddress() (string, error) {
	e.temporalOnce.Do(func() {
		if e.temporalAddr = os.Getenv(devstack.EnvTestTemporalAddress); e.temporalAddr != "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		cli, err := devstack.EnsureTemporalCLI(ctx, "", e.logger)
		if err != nil {
			e.temporalErr = err
			return
		}
		e.temporal, e.temporalErr = devstack.StartTemporal(ctx, devstack.TemporalOptions{CLIPath: cli, Logger: e.logger})
		if e.temporalErr == nil {
			e.temporalAddr = e.temporal.Address()
		}
	})
	return e.temporalAddr, e.temporalErr
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// databaseName returns sika_test_<package>_<random> for the test binary at
// path (<package>.test), within Postgres's 63-byte limit for names.
func databaseName(path string) string {
	pkg := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".exe"), ".test")
	pkg = strings.Trim(notIdent.ReplaceAllString(strings.ToLower(pkg), "_"), "_")
	if len(pkg) > 36 {
		pkg = pkg[:36]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "sika_test_" + pkg + "_" + hex.EncodeToString(b)
}
