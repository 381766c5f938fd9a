package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// timed runs f and logs how long it took.
func timed[T any](t *testing.T, what string, f func() (T, error)) T {
	t.Helper()
	start := time.Now()
	v, err := f()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Logf("%s took %s", what, time.Since(start).Round(time.Millisecond))
	return v
}

func startPostgresT(t *testing.T, what string, opts PostgresOptions) *Postgres {
	t.Helper()
	pg := timed(t, what, func() (*Postgres, error) { return StartPostgres(testContext(t), opts) })
	t.Cleanup(func() { _ = pg.Stop() })
	return pg
}

// connect opens a connection closed at the end of the test.
func connect(t *testing.T, dsn string) (*pgx.Conn, context.Context) {
	t.Helper()
	ctx := testContext(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, ctx
}

func queryInt(t *testing.T, dsn, sql string) int {
	t.Helper()
	conn, ctx := connect(t, dsn)
	var n int
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func execSQL(t *testing.T, dsn string, sqls ...string) {
	t.Helper()
	conn, ctx := connect(t, dsn)
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

func TestPostgresDataSurvivesRestart(t *testing.T) {
	ctx := testContext(t)
	opts := PostgresOptions{DataDir: filepath.Join(t.TempDir(), "pg"), Logger: testLogger()}
	pg := startPostgresT(t, "first start (with initdb)", opts)

	for range 2 { // idempotent
		if err := pg.CreateDatabase(ctx, "app"); err != nil {
			t.Fatal(err)
		}
	}
	execSQL(t, pg.URL("app"), "CREATE TABLE t (n int)", "INSERT INTO t VALUES (41), (1)")
	if _, err := StartPostgres(ctx, opts); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second server on the same data dir: got %v, want an 'in use' error", err)
	}
	if got := queryInt(t, pg.URL("postgres"), "SELECT (current_setting('fsync') = 'on')::int"); got != 1 {
		t.Errorf("fsync = %d on a non-ephemeral server", got)
	}
	port := pg.Port()
	timed(t, "stop", func() (any, error) { return nil, pg.Stop() })
	if err := pg.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	pg = startPostgresT(t, "second start (reusing the data dir)", opts)
	if pg.Port() != port {
		t.Errorf("port changed from %d to %d across restarts", port, pg.Port())
	}
	if got := queryInt(t, pg.URL("app"), "SELECT sum(n) FROM t"); got != 42 {
		t.Errorf("sum after restart = %d, want 42", got)
	}
	for range 2 { // idempotent
		if err := pg.DropDatabase(ctx, "app"); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryInt(t, pg.URL("postgres"), "SELECT count(*)::int FROM pg_database WHERE datname = 'app'"); got != 0 {
		t.Errorf("database app still there after DropDatabase")
	}
}

func TestPostgresLeftoversOfAKilledRun(t *testing.T) {
	opts := PostgresOptions{DataDir: filepath.Join(t.TempDir(), "pg"), Ephemeral: true, Logger: testLogger()}
	orphan := startPostgresT(t, "start", opts)
	if got := queryInt(t, orphan.URL("postgres"), "SELECT (current_setting('fsync') = 'on')::int"); got != 0 {
		t.Errorf("fsync = %d on an ephemeral server", got)
	}
	// As if our process had been killed: the lock goes, the server stays.
	_ = orphan.instance.Close()

	pg := startPostgresT(t, "start over a live postmaster", opts)
	select {
	case <-orphan.proc.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the left-over postmaster was not stopped")
	}
	queryInt(t, pg.URL("postgres"), "SELECT 1")
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}

	// A postmaster.pid naming a live process that is not a postgres.
	pidFile := filepath.Join(opts.DataDir, "postmaster.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"+opts.DataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg = startPostgresT(t, "start over a stale postmaster.pid", opts)
	queryInt(t, pg.URL("postgres"), "SELECT 1")
}

func temporalCLI(t *testing.T) string {
	t.Helper()
	return timed(t, "EnsureTemporalCLI", func() (string, error) { return EnsureTemporalCLI(testContext(t), "", testLogger()) })
}

func startTemporalT(t *testing.T, what string, opts TemporalOptions) *Temporal {
	t.Helper()
	tmp := timed(t, what, func() (*Temporal, error) { return StartTemporal(testContext(t), opts) })
	t.Cleanup(func() { _ = tmp.Stop() })
	return tmp
}

func dialTemporal(t *testing.T, address, namespace string) client.Client {
	t.Helper()
	c, err := client.DialContext(testContext(t), client.Options{
		HostPort:  address,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(testLogger()),
	})
	if err != nil {
		t.Fatalf("dial temporal at %s: %v", address, err)
	}
	t.Cleanup(c.Close)
	if _, err := c.CheckHealth(testContext(t), &client.CheckHealthRequest{}); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	return c
}

func TestTemporalInMemory(t *testing.T) {
	metricsPort, err := choosePort(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tmp := startTemporalT(t, "start temporal in memory", TemporalOptions{CLIPath: temporalCLI(t), Logger: testLogger(), MetricsPort: metricsPort})
	if tmp.UIURL() != "" {
		t.Errorf("UIURL = %q without UI", tmp.UIURL())
	}
	if !strings.HasPrefix(tmp.Address(), "127.0.0.1:") {
		t.Errorf("Address = %q, want 127.0.0.1:<port>", tmp.Address())
	}
	c := dialTemporal(t, tmp.Address(), "default")
	// A poll that finds no task comes back empty after LongPollExpiration, not the server's
	// minute: a worker's pollers left on an emptied sticky queue are back on the normal queue
	// within it (see run).
	began := time.Now()
	resp, err := c.WorkflowService().PollWorkflowTaskQueue(testContext(t), &workflowservice.PollWorkflowTaskQueueRequest{
		Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: "nothing-here", Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		Identity: "devstack-test",
	})
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if took := time.Since(began); len(resp.GetTaskToken()) != 0 || took < LongPollExpiration/2 || took > LongPollExpiration+10*time.Second {
		t.Errorf("an empty poll came back after %s with a task %v; want empty after about %s", took, len(resp.GetTaskToken()) != 0, LongPollExpiration)
	}
	// Starting and signalling workflows reads the search attributes and the namespace from the
	// server's caches, not from SQLite each time (decision 0031): the CLI's forced refresh read
	// the cluster metadata about five times per payment.
	metricsURL := tmp.MetricsURL()
	before := persistenceCallsT(t, metricsURL)
	const starts = 20
	for i := range starts {
		id := "cached-" + strconv.Itoa(i)
		if _, err := c.ExecuteWorkflow(testContext(t), client.StartWorkflowOptions{ID: id, TaskQueue: "nobody"}, "SomeWorkflow"); err != nil {
			t.Fatal(err)
		}
		if err := c.SignalWorkflow(testContext(t), id, "", "poke", nil); err != nil {
			t.Fatal(err)
		}
	}
	// The server's metrics reach its endpoint on the reporter's next tick.
	after := persistenceCallsT(t, metricsURL)
	for deadline := time.Now().Add(15 * time.Second); after["CreateWorkflowExecution"]-before["CreateWorkflowExecution"] < starts; after = persistenceCallsT(t, metricsURL) {
		if time.Now().After(deadline) {
			t.Fatalf("the metrics counted %v workflow creations for %d starts: not the server's persistence calls?", after["CreateWorkflowExecution"]-before["CreateWorkflowExecution"], starts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, op := range []string{"GetCurrentClusterMetadata", "GetNamespace"} {
		if n := after[op] - before[op]; n >= starts/2 {
			t.Errorf("%d starts and signals read %s %v times from persistence; want the cache", starts, op, n)
		}
	}
	c.Close()
	timed(t, "stop temporal", func() (any, error) { return nil, tmp.Stop() })
	if err := tmp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if processName(tmp.pid) != "" {
		t.Errorf("temporal (pid %d) still running after Stop", tmp.pid)
	}
}

func TestTemporalPersistentWithUI(t *testing.T) {
	ctx := testContext(t)
	opts := TemporalOptions{
		CLIPath:   temporalCLI(t),
		DBFile:    filepath.Join(t.TempDir(), "temporal.db"),
		UI:        true,
		Namespace: "sika",
		Logger:    testLogger(),
	}
	tmp := startTemporalT(t, "start temporal with a db file and UI", opts)
	resp, err := http.Get(tmp.UIURL())
	if err != nil {
		t.Fatalf("GET %s: %v", tmp.UIURL(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", tmp.UIURL(), resp.Status)
	}
	c := dialTemporal(t, tmp.Address(), "sika")
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "survives-restart", TaskQueue: "nobody"}, "SomeWorkflow")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	address, ui := tmp.Address(), tmp.UIURL()
	if err := tmp.Stop(); err != nil {
		t.Fatal(err)
	}

	tmp = startTemporalT(t, "restart temporal on the db file", opts)
	if tmp.Address() != address || tmp.UIURL() != ui {
		t.Errorf("URLs changed across restarts: %s %s, then %s %s", address, ui, tmp.Address(), tmp.UIURL())
	}
	c = dialTemporal(t, tmp.Address(), "sika")
	if _, err := c.DescribeWorkflowExecution(ctx, "survives-restart", run.GetRunID()); err != nil {
		t.Errorf("the workflow started before the restart: %v", err)
	}
	if _, err := os.Stat(strings.TrimSuffix(opts.DBFile, ".db") + ".log"); err != nil {
		t.Errorf("no temporal log file: %v", err)
	}
}

func TestStackEphemeral(t *testing.T) {
	s := timed(t, "start an ephemeral stack", func() (*Stack, error) {
		return StartStack(testContext(t), StackOptions{Ephemeral: true, Logger: testLogger()})
	})
	t.Cleanup(func() { _ = s.Stop() })
	env := s.Environ()
	if len(env) != 2 || !strings.HasPrefix(env[0], EnvTestDatabaseURL+"=postgres://") {
		t.Errorf("Environ = %q", env)
	}
	queryInt(t, s.Postgres.URL("postgres"), "SELECT 1")
	dialTemporal(t, s.Temporal.Address(), "default").Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.stateDir); !os.IsNotExist(err) {
		t.Errorf("state dir %s left behind: %v", s.stateDir, err)
	}
}

func TestTemporalThatCannotStartFailsFast(t *testing.T) {
	dir := t.TempDir() // a directory is no SQLite file
	start := time.Now()
	_, err := StartTemporal(testContext(t), TemporalOptions{CLIPath: temporalCLI(t), DBFile: dir, Logger: testLogger()})
	if err == nil {
		t.Fatal("StartTemporal on a directory as database file: no error")
	}
	t.Logf("error after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, errTemporalExited) {
		t.Errorf("error does not say that the server exited: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %s to notice", time.Since(start))
	}
}

// TestTemporalUI starts the Temporal UI server (bin/temporal-ui-server, a prerequisite of make
// test, built here when missing) against a Temporal dev server: it serves the UI, its API lists
// the dev server's namespace and shows a workflow started there, and Stop ends the process.
func TestTemporalUI(t *testing.T) {
	ctx := testContext(t)
	tmp := startTemporalT(t, "start temporal in memory", TemporalOptions{CLIPath: temporalCLI(t), Namespace: "sika", Logger: testLogger()})
	bin := timed(t, "EnsureTemporalUI", func() (string, error) { return EnsureTemporalUI(ctx, "", testLogger()) })
	dir := t.TempDir()
	ui := timed(t, "start the temporal UI", func() (*TemporalUI, error) {
		return StartTemporalUI(ctx, TemporalUIOptions{Bin: bin, TemporalAddress: tmp.Address(), Namespace: "sika", Dir: dir,
			LogPath: filepath.Join(dir, "ui.log"), Logger: testLogger()})
	})
	t.Cleanup(func() { _ = ui.Stop() })
	if !strings.HasPrefix(ui.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want http://127.0.0.1:<port>", ui.URL)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(ui.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %.300s", path, resp.Status, body)
		}
		return string(body)
	}
	if page := get("/"); !strings.Contains(page, "<html") {
		t.Errorf("GET /: not the UI's page: %.300s", page)
	}
	if ns := get("/api/v1/namespaces"); !strings.Contains(ns, `"sika"`) {
		t.Errorf("GET /api/v1/namespaces does not list sika: %.500s", ns)
	}
	c := dialTemporal(t, tmp.Address(), "sika")
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "seen-in-the-ui", TaskQueue: "nobody"}, "SomeWorkflow"); err != nil {
		t.Fatal(err)
	}
	if wf := get("/api/v1/namespaces/sika/workflows/seen-in-the-ui"); !strings.Contains(wf, "SomeWorkflow") {
		t.Errorf("the UI's API does not describe the workflow: %.500s", wf)
	}
	if err := ui.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if processName(ui.proc.cmd.Process.Pid) != "" {
		t.Error("the UI server still runs after Stop")
	}
}

// TestTemporalUIThatCannotStartFailsFast: a UI server that exits while starting (its port is
// taken) is noticed at once, with its last output in the error.
func TestTemporalUIThatCannotStartFailsFast(t *testing.T) {
	bin := timed(t, "EnsureTemporalUI", func() (string, error) { return EnsureTemporalUI(testContext(t), "", testLogger()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	_, err = StartTemporalUI(testContext(t), TemporalUIOptions{Bin: bin, TemporalAddress: "127.0.0.1:1", Dir: t.TempDir(),
		Port: ln.Addr().(*net.TCPAddr).Port, Logger: testLogger()})
	if err == nil {
		t.Fatal("StartTemporalUI on a port in use: no error")
	}
	t.Logf("error after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), "exited while starting") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("the error does not say that the server exited, and why: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %s to notice", time.Since(start))
	}
}

// TestPinnedTemporalVersions: the Makefile builds the versions the Go code builds, and the server
// and UI server are those the pinned CLI depends on (its go.mod), so that builds share downloads.
func TestPinnedTemporalVersions(t *testing.T) {
	root, err := FindRepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"TEMPORAL_CLI_VERSION": TemporalCLIVersion,
		"TEMPORAL_SERVER_VERSION": TemporalServerVersion, "TEMPORAL_UI_VERSION": TemporalUIVersion} {
		if !strings.Contains(string(makefile), "\n"+name+" := "+v+"\n") {
			t.Errorf("the Makefile does not pin %s := %s", name, v)
		}
	}
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/temporalio/cli@"+TemporalCLIVersion)
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	var mod struct{ GoMod string }
	if err != nil || json.Unmarshal(out, &mod) != nil || mod.GoMod == "" {
		t.Fatalf("go mod download github.com/temporalio/cli@%s (the Go module proxy): %v", TemporalCLIVersion, err)
	}
	gomod, err := os.ReadFile(mod.GoMod)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{"go.temporal.io/server " + TemporalServerVersion, "github.com/temporalio/ui-server/v2 " + TemporalUIVersion} {
		if !strings.Contains(string(gomod), "\t"+req+"\n") {
			t.Errorf("the Temporal CLI %s does not require %s", TemporalCLIVersion, req)
		}
	}
}

func persistenceCallsT(t *testing.T, url string) map[string]float64 {
	t.Helper()
	calls, err := PersistenceCalls(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}
