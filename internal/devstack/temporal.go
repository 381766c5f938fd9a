package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// TemporalCLIVersion is the version of the Temporal CLI (which embeds the dev
// server) that EnsureTemporalCLI builds into <repo>/bin/temporal.
const TemporalCLIVersion = "v1.5.1"

const temporalCLIPackage = "github.com/temporalio/cli/cmd/temporal"

// EnsureTemporalCLI returns the path of the Temporal CLI: $TEMPORAL_CLI if
// set; else <repoRoot>/bin/temporal if present; else it builds it there with
// `go install github.com/temporalio/cli/cmd/temporal@TemporalCLIVersion`
// (which takes several minutes), one build at a time even across
// processes. repoRoot "" means the module root above the working directory.
func EnsureTemporalCLI(ctx context.Context, repoRoot string, logger *slog.Logger) (path string, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("TEMPORAL_CLI=%s is not an executable file", p)
		}
		return p, nil
	}
	if repoRoot == "" {
		if repoRoot, err = FindRepoRoot("."); err != nil {
			return "", fmt.Errorf("find the temporal CLI: %w", err)
		}
	}
	binDir := filepath.Join(repoRoot, "bin")
	path = filepath.Join(binDir, "temporal")
	if isExecutable(path) {
		return path, nil
	}
	if err := buildTemporalCLI(ctx, binDir, path, logger); err != nil {
		return "", fmt.Errorf("build the temporal CLI: %w", err)
	}
	return path, nil
}

func buildTemporalCLI(ctx context.Context, binDir, path string, logger *slog.Logger) error {
	return buildGoTool(ctx, binDir, temporalCLIPackage+"@"+TemporalCLIVersion, path, logger)
}

// lockWait takes an exclusive flock on path, waiting for it as long as ctx
// allows; the returned function releases it.
func lockWait(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// TemporalOptions configures StartTemporal.
type TemporalOptions struct {
	// CLIPath is the Temporal CLI executable (see EnsureTemporalCLI). Required:
	// nothing is ever downloaded.
	CLIPath string
	// DBFile is the SQLite file holding the server's state; "" keeps it in
	// memory. With a file, the server's output goes to a .log file next to
	// it and the ports are remembered for the next run.
	DBFile string
	// Port is the frontend (gRPC) port on 127.0.0.1; 0 picks one (the one of
	// the last run on the same DBFile when it is free).
	Port int
	// UIPort is the Web UI port when UI is set; 0 picks one like Port.
	UIPort int
	// UI enables the Web UI.
	UI bool
	// Namespace is registered at start; "" means "default" (which the dev
	// server always registers).
	Namespace string
	// MetricsPort, when not 0, is where the server serves its Prometheus
	// metrics (http://127.0.0.1:<port>/metrics): persistence calls per
	// operation, matching, task queues (docs/performance.md reads them).
	MetricsPort int
	// Logger receives progress messages and, without a DBFile, the server's
	// output at debug level; nil means slog.Default().
	Logger *slog.Logger
}

// Temporal is a running Temporal dev server (`temporal server start-dev`), a
// child process started through the SDK's testsuite.StartDevServer.
type Temporal struct {
	server     *testsuite.DevServer
	pid        int // of the server process, 0 if not found
	address    string
	uiURL      string
	metricsURL string
	namespace  string
	logs       *logSink
	instance   *instanceFile
	logger     *slog.Logger

	stopOnce sync.Once
	stopErr  error
}

const (
	// temporalStartTimeout bounds the wait for the frontend to answer.
	temporalStartTimeout = 2 * time.Minute
	// temporalStopTimeout is how long Stop waits after SIGINT before it kills.
	temporalStopTimeout = 15 * time.Second
)

// StartTemporal starts a Temporal dev server listening on 127.0.0.1 and
// returns once its frontend answers.
//
// The server runs in our process group (the SDK starts it), so a Ctrl-C on
// the terminal reaches it too, and it is not killed if our process is.
func StartTemporal(ctx context.Context, opts TemporalOptions) (*Temporal, error) {
	t, err := startTemporal(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	return t, nil
}

func startTemporal(ctx context.Context, opts TemporalOptions) (_ *Temporal, err error) {
	if opts.CLIPath == "" {
		return nil, errors.New("no Temporal CLI given (see EnsureTemporalCLI)")
	}
	if !isExecutable(opts.CLIPath) {
		return nil, fmt.Errorf("temporal CLI %s is not an executable file", opts.CLIPath)
	}
	t := &Temporal{namespace: opts.Namespace, logger: opts.Logger}
	if t.namespace == "" {
		t.namespace = "default"
	}
	if t.logger == nil {
		t.logger = slog.Default()
	}
	defer func() {
		if err != nil {
			t.release()
		}
	}()
	var logPath string
	remembered := func(string) int { return 0 }
	if opts.DBFile != "" {
		if opts.DBFile, err = filepath.Abs(opts.DBFile); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(opts.DBFile), 0o755); err != nil {
			return nil, err
		}
		if t.instance, err = openInstanceFile(opts.DBFile + ".ports"); err != nil {
			return nil, err
		}
		remembered = t.instance.port
		if err := stopLeftoverTemporal(t.instance.data.ServerPID, opts.DBFile, t.logger); err != nil {
			return nil, err
		}
		logPath = strings.TrimSuffix(opts.DBFile, filepath.Ext(opts.DBFile)) + ".log"
	}
	port, err := choosePort(opts.Port, remembered("frontend"))
	if err != nil {
		return nil, err
	}
	uiPort := 0
	if opts.UI {
		if uiPort, err = choosePort(opts.UIPort, remembered("ui"), port); err != nil {
			return nil, err
		}
		t.uiURL = fmt.Sprintf("http://%s:%d", loopback, uiPort)
	}
	if t.logs, err = newLogSink(logPath, t.logger, "temporal"); err != nil {
		return nil, err
	}
	t.address = net.JoinHostPort(loopback, strconv.Itoa(port))
	if opts.MetricsPort != 0 {
		t.metricsURL = "http://" + net.JoinHostPort(loopback, strconv.Itoa(opts.MetricsPort)) + "/metrics"
	}

	start := time.Now()
	if err := t.run(ctx, opts, port, uiPort); err != nil {
		return nil, withTail(err, t.logs)
	}
	t.logger.Info("temporal is up", "address", t.address, "namespace", t.namespace, "ui", t.uiURL, "took", time.Since(start).Round(time.Millisecond))
	if t.instance != nil {
		if uiPort == 0 { // keep the UI port of a run with UI for the next one
			uiPort = remembered("ui")
		}
		if err := t.instance.save(map[string]int{"frontend": port, "ui": uiPort}, t.pid); err != nil {
			t.logger.Warn("could not remember the temporal ports", "err", err)
		}
	}
	return t, nil
}

// errTemporalExited is the cause of a start cancelled because the server
// process exited.
var errTemporalExited = errors.New("the temporal dev server exited while starting")

// LongPollExpiration is how long the dev server holds a poll that finds no task (see run).
const LongPollExpiration = 5 * time.Second

// run starts the server through the SDK. The SDK waits up to a minute for
// the frontend even when the process is long dead, and leaves the process
// running when it gives up; so the start is cancelled when the server's
// output ends (it has exited), and a failed start kills the process.
func (t *Temporal) run(ctx context.Context, opts TemporalOptions, port, uiPort int) error {
	ctx, cancelTimeout := context.WithTimeout(ctx, temporalStartTimeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-t.logs.ended():
			cancel(errTemporalExited)
		case <-ctx.Done():
		}
	}()

	devOpts := testsuite.DevServerOptions{
		ExistingPath: opts.CLIPath, // never download
		ClientOptions: &client.Options{
			HostPort:  t.address,
			Namespace: t.namespace,
			Logger:    sdklog.NewStructuredLogger(t.logger.With("source", "temporal-sdk")),
		},
		DBFilename: opts.DBFile,
		EnableUI:   opts.UI,
		LogLevel:   "warn",
		Stdout:     t.logs, // a pipe: see logSink
		Stderr:     t.logs,
		// One partition per task queue: a one-node server gains nothing from more, and a task
		// written to a partition no poller is on waits to be forwarded. In .ci/run a payment's
		// workflow task waited over 55 s on the dev server while the worker was polling.
		//
		// Long polls end after LongPollExpiration instead of the server's minute: the SDK's
		// workflow pollers all poll the sticky queue while its last answer reported a backlog,
		// and when that backlog is gone (taken, or timed out to the normal queue) they wait on
		// an empty sticky queue until their poll ends, while new payments' first tasks wait on the
		// normal queue. At the 60/s cap the dev server delivered nothing for over 30 s that way
		// (five sticky polls empty after a whole minute; docs/performance.md).
		//
		// Search attributes and namespaces are read from the server's caches, not from SQLite on
		// every read: the CLI turns the forced refresh on so that a search attribute created a
		// moment ago is usable at once, and that cost six SQLite reads of the cluster metadata
		// and the namespace per payment. Sika defines no search attribute; one an operator adds
		// is usable within the cache's minute (decision 0031).
		ExtraArgs: []string{
			"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
			"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
			"--dynamic-config-value", fmt.Sprintf("matching.longPollExpirationInterval=%q", LongPollExpiration.String()),
			"--dynamic-config-value", "system.forceSearchAttributesCacheRefreshOnRead=false",
		},
	}
	if opts.MetricsPort != 0 {
		devOpts.ExtraArgs = append(devOpts.ExtraArgs, "--metrics-port", strconv.Itoa(opts.MetricsPort))
	}
	if opts.DBFile != "" {
		// The server's state in a file (`sika dev`, sikachaos) is written through one SQLite
		// connection; in SQLite's default rollback-journal mode every commit costs several
		// fsyncs, and at 8 payments/s the dev server fell behind (workflow tasks waiting seconds,
		// sticky tasks timing out, payments PENDING for minutes; docs/performance.md). A
		// write-ahead log commits with one append and one fsync of the log, and synchronous=full
		// keeps that fsync: a commit survives a crash of the process or of the machine as before.
		devOpts.ExtraArgs = append(devOpts.ExtraArgs, "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=full")
	}
	if opts.UI {
		devOpts.UIPort = strconv.Itoa(uiPort) // the SDK leaves it to the CLI: frontend port + 1000
	}
	server, err := testsuite.StartDevServer(ctx, devOpts)
	// The SDK does not tell the pid; the process is ours, running the CLI
	// with our port (a process that has exited shows no arguments).
	t.pid = findChildPID(opts.CLIPath, "--port", strconv.Itoa(port))
	if err == nil {
		t.server = server
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, errTemporalExited) {
		err = cause
	}
	if t.pid != 0 { // the SDK forgot its process: kill and reap it
		_ = syscall.Kill(t.pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(t.pid, &ws, 0, nil)
	}
	return err
}

// stopLeftoverTemporal stops the dev server of a killed run of ours that is
// still running on dbFile (our lock on the instance file rules out a live
// sika process), so that two servers never share the database.
func stopLeftoverTemporal(pid int, dbFile string, logger *slog.Logger) error {
	if pid <= 0 || processName(pid) == "" {
		return nil
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), "\x00--db-filename\x00"+dbFile+"\x00") {
		return nil // the pid now belongs to something else
	}
	logger.Warn("stopping a temporal dev server left running on the database by an earlier run", "pid", pid, "db", dbFile)
	_ = syscall.Kill(pid, syscall.SIGINT)
	if waitGone(pid, temporalStopTimeout) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("the temporal dev server left running on %s (pid %d) does not die", dbFile, pid)
}

// findChildPID returns the pid of a child process of ours running exe with
// args among its arguments, or 0.
func findChildPID(exe string, args ...string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	me := os.Getpid()
	want := "\x00" + strings.Join(args, "\x00") + "\x00"
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ..."
		end := strings.LastIndexByte(string(stat), ')')
		if end < 0 {
			continue
		}
		if fields := strings.Fields(string(stat[end+1:])); len(fields) < 2 || fields[1] != strconv.Itoa(me) {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		argv := string(cmdline)
		if strings.HasPrefix(argv, exe+"\x00") && strings.Contains(argv, want) {
			return pid
		}
	}
	return 0
}

// Address returns the frontend address (host:port) for SDK clients.
func (t *Temporal) Address() string { return t.address }

// Namespace returns the namespace registered at start.
func (t *Temporal) Namespace() string { return t.namespace }

// UIURL returns the Web UI URL, or "" when the UI is off.
func (t *Temporal) UIURL() string { return t.uiURL }

// MetricsURL is where the server serves its Prometheus metrics (see PersistenceCalls), "" when
// TemporalOptions.MetricsPort was 0.
func (t *Temporal) MetricsURL() string { return t.metricsURL }

// Stop shuts the server down (SIGINT), killing it when it has not stopped
// after 15 s. Calling Stop again returns the first result.
func (t *Temporal) Stop() error {
	t.stopOnce.Do(func() {
		t.server.Client().Close()
		done := make(chan error, 1)
		go func() { done <- t.server.Stop() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(temporalStopTimeout):
			if t.pid != 0 {
				_ = syscall.Kill(t.pid, syscall.SIGKILL)
			}
			<-done
			err = fmt.Errorf("did not stop within %s after SIGINT; killed it", temporalStopTimeout)
		}
		if err != nil && !diedOf(err, syscall.SIGINT) {
			t.stopErr = fmt.Errorf("stop temporal: %w", withTail(err, t.logs))
		}
		t.release()
		t.logger.Info("temporal stopped", "address", t.address)
	})
	return t.stopErr
}

// release frees what a stopped (or never started) server holds.
func (t *Temporal) release() {
	if t.logs != nil {
		_ = t.logs.Close()
	}
	if t.instance != nil {
		_ = t.instance.Close()
	}
}
