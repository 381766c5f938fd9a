package devstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TemporalServerVersion is the Temporal server (go.temporal.io/server) that
// EnsureTemporalServer builds: the version the Temporal CLI of
// TemporalCLIVersion depends on, so that both builds share their downloads.
const TemporalServerVersion = "v1.29.1"

const (
	temporalServerModule = "go.temporal.io/server"
	// temporalShards is the number of history shards of the cluster's Temporal; it is fixed when
	// the schema is set up and cannot change afterwards.
	temporalShards = 4
)

// TemporalServerBinaries are the Temporal server and its SQL schema tool.
type TemporalServerBinaries struct {
	Server  string // bin/temporal-server (go.temporal.io/server/cmd/server)
	SQLTool string // bin/temporal-sql-tool (go.temporal.io/server/cmd/tools/sql)
}

// EnsureTemporalServer returns the Temporal server and its SQL tool in <repoRoot>/bin, building
// the missing ones with `go install go.temporal.io/server/cmd/...@TemporalServerVersion` (several
// minutes the first time), one build at a time even across processes. repoRoot "" means the
// module root above the working directory. Nothing but Go modules is downloaded.
func EnsureTemporalServer(ctx context.Context, repoRoot string, logger *slog.Logger) (TemporalServerBinaries, error) {
	if logger == nil {
		logger = slog.Default()
	}
	var bins TemporalServerBinaries
	if repoRoot == "" {
		var err error
		if repoRoot, err = FindRepoRoot("."); err != nil {
			return bins, fmt.Errorf("find the temporal server: %w", err)
		}
	}
	binDir := filepath.Join(repoRoot, "bin")
	bins = TemporalServerBinaries{Server: filepath.Join(binDir, "temporal-server"), SQLTool: filepath.Join(binDir, "temporal-sql-tool")}
	for _, b := range []struct{ path, pkg string }{
		{bins.Server, temporalServerModule + "/cmd/server"},
		{bins.SQLTool, temporalServerModule + "/cmd/tools/sql"},
	} {
		if err := ensureGoTool(ctx, binDir, b.pkg+"@"+TemporalServerVersion, b.path, logger); err != nil {
			return bins, fmt.Errorf("build %s: %w", filepath.Base(b.path), err)
		}
	}
	return bins, nil
}

// ensureGoTool builds pkg@version as path (see buildGoTool) unless path is an executable already.
func ensureGoTool(ctx context.Context, binDir, pkgAtVersion, path string, logger *slog.Logger) error {
	if isExecutable(path) {
		return nil
	}
	return buildGoTool(ctx, binDir, pkgAtVersion, path, logger)
}

// buildGoTool installs pkg@version as path (its command name replaced by path's base name),
// under one lock for every Temporal build (the CLI, the server and its SQL tool, the UI server),
// so that builds never run at once, even across processes.
func buildGoTool(ctx context.Context, binDir, pkgAtVersion, path string, logger *slog.Logger) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	unlock, err := lockWait(ctx, filepath.Join(binDir, ".temporal-build.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if isExecutable(path) { // built by another process while we waited
		return nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed: %w", err)
	}
	tmp, err := os.MkdirTemp(binDir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logger.Warn("building a Temporal tool from its Go module; this may take several minutes", "package", pkgAtVersion, "into", path)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "install", pkgAtVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp)
	if err := runLogged(cmd, logger); err != nil {
		return err
	}
	pkg, _, _ := strings.Cut(pkgAtVersion, "@")
	if err := os.Rename(filepath.Join(tmp, filepath.Base(pkg)), path); err != nil {
		return err
	}
	logger.Info("built", "path", path, "took", time.Since(start).Round(time.Second))
	return nil
}

// temporalSchemaDir returns the directory of the server module's Postgres schema
// (schema/postgresql/v12) in the module cache, downloading the module if needed.
func temporalSchemaDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", temporalServerModule+"@"+TemporalServerVersion)
	cmd.Dir = os.TempDir() // outside any module
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", temporalServerModule, TemporalServerVersion, err, stderr.String())
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory (%s)", temporalServerModule, TemporalServerVersion, mod.Error)
	}
	return filepath.Join(mod.Dir, "schema", "postgresql", "v12"), nil
}

// setUpTemporalSchema creates Temporal's databases on the Postgres server of adminURL and brings
// their schema to the version of TemporalServerVersion (setup-schema the first time, then
// update-schema, which does nothing when the schema is current).
func setUpTemporalSchema(ctx context.Context, sqlTool, adminURL, pgAddr string, databases map[string]string, logger *slog.Logger) error {
	schemaDir, err := temporalSchemaDir(ctx)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(pgAddr)
	if err != nil {
		return err
	}
	for db, schema := range databases {
		if err := CreateDatabase(ctx, adminURL, db); err != nil {
			return err
		}
		dbURL, err := DatabaseURL(adminURL, db)
		if err != nil {
			return err
		}
		versioned, err := hasTable(ctx, dbURL, "schema_version")
		if err != nil {
			return err
		}
		base := []string{"--plugin", "postgres12", "--ep", host, "--port", port, "--user", "postgres", "--db", db}
		var steps [][]string
		if !versioned {
			steps = append(steps, append(append([]string(nil), base...), "setup-schema", "-v", "0.0"))
		}
		steps = append(steps, append(append([]string(nil), base...), "update-schema", "-d", filepath.Join(schemaDir, schema, "versioned")))
		for _, args := range steps {
			if err := runLogged(exec.CommandContext(ctx, sqlTool, args...), logger); err != nil {
				return fmt.Errorf("temporal schema of %s: %w", db, err)
			}
		}
	}
	return nil
}

func hasTable(ctx context.Context, dsn, table string) (bool, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	var ok bool
	err = conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok)
	return ok, err
}

// temporalPorts are the ports of the server's four services; they stay the same across
// restarts, so that clients and the membership ring find the server where it was.
type temporalPorts struct {
	Frontend, FrontendMembership, FrontendHTTP int
	History, HistoryMembership                 int
	Matching, MatchingMembership               int
	Worker, WorkerMembership                   int
}

// pickTemporalPorts picks free ports below 32768: the server records its services' ports in a
// smallint column (cluster_membership.rpc_port), and Linux hands out ephemeral ports above that,
// so these are also never taken by an outgoing connection while the server is down.
func pickTemporalPorts() (temporalPorts, error) {
	ps := make([]int, 0, 9)
	for attempt := 0; len(ps) < 9; attempt++ {
		if attempt > 1000 {
			return temporalPorts{}, errors.New("no free ports for the temporal server between 20000 and 32767")
		}
		p := 20000 + mathrand.IntN(32768-20000)
		if slices.Contains(ps, p) || !PortFree(p) {
			continue
		}
		ps = append(ps, p)
	}
	return temporalPorts{ps[0], ps[1], ps[2], ps[3], ps[4], ps[5], ps[6], ps[7], ps[8]}, nil
}

// temporalConfig is the server's configuration (the shape of the module's
// config/development-postgres12.yaml): persistence and visibility on Postgres, every service
// on loopback.
var temporalConfig = template.Must(template.New("temporal").Parse(`# written by sika (internal/devstack): the cluster's Temporal server
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: {{.Shards}}
  datastores:
    postgres-default:
      sql:
        pluginName: postgres12
        databaseName: {{.DB}}
        connectAddr: "{{.PGAddr}}"
        connectProtocol: tcp
        user: postgres
        password: ""
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: postgres12
        databaseName: {{.VisibilityDB}}
        connectAddr: "{{.PGAddr}}"
        connectProtocol: tcp
        user: postgres
        password: ""
        maxConns: 4
        maxIdleConns: 4
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:
    rpc:
      grpcPort: {{.Ports.Frontend}}
      membershipPort: {{.Ports.FrontendMembership}}
      bindOnLocalHost: true
      httpPort: {{.Ports.FrontendHTTP}}
  matching:
    rpc:
      grpcPort: {{.Ports.Matching}}
      membershipPort: {{.Ports.MatchingMembership}}
      bindOnLocalHost: true
  history:
    rpc:
      grpcPort: {{.Ports.History}}
      membershipPort: {{.Ports.HistoryMembership}}
      bindOnLocalHost: true
  worker:
    rpc:
      grpcPort: {{.Ports.Worker}}
      membershipPort: {{.Ports.WorkerMembership}}
      bindOnLocalHost: true
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:{{.Ports.Frontend}}"
      httpAddress: "127.0.0.1:{{.Ports.FrontendHTTP}}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: {{.DynamicConfig}}
  pollInterval: 10s
`))

// temporalDynamicConfig raises the persistence rates as the CLI's dev server does
// (temporalcli/commands.server.go). The dev server's forced refresh of search attributes on every
// read is not copied: Temporal's documentation says it is not for production, and it read the
// cluster metadata and the namespace from Postgres six times per payment (decision 0031).
const temporalDynamicConfig = `frontend.persistenceMaxQPS:
  - value: 10000
history.persistenceMaxQPS:
  - value: 45000
frontend.enableExecuteMultiOperation:
  - value: true
`

// writeTemporalConfig writes <dir>/config/development.yaml and the dynamic config next to it.
func writeTemporalConfig(dir string, pgAddr string, db, visibilityDB string, ports temporalPorts) error {
	confDir := filepath.Join(dir, "config")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return err
	}
	dyn := filepath.Join(confDir, "dynamic.yaml")
	if err := os.WriteFile(dyn, []byte(temporalDynamicConfig), 0o644); err != nil {
		return err
	}
	var b bytes.Buffer
	err := temporalConfig.Execute(&b, map[string]any{"Shards": temporalShards, "DB": db, "VisibilityDB": visibilityDB,
		"PGAddr": pgAddr, "Ports": ports, "DynamicConfig": strconv.Quote(dyn)})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(confDir, "development.yaml"), b.Bytes(), 0o644)
}

// temporalServer is a running Temporal server process: all four services in one process.
type temporalServer struct {
	proc *child
	logs *logSink
}

// startTemporalServer starts the server on the configuration of dir and waits until namespace
// answers on its frontend, registering it when it does not exist.
func startTemporalServer(ctx context.Context, bin, dir, logPath, address, namespace string, logger *slog.Logger) (_ *temporalServer, err error) {
	start := time.Now()
	proc, logs, err := startServerProcess(bin, dir, logPath, "temporal-server", logger,
		"--root", dir, "--config", "config", "--env", "development", "--allow-no-auth", "start")
	if err != nil {
		return nil, err
	}
	s := &temporalServer{proc: proc, logs: logs}
	if err := s.awaitNamespace(ctx, address, namespace, logger); err != nil {
		return nil, abandonStart(proc, logs, err)
	}
	logger.Info("temporal server is up", "address", address, "namespace", namespace, "log", logPath, "took", time.Since(start).Round(time.Millisecond))
	return s, nil
}

// awaitNamespace waits until the frontend serves namespace (registering it once the frontend
// answers): a task-queue read goes through the frontend's namespace cache, which a freshly
// registered namespace reaches only after a refresh.
func (s *temporalServer) awaitNamespace(ctx context.Context, address, namespace string, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, temporalStartTimeout)
	defer cancel()
	var c client.Client
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	registered := false
	var last error
	for {
		if s.proc.exited() {
			return fmt.Errorf("the temporal server exited while starting: %v", s.proc.err)
		}
		if c == nil {
			c, last = client.Dial(client.Options{HostPort: address, Namespace: namespace,
				Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
			if last != nil {
				c = nil
			}
		}
		if c != nil && !registered {
			last = registerNamespace(ctx, c, namespace)
			registered = last == nil
		}
		if c != nil && registered {
			_, last = c.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
				Namespace: namespace, TaskQueue: &taskqueuepb.TaskQueue{Name: "sika-readiness", Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			})
			if last == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal server at %s does not serve namespace %s: %w (last error: %v)", address, namespace, ctx.Err(), last)
		case <-s.proc.done:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func registerNamespace(ctx context.Context, c client.Client, namespace string) error {
	_, err := c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(72 * time.Hour),
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("register namespace %s: %w", namespace, err)
	}
	return nil
}

// stop ends the server with sig (SIGTERM: a graceful shutdown; SIGKILL: a crash), killing it
// after grace.
func (s *temporalServer) stop(sig syscall.Signal, grace time.Duration) error {
	err := s.proc.stop(sig, grace)
	_ = s.logs.Close()
	if err != nil && !diedOf(err, syscall.SIGKILL) {
		return fmt.Errorf("stop the temporal server: %w", err)
	}
	return nil
}

// frontendAddress is host:port of the frontend for the given ports.
func (p temporalPorts) frontendAddress() string {
	return net.JoinHostPort(loopback, strconv.Itoa(p.Frontend))
}
