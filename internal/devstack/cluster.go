package devstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sikahq/sika/payloadcodec"
)

// ReplicaKind names one kind of process of a Cluster.
type ReplicaKind string

// The kinds of process a Cluster runs. There are ClusterOptions.APIs replicas of KindAPI and
// ClusterOptions.Workers of KindWorker; one of KindTemporal and of KindPostgres (index 0).
const (
	KindAPI      ReplicaKind = "api"      // `sika api`, behind Cluster.BaseURL
	KindWorker   ReplicaKind = "worker"   // `sika worker`
	KindTemporal ReplicaKind = "temporal" // the Temporal server (all four services in one process)
	KindPostgres ReplicaKind = "postgres" // the Postgres server of Sika and Temporal
)

// ClusterOptions configures StartCluster.
type ClusterOptions struct {
	// RepoRoot is where bin/temporal-server, bin/temporal-sql-tool and bin/temporal-ui-server
	// live (or are built, see EnsureTemporalServer and EnsureTemporalUI); "" means the module
	// root above the working directory.
	RepoRoot string
	// StateDir holds the cluster's state: postgres/ (unless PostgresURL is set), temporal/ (the
	// server's configuration), and the log of every process (api-1.log, worker-1.log,
	// temporal.log, postgres.log). "" (only with Ephemeral) means a temporary directory that
	// Stop removes.
	StateDir string
	// Ephemeral runs Postgres without durability (fsync off): for tests and benchmarks.
	Ephemeral bool
	// PostgresURL, when set, is an admin URL of a running Postgres server to use instead of
	// starting one; the cluster then cannot stop or kill Postgres.
	PostgresURL string
	// PostgresPort is the port of the Postgres the cluster starts; 0 picks a free one.
	PostgresPort int
	// PostgresSettings are given to the Postgres the cluster starts (PostgresOptions.Settings),
	// at every start.
	PostgresSettings []string
	// Database is Sika's database; "" means "sika". Temporal's databases are named after it:
	// <Database>_temporal and <Database>_temporal_visibility.
	Database string
	// APIs and Workers are the numbers of `sika api` and `sika worker` replicas (0 means 1).
	APIs, Workers int
	// SikaBin is the sika binary the replicas run. Required.
	SikaBin string
	// Addr is where the one address listens (host:port); "" means a free loopback port.
	Addr string
	// Env is added to the environment of every replica, after what the cluster sets
	// (DATABASE_URL, TEMPORAL_ADDRESS, SIKA_PUBLIC_URL, SIKA_STATE_DIR, SIKA_FILES_DIR, a
	// SIKA_JWT_SECRET made up for the run, SIKA_PAYLOAD_KEYS made up unless Env has them,
	// SIKA_LOG_LEVEL=info, …): the sandbox's URL and
	// secret, for instance. The replicas must log at info level or below: a worker is ready when
	// it has logged "worker polling".
	Env []string
	// APIEnv is added to the environment of the API replicas after Env (and after the
	// SIKA_TEMPORAL_UI_URL of TemporalUI).
	APIEnv []string
	// TemporalUI starts the Temporal Web UI server against the frontend
	// (bin/temporal-ui-server, built when missing: see EnsureTemporalUI) and gives its URL to
	// the API replicas (SIKA_TEMPORAL_UI_URL, for the support console's links to workflows).
	// It is optional: when it cannot be built or started, the cluster comes up without it and
	// says why in Cluster.TemporalUIError.
	TemporalUI bool
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// Cluster is Sika on a real Temporal server: Postgres (Sika's database and, separately,
// Temporal's), the Temporal server with its persistence and visibility on that Postgres, N
// `sika api` and M `sika worker` processes, and one address in front of the API replicas (a
// round-robin reverse proxy in this process that skips replicas whose /readyz fails).
//
// Every replica is supervised: when it exits on its own it is started again. StopReplica and
// KillReplica hold one down until StartReplica. Everything listens on 127.0.0.1.
type Cluster struct {
	// BaseURL is the one address of the API (http://127.0.0.1:port, without /api/v1).
	BaseURL string
	// TemporalAddress is host:port of the Temporal frontend.
	TemporalAddress string
	// Namespace is the Temporal namespace the replicas use ("default").
	Namespace string
	// TemporalUIURL is the Temporal Web UI (http://127.0.0.1:port) when ClusterOptions.TemporalUI
	// is set and it started; "" otherwise, with the reason in TemporalUIError.
	TemporalUIURL   string
	TemporalUIError error
	// PayloadKeys is the replicas' SIKA_PAYLOAD_KEYS (Env's, or made up for the run): a client
	// of the cluster's Temporal reads Sika's payloads with payloadcodec.ParseKeys(PayloadKeys).
	// A secret.
	PayloadKeys string
	// DatabaseURL is Sika's database (as the Postgres superuser).
	DatabaseURL string
	// StateDir is the cluster's state directory.
	StateDir string
	// APIs and Workers are the replicas, api-1… and worker-1…
	APIs, Workers []*Replica

	opts        ClusterOptions
	logger      *slog.Logger
	adminURL    string
	pgDir       string
	pgPort      int    // of the Postgres we run: it restarts on the same port
	pgAddr      string // host:port of Postgres
	temporalBin TemporalServerBinaries
	temporalDir string
	tports      temporalPorts
	balancer    *balancer
	removeState bool

	mu       sync.Mutex // guards postgres and temporal, which faults replace
	postgres *Postgres
	temporal *temporalServer
	ui       *TemporalUI
}

// StartCluster starts the cluster and returns once the Temporal server serves its namespace,
// Sika's database is migrated, every API replica answers /readyz and every worker polls. On
// failure, what was started is stopped again.
func StartCluster(ctx context.Context, opts ClusterOptions) (_ *Cluster, err error) {
	if opts.SikaBin == "" {
		return nil, errors.New("start cluster: no sika binary given")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.APIs, opts.Workers = max(opts.APIs, 1), max(opts.Workers, 1)
	if opts.Database == "" {
		opts.Database = "sika"
	}
	c := &Cluster{opts: opts, logger: opts.Logger, Namespace: "default", StateDir: opts.StateDir, pgPort: opts.PostgresPort}
	defer func() {
		if err != nil {
			_ = c.Stop()
			err = fmt.Errorf("start cluster: %w", err)
		}
	}()
	if c.StateDir == "" {
		if !opts.Ephemeral {
			return nil, errors.New("a state directory is needed unless ephemeral")
		}
		if c.StateDir, err = os.MkdirTemp("", "sika-cluster-"); err != nil {
			return nil, err
		}
		c.removeState = true
	}
	if c.StateDir, err = filepath.Abs(c.StateDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
		return nil, err
	}
	if c.temporalBin, err = EnsureTemporalServer(ctx, opts.RepoRoot, c.logger); err != nil {
		return nil, err
	}
	if err := c.startPostgres(ctx); err != nil {
		return nil, err
	}
	if err := CreateDatabase(ctx, c.adminURL, opts.Database); err != nil {
		return nil, err
	}
	if c.DatabaseURL, err = DatabaseURL(c.adminURL, opts.Database); err != nil {
		return nil, err
	}
	tdb, vdb := opts.Database+"_temporal", opts.Database+"_temporal_visibility"
	if err := setUpTemporalSchema(ctx, c.temporalBin.SQLTool, c.adminURL, c.pgAddr,
		map[string]string{tdb: "temporal", vdb: "visibility"}, c.logger); err != nil {
		return nil, err
	}
	if c.tports, err = pickTemporalPorts(); err != nil {
		return nil, err
	}
	c.TemporalAddress = c.tports.frontendAddress()
	c.temporalDir = filepath.Join(c.StateDir, "temporal")
	if err := writeTemporalConfig(c.temporalDir, c.pgAddr, tdb, vdb, c.tports); err != nil {
		return nil, fmt.Errorf("write the temporal configuration: %w", err)
	}
	if err := c.startTemporal(ctx); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", orDefault(opts.Addr, loopback+":0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the API: %w", err)
	}
	c.BaseURL = "http://" + ln.Addr().String()
	if opts.TemporalUI {
		c.startTemporalUI(ctx)
	}
	env, err := c.environ()
	if err != nil {
		ln.Close()
		return nil, err
	}
	migrate := exec.CommandContext(ctx, opts.SikaBin, "migrate")
	migrate.Env = env
	if err := runLogged(migrate, c.logger); err != nil {
		ln.Close()
		return nil, err
	}
	var targets []string
	for i := range opts.APIs {
		port, err := FreePort()
		if err != nil {
			ln.Close()
			return nil, err
		}
		addr := net.JoinHostPort(loopback, strconv.Itoa(port))
		targets = append(targets, "http://"+addr)
		apiEnv := append(append([]string(nil), env...), "SIKA_HTTP_ADDR="+addr)
		if c.TemporalUIURL != "" {
			apiEnv = append(apiEnv, "SIKA_TEMPORAL_UI_URL="+c.TemporalUIURL)
		}
		apiEnv = append(apiEnv, opts.APIEnv...)
		c.APIs = append(c.APIs, c.replica(KindAPI, i, apiEnv, "api listening"))
	}
	for i := range opts.Workers {
		c.Workers = append(c.Workers, c.replica(KindWorker, i, env, "worker polling"))
	}
	for _, r := range append(append([]*Replica(nil), c.Workers...), c.APIs...) {
		r.Run()
	}
	if c.balancer, err = startBalancer(ln, targets); err != nil {
		ln.Close()
		return nil, err
	}
	if err := c.AwaitHealthy(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	c.logger.Info("cluster is up", "base_url", c.BaseURL, "temporal", c.TemporalAddress, "temporal_ui", c.TemporalUIURL, "apis", opts.APIs, "workers", opts.Workers, "state", c.StateDir)
	return c, nil
}

// environ is the environment of every replica: ours, then the cluster's settings, then Env.
func (c *Cluster) environ() (_ []string, err error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	c.PayloadKeys = ""
	for _, kv := range c.opts.Env {
		if v, ok := strings.CutPrefix(kv, payloadcodec.EnvKeys+"="); ok {
			c.PayloadKeys = v
		}
	}
	if c.PayloadKeys == "" {
		if c.PayloadKeys, err = payloadcodec.NewKey(time.Now()); err != nil {
			return nil, err
		}
	}
	env := append(os.Environ(),
		"DATABASE_URL="+c.DatabaseURL, "TEMPORAL_ADDRESS="+c.TemporalAddress, "TEMPORAL_NAMESPACE="+c.Namespace,
		"SIKA_PUBLIC_URL="+c.BaseURL, "SIKA_STATE_DIR="+c.StateDir, "SIKA_FILES_DIR="+filepath.Join(c.StateDir, "files"),
		"SIKA_JWT_SECRET="+hex.EncodeToString(secret), payloadcodec.EnvKeys+"="+c.PayloadKeys,
		"SIKA_TRUSTED_PROXIES=127.0.0.1/32",
		"SIKA_METRICS_ADDR=127.0.0.1:0", // several workers on one machine: each takes a free port
		"SIKA_LOG_LEVEL=info",           // a worker is ready when it logs "worker polling" (info)
	)
	return append(env, c.opts.Env...), nil
}

func (c *Cluster) replica(kind ReplicaKind, i int, env []string, readyLine string) *Replica {
	name := fmt.Sprintf("%s-%d", kind, i+1)
	return NewReplica(ReplicaOptions{Name: name, Path: c.opts.SikaBin, Args: []string{string(kind)}, Env: env,
		LogPath: filepath.Join(c.StateDir, name+".log"), ReadyLine: readyLine, Logger: c.logger})
}

// Postgres returns the running Postgres server, or nil when the cluster uses
// ClusterOptions.PostgresURL or Postgres is down.
func (c *Cluster) Postgres() *Postgres {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.postgres
}

// AwaitHealthy waits up to bound until every API replica answers /readyz with 200 (Postgres
// and Temporal reachable from it) and every worker replica's current process has said it polls.
func (c *Cluster) AwaitHealthy(ctx context.Context, bound time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		var waiting []string
		for i, r := range c.APIs {
			if !readyz(ctx, c.balancer.backends[i].url.String()) {
				waiting = append(waiting, r.Name()+" ("+r.State()+")")
			}
		}
		for _, r := range c.Workers {
			if !r.Ready() {
				waiting = append(waiting, r.Name()+" ("+r.State()+")")
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster is not healthy after %s; waiting for %v: %w", bound, waiting, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// replicaOf returns the API or worker replica i.
func (c *Cluster) replicaOf(kind ReplicaKind, i int) (*Replica, error) {
	var rs []*Replica
	switch kind {
	case KindAPI:
		rs = c.APIs
	case KindWorker:
		rs = c.Workers
	default:
		return nil, fmt.Errorf("%s is not a replica kind", kind)
	}
	if i < 0 || i >= len(rs) {
		return nil, fmt.Errorf("no %s replica %d (there are %d)", kind, i, len(rs))
	}
	return rs[i], nil
}

// StopReplica shuts one process down gracefully and holds it down until StartReplica: an API
// or worker replica (SIGTERM), the Temporal server (SIGTERM) or Postgres (fast shutdown); i is
// 0 for the last two.
func (c *Cluster) StopReplica(kind ReplicaKind, i int) error {
	return c.down(kind, i, false)
}

// KillReplica ends one process abruptly and holds it down until StartReplica: SIGKILL for a
// replica and the Temporal server, an immediate shutdown (SIGQUIT, crash recovery at the next
// start) for Postgres.
func (c *Cluster) KillReplica(kind ReplicaKind, i int) error {
	return c.down(kind, i, true)
}

func (c *Cluster) down(kind ReplicaKind, i int, crash bool) error {
	switch kind {
	case KindTemporal:
		t := take(&c.mu, &c.temporal)
		if t == nil {
			return nil
		}
		if crash {
			return t.stop(syscall.SIGKILL, 5*time.Second)
		}
		return t.stop(syscall.SIGTERM, 30*time.Second)
	case KindPostgres:
		if c.opts.PostgresURL != "" {
			return errors.New("the cluster uses a Postgres it did not start")
		}
		pg := take(&c.mu, &c.postgres)
		if pg == nil {
			return nil
		}
		if crash {
			if err := pg.proc.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
				return fmt.Errorf("signal the postmaster: %w", err)
			}
		}
		return pg.Stop() // after SIGQUIT it only waits for the exit
	}
	r, err := c.replicaOf(kind, i)
	if err != nil {
		return err
	}
	sig := syscall.SIGTERM
	if crash {
		sig = syscall.SIGKILL
	}
	return r.Stop(sig, 30*time.Second)
}

// take returns what *p points at and leaves nil there, under mu: a server the cluster hands
// over to be stopped.
func take[T any](mu *sync.Mutex, p **T) *T {
	mu.Lock()
	defer mu.Unlock()
	v := *p
	*p = nil
	return v
}

// StartReplica starts a process that StopReplica or KillReplica held down, on the same port,
// and waits until it serves again (a replica until its supervisor has started it; the servers
// until they answer).
func (c *Cluster) StartReplica(ctx context.Context, kind ReplicaKind, i int) error {
	switch kind {
	case KindTemporal:
		return c.startTemporal(ctx)
	case KindPostgres:
		if c.opts.PostgresURL != "" {
			return errors.New("the cluster uses a Postgres it did not start")
		}
		return c.startPostgres(ctx)
	}
	r, err := c.replicaOf(kind, i)
	if err != nil {
		return err
	}
	r.Release()
	return nil
}

// RestartReplica kills one process (see KillReplica) and starts it again.
func (c *Cluster) RestartReplica(ctx context.Context, kind ReplicaKind, i int) error {
	if err := c.KillReplica(kind, i); err != nil {
		return err
	}
	return c.StartReplica(ctx, kind, i)
}

func (c *Cluster) startPostgres(ctx context.Context) error {
	if c.opts.PostgresURL != "" {
		c.adminURL = c.opts.PostgresURL
		u, err := url.Parse(c.adminURL)
		if err != nil || u.Port() == "" {
			return fmt.Errorf("PostgresURL %q names no host:port", c.adminURL)
		}
		c.pgAddr = u.Host
		return nil
	}
	c.pgDir = filepath.Join(c.StateDir, "postgres")
	pg, err := StartPostgres(ctx, PostgresOptions{DataDir: c.pgDir, Port: c.pgPort, Ephemeral: c.opts.Ephemeral,
		Settings: c.opts.PostgresSettings, Logger: c.logger})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.postgres, c.pgPort, c.adminURL = pg, pg.Port(), pg.URL("postgres")
	c.pgAddr = net.JoinHostPort(loopback, strconv.Itoa(pg.Port()))
	c.mu.Unlock()
	return nil
}

func (c *Cluster) startTemporal(ctx context.Context) error {
	t, err := startTemporalServer(ctx, c.temporalBin.Server, c.temporalDir, filepath.Join(c.StateDir, "temporal.log"),
		c.TemporalAddress, c.Namespace, c.logger)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.temporal = t
	c.mu.Unlock()
	return nil
}

// CodecEndpointPath is where Sika's API serves the Temporal UI's codec server (the support
// console's, web/console.CodecPath without its /decode).
const CodecEndpointPath = "/console/codec"

// startTemporalUI builds (when missing) and starts the Temporal UI server against the frontend,
// decoding payloads through the cluster's codec server (CodecEndpointPath on its one address):
// temporal-ui/config/development.yaml and temporal-ui.log in the state directory. A failure
// leaves the cluster without the UI: it is logged and kept in TemporalUIError.
func (c *Cluster) startTemporalUI(ctx context.Context) {
	bin, err := EnsureTemporalUI(ctx, c.opts.RepoRoot, c.logger)
	if err == nil {
		c.ui, err = StartTemporalUI(ctx, TemporalUIOptions{Bin: bin, TemporalAddress: c.TemporalAddress, Namespace: c.Namespace,
			Dir: filepath.Join(c.StateDir, "temporal-ui"), LogPath: filepath.Join(c.StateDir, "temporal-ui.log"), Logger: c.logger,
			CodecEndpoint: c.BaseURL + CodecEndpointPath})
	}
	if err != nil {
		c.TemporalUIError = err
		c.logger.Warn("the cluster runs without the Temporal UI", "err", err)
		return
	}
	c.TemporalUIURL = c.ui.URL
}

// Stop stops the one address, the API and worker replicas (SIGTERM), the Temporal UI, the
// Temporal server and Postgres, and removes a temporary state directory.
func (c *Cluster) Stop() error {
	var errs []error
	if c.balancer != nil {
		c.balancer.close()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, r := range append(append([]*Replica(nil), c.APIs...), c.Workers...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Close(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if c.ui != nil {
		errs = append(errs, c.ui.Stop())
	}
	errs = append(errs, c.down(KindTemporal, 0, false))
	if c.opts.PostgresURL == "" {
		errs = append(errs, c.down(KindPostgres, 0, false))
	}
	if c.removeState {
		errs = append(errs, os.RemoveAll(c.StateDir))
	}
	return errors.Join(errs...)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
