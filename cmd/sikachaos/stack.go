package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
)

// harness is the stack under attack and the harness's own handles on it.
type harness struct {
	dir string // the run's directory: Postgres data, Temporal database, service logs
	log *slog.Logger

	pgMu     sync.Mutex
	pg       *devstack.Postgres
	pgDir    string
	pgPort   int
	database string

	tmpMu        sync.Mutex
	temporal     *devstack.Temporal
	temporalCLI  string
	temporalDB   string
	temporalPort int

	sandbox     *sandbox.Server
	sandboxURL  string
	receiverURL string
	// cutter is the API's way to Postgres, which can lose one commit's answer (key reuse).
	cutter   *pgCutter
	receiver *receiver
	servers  []*http.Server // sandbox and receiver listeners

	// apis and workers are the `sika api` and `sika worker` processes: one of each, or the
	// cluster's replicas with -cluster.
	apis, workers []*devstack.Replica
	apiURL        string // http://127.0.0.1:port, the API's public URL (the cluster's one address)
	sikaBin       string
	// cluster is the stack with -cluster: Postgres, the Temporal server and the replicas.
	cluster *devstack.Cluster
	// clusterHits counts the faults per kind of replica, so that they hit each replica in turn.
	clusterHits map[devstack.ReplicaKind]int

	st       *store.Store // the harness's own connections, for setup and the checks
	setup    *merchantSetup
	logFiles []*os.File
}

// Settings of the service under attack: short enough for a bounded run, long enough that a
// fault does not by itself decide a payment's fate.
const (
	// pushLifetime is how long a collection waits for the customer (SIKA_PUSH_LIFETIME); it must
	// outlast 009's 20 ticks plus an outage.
	pushLifetime = 30 * time.Second
	// sandboxPushTTL is how long the sandbox leaves an operation PENDING before it expires it
	// (004); shorter than pushLifetime, so that the operator's word usually comes first.
	sandboxPushTTL = 20 * time.Second
	// webhookSchedule replaces the contract's hours-long retry schedule.
	webhookSchedule = "0,1s,2s,4s,8s,15s,30s,60s,60s,60s"
	// notFoundFor is how long the sandbox answers NOT_FOUND for a 010 operation: several of
	// Sika's status reads and re-sends, well within the sandbox adapter's 30 s settle window.
	notFoundFor = 6 * time.Second
	// lateAfter is when the sandbox pays a 011 collection: after the push lifetime (Sika has
	// recorded it FAILED expired by then and re-reads it), within the run.
	lateAfter = pushLifetime + 30*time.Second
	// recheckInterval is how often Sika re-reads the attempts that ended unclear
	// (SIKA_RECHECK_INTERVAL, 1 minute by default).
	recheckInterval = 3 * time.Second
)

// startHarness starts Postgres, Temporal, the sandbox, the webhook receiver, migrates and seeds
// the database, starts `sika api` and `sika worker`, and sets up the merchant.
func startHarness(ctx context.Context, o options) (_ *harness, err error) {
	dir, err := os.MkdirTemp("", "sikachaos-")
	if err != nil {
		return nil, fmt.Errorf("make the run directory: %w", err)
	}
	h := &harness{dir: dir, log: o.logger, database: "sika"}
	defer func() {
		if err != nil { // keep the logs for the diagnosis
			h.close(true)
			err = fmt.Errorf("%w (logs and data in %s)", err, dir)
		}
	}()
	root, err := devstack.FindRepoRoot(".")
	if err != nil {
		return nil, err
	}
	binErr := make(chan error, 1)
	go func() { binErr <- h.buildSika(ctx, root, o.sikaBin) }() // in parallel with the servers
	if o.cluster {
		if err := h.startCluster(ctx, o, binErr); err != nil {
			return nil, err
		}
		if h.setup, err = setUpMerchant(ctx, h, h.receiverURL); err != nil {
			return nil, fmt.Errorf("set up the merchant: %w", err)
		}
		return h, nil
	}

	h.pgDir = filepath.Join(dir, "postgres")
	if err := h.startPostgres(ctx); err != nil {
		return nil, err
	}
	if err := h.pg.CreateDatabase(ctx, h.database); err != nil {
		return nil, err
	}
	if h.temporalCLI, err = devstack.EnsureTemporalCLI(ctx, root, h.log); err != nil {
		return nil, err
	}
	h.temporalDB = filepath.Join(dir, "temporal.db")
	if err := h.startTemporal(ctx); err != nil {
		return nil, err
	}
	common, err := h.startOperatorAndReceiver(o)
	if err != nil {
		return nil, err
	}
	h.st, err = store.Open(ctx, h.pg.URL(h.database))
	if err != nil {
		return nil, err
	}
	if _, err := h.st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if h.cutter, err = newPGCutter("127.0.0.1:"+strconv.Itoa(h.pgPort), h.log); err != nil {
		return nil, fmt.Errorf("start the Postgres proxy: %w", err)
	}
	if err := <-binErr; err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	h.apiURL = "http://127.0.0.1:" + strconv.Itoa(apiPort)
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"DATABASE_URL=" + h.pg.URL(h.database), "TEMPORAL_ADDRESS=" + h.temporal.Address(),
		"SIKA_HTTP_ADDR=127.0.0.1:" + strconv.Itoa(apiPort), "SIKA_PUBLIC_URL=" + h.apiURL,
		"SIKA_STATE_DIR=" + dir, "SIKA_FILES_DIR=" + filepath.Join(dir, "files"),
		"SIKA_METRICS_ADDR=127.0.0.1:0", // a free port: other runs may share the machine
	}, common...)
	// The API reaches Postgres through the cutter; the worker directly.
	apiEnv := append(append([]string(nil), env...), "DATABASE_URL="+pgCutterURL(h.cutter.port(), h.database))
	h.workers = []*devstack.Replica{devstack.NewReplica(devstack.ReplicaOptions{Name: "worker", Path: h.sikaBin,
		Args: []string{"worker"}, Env: env, LogPath: filepath.Join(dir, "worker.log"), ReadyLine: "worker polling", Logger: h.log})}
	h.apis = []*devstack.Replica{devstack.NewReplica(devstack.ReplicaOptions{Name: "api", Path: h.sikaBin,
		Args: []string{"api"}, Env: apiEnv, LogPath: filepath.Join(dir, "api.log"), ReadyLine: "api listening", Logger: h.log})}
	// The time before the processes start: one started before a time taken after Run would
	// never count as ready since it (on a loaded machine the worker started first: TestChaosShort
	// waited its two minutes for a worker that had been polling all along).
	since := time.Now()
	h.workers[0].Run()
	h.apis[0].Run()
	if err := h.awaitHealthy(ctx, since, true, 2*time.Minute); err != nil {
		return nil, err
	}
	if h.setup, err = setUpMerchant(ctx, h, h.receiverURL); err != nil {
		return nil, fmt.Errorf("set up the merchant: %w", err)
	}
	return h, nil
}

// startOperatorAndReceiver starts the sandbox operator and the webhook receiver in this process
// and returns the service's settings that do not depend on the stack's shape.
func (h *harness) startOperatorAndReceiver(o options) ([]string, error) {
	secret, err := sika.RandomBase62(40)
	if err != nil {
		return nil, err
	}
	sandboxLog, err := os.Create(filepath.Join(h.dir, "sandbox.log"))
	if err != nil {
		return nil, fmt.Errorf("create the sandbox log: %w", err)
	}
	h.logFiles = append(h.logFiles, sandboxLog)
	h.sandbox = sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(secret), Tick: o.tick,
		PushTTL: sandboxPushTTL, NotFoundFor: notFoundFor, LateAfter: lateAfter,
		Logger: slog.New(slog.NewJSONHandler(sandboxLog, nil))})
	if h.sandboxURL, err = h.serve(h.sandbox); err != nil {
		return nil, err
	}
	h.receiver = newReceiver(o.seed)
	if h.receiverURL, err = h.serve(h.receiver); err != nil {
		return nil, err
	}
	jwt, err := sika.RandomBase62(48)
	if err != nil {
		return nil, err
	}
	keys, err := payloadcodec.NewRing() // the API and worker processes encrypt Temporal payloads alike
	if err != nil {
		return nil, err
	}
	return []string{
		"SIKA_SANDBOX_URL=" + h.sandboxURL, "SIKA_SANDBOX_SECRET=" + secret, "SIKA_JWT_SECRET=" + jwt,
		payloadcodec.EnvKeys + "=" + keys.Secret(),
		"SIKA_RATE_LIMIT_PER_MINUTE=1000000", "SIKA_PUBLIC_RATE_LIMIT_PER_MINUTE=1000000",
		"SIKA_PUSH_LIFETIME=" + pushLifetime.String(), "SIKA_OUTBOX_SWEEP_INTERVAL=1s",
		"SIKA_WEBHOOK_ALLOW_PRIVATE=true", "SIKA_WEBHOOK_SCHEDULE=" + webhookSchedule,
		"SIKA_LOG_FORMAT=json", "SIKA_LOG_LEVEL=info", "SIKA_RECHECK_INTERVAL=" + recheckInterval.String(),
	}, nil
}

// startCluster starts the stack of -cluster: the sandbox and the receiver here, and a
// devstack cluster of 2 API and 2 worker replicas on the Temporal server, whose APIs reach
// Postgres through the cutter.
func (h *harness) startCluster(ctx context.Context, o options, binErr <-chan error) error {
	common, err := h.startOperatorAndReceiver(o)
	if err != nil {
		return err
	}
	if h.pgPort, err = freePort(); err != nil {
		return err
	}
	if h.cutter, err = newPGCutter("127.0.0.1:"+strconv.Itoa(h.pgPort), h.log); err != nil {
		return fmt.Errorf("start the Postgres proxy: %w", err)
	}
	if err := <-binErr; err != nil {
		return err
	}
	h.cluster, err = devstack.StartCluster(ctx, devstack.ClusterOptions{
		StateDir: filepath.Join(h.dir, "cluster"), PostgresPort: h.pgPort, Database: h.database,
		APIs: clusterReplicas, Workers: clusterReplicas, SikaBin: h.sikaBin, Env: common,
		APIEnv: []string{"DATABASE_URL=" + pgCutterURL(h.cutter.port(), h.database)}, Logger: h.log,
	})
	if err != nil {
		return err
	}
	h.apis, h.workers, h.apiURL = h.cluster.APIs, h.cluster.Workers, h.cluster.BaseURL
	h.clusterHits = map[devstack.ReplicaKind]int{}
	if h.st, err = store.Open(ctx, h.cluster.DatabaseURL); err != nil {
		return err
	}
	return nil
}

// clusterReplicas is the number of API and of worker replicas with -cluster.
const clusterReplicas = 2

// buildSika uses the given binary or builds ./cmd/sika into the run's directory.
func (h *harness) buildSika(ctx context.Context, root, given string) error {
	if given != "" {
		abs, err := filepath.Abs(given)
		if err != nil {
			return err
		}
		h.sikaBin = abs
		return nil
	}
	h.sikaBin = filepath.Join(h.dir, "sika")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", h.sikaBin, "./cmd/sika")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/sika: %w\n%s", err, out)
	}
	return nil
}

// serve runs an HTTP handler on a fresh loopback port and returns its URL.
func (h *harness) serve(handler http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	h.servers = append(h.servers, srv)
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

// startPostgres starts (or starts again) the durable Postgres on its data directory and port.
func (h *harness) startPostgres(ctx context.Context) error {
	pg, err := devstack.StartPostgres(ctx, devstack.PostgresOptions{DataDir: h.pgDir, Port: h.pgPort, Logger: h.log})
	if err != nil {
		return err
	}
	h.pgMu.Lock()
	h.pg, h.pgPort = pg, pg.Port()
	h.pgMu.Unlock()
	return nil
}

// stopPostgres shuts Postgres down: fast (SIGINT, sessions cut, clean checkpoint) or immediate
// (SIGQUIT, no checkpoint: crash recovery at the next start).
func (h *harness) stopPostgres(immediate bool) error {
	h.pgMu.Lock()
	pg := h.pg
	h.pgMu.Unlock()
	if immediate {
		pid, err := postmasterPID(h.pgDir)
		if err != nil {
			return err
		}
		if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
			return fmt.Errorf("signal the postmaster: %w", err)
		}
	}
	return pg.Stop() // after SIGQUIT it only waits for the exit and releases the data directory
}

// postmasterPID reads the pid of the running postmaster of a data directory.
func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("read postmaster.pid: %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("postmaster.pid holds no pid: %q", first)
	}
	return pid, nil
}

// startTemporal starts (or starts again) the Temporal dev server on its database file and port.
func (h *harness) startTemporal(ctx context.Context) error {
	t, err := devstack.StartTemporal(ctx, devstack.TemporalOptions{CLIPath: h.temporalCLI, DBFile: h.temporalDB,
		Port: h.temporalPort, Logger: h.log})
	if err != nil {
		return err
	}
	h.tmpMu.Lock()
	h.temporal = t
	h.temporalPort = portOf(t.Address())
	h.tmpMu.Unlock()
	return nil
}

func (h *harness) stopTemporal() error {
	h.tmpMu.Lock()
	t := h.temporal
	h.tmpMu.Unlock()
	return t.Stop()
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// awaitHealthy waits until the API answers /readyz with 200 (Postgres and Temporal reachable
// from it) and, when worker is set, the worker has said it polls since the given time.
func (h *harness) awaitHealthy(ctx context.Context, since time.Time, worker bool, bound time.Duration) error {
	if h.cluster != nil { // every replica: a killed one has started again
		return h.cluster.AwaitHealthy(ctx, bound)
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	client := &http.Client{Timeout: 3 * time.Second}
	for {
		ready := false
		if resp, err := client.Get(h.apiURL + "/readyz"); err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		if ready && (!worker || h.workers[0].ReadySince(since)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the service is not healthy after %s (api ready %v, worker %s): %w",
				bound, ready, h.workers[0].State(), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// close stops everything the harness started, in reverse order, and removes the run's directory
// unless keep is set.
func (h *harness) close(keep bool) {
	var errs []error
	if h.cluster != nil {
		errs = append(errs, h.cluster.Stop())
	}
	for _, s := range append(append([]*devstack.Replica(nil), h.apis...), h.workers...) {
		if h.cluster == nil {
			errs = append(errs, s.Close())
		}
	}
	if h.cutter != nil {
		h.cutter.close()
	}
	for _, srv := range h.servers {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	if h.sandbox != nil {
		h.sandbox.Close()
	}
	for _, f := range h.logFiles {
		_ = f.Close()
	}
	if h.st != nil {
		h.st.Close()
	}
	if h.temporal != nil {
		errs = append(errs, h.stopTemporal())
	}
	if h.pg != nil {
		errs = append(errs, h.pg.Stop())
	}
	if err := errors.Join(errs...); err != nil {
		h.log.Warn("stop the stack", "err", err)
	}
	if !keep {
		_ = os.RemoveAll(h.dir)
	}
}
