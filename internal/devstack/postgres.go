package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresOptions configures StartPostgres.
type PostgresOptions struct {
	// DataDir is the Postgres data directory; it is created with initdb when
	// it holds no PG_VERSION. Required.
	DataDir string
	// Port is the TCP port on 127.0.0.1; 0 picks one: the port of the last run
	// on the same DataDir when it is free, else any free port.
	Port int
	// Ephemeral trades durability for speed (fsync=off and friends): for
	// test servers whose data is thrown away, never for the dev data.
	Ephemeral bool
	// Settings are server settings given on the command line, "name=value" each (as
	// `postgres -c name=value`): shared_preload_libraries=pg_stat_statements for a benchmark's
	// server, for instance.
	Settings []string
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// Postgres is a running Postgres server, a child process of ours.
type Postgres struct {
	dataDir   string
	socketDir string // removed on Stop when tempSocket
	tempSock  bool
	port      int
	logPath   string
	logs      *logSink
	proc      *child
	instance  *instanceFile
	logger    *slog.Logger

	stopOnce sync.Once
	stopErr  error
}

// postgresStartTimeout bounds the wait for a starting server to accept
// connections (crash recovery of a big dev database may take a while).
const postgresStartTimeout = 2 * time.Minute

// FindPostgresBinaries returns the directory holding the Postgres server
// binaries (postgres, initdb, pg_ctl): $PG_BIN if set; else the newest
// /usr/lib/postgresql/*/bin; else the directory of `postgres` on $PATH.
//
// When there are none and we run as root, it installs Debian's postgresql
// package with apt-get (logging through slog.Default()) and looks again;
// when not root, the error says what to install.
func FindPostgresBinaries() (dir string, err error) {
	return findPostgresBinaries(context.Background(), slog.Default())
}

func findPostgresBinaries(ctx context.Context, logger *slog.Logger) (string, error) {
	dir, err := lookupPostgresBinaries()
	if err == nil || !errors.Is(err, errNoPostgres) {
		return dir, err
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w: install them with `sudo apt-get install postgresql`, or set PG_BIN to the directory holding postgres and initdb", err)
	}
	logger.Warn("no PostgreSQL server binaries found; installing Debian's postgresql package with apt-get")
	for _, args := range [][]string{
		{"update"},
		{"install", "-y", "--no-install-recommends", "postgresql"},
	} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if err := runLogged(cmd, logger); err != nil {
			return "", fmt.Errorf("install postgresql: %w", err)
		}
	}
	return lookupPostgresBinaries()
}

// PostgresHasLibrary tells whether the Postgres server binaries found (see
// FindPostgresBinaries) come with the loadable module name (pg_stat_statements, say) in their
// library directory, <bin>/../lib: a server told to preload a missing module does not start.
func PostgresHasLibrary(name string) bool {
	bin, err := lookupPostgresBinaries()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(bin), "lib", name+".so"))
	return err == nil
}

var errNoPostgres = errors.New("no PostgreSQL server binaries found (looked at $PG_BIN, /usr/lib/postgresql/*/bin and $PATH)")

func lookupPostgresBinaries() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"postgres", "initdb"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv("PG_BIN"); dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("PG_BIN=%s holds no postgres and initdb", dir)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) float64 { // "15", "9.6"
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	return "", errNoPostgres
}

// StartPostgres starts a Postgres server on opts.DataDir, listening only on
// 127.0.0.1, and returns once it accepts connections. The superuser is
// `postgres`, with trust authentication. Its output goes to
// <DataDir>.log (e.g. .sika/postgres.log for .sika/postgres).
//
// When we run as root, the server runs as the `postgres` OS user. A server
// left running on DataDir by a killed run of ours is stopped first. The
// server gets SIGINT if our process dies.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	p, err := startPostgres(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return p, nil
}

func startPostgres(ctx context.Context, opts PostgresOptions) (_ *Postgres, err error) {
	if opts.DataDir == "" {
		return nil, errors.New("no data directory given")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	bin, err := findPostgresBinaries(ctx, logger)
	if err != nil {
		return nil, err
	}
	runAs, err := postgresUser()
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(dataDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	p := &Postgres{dataDir: dataDir, logPath: dataDir + ".log", logger: logger}
	defer func() {
		if err != nil {
			p.release()
		}
	}()
	if p.instance, err = openInstanceFile(dataDir + ".ports"); err != nil {
		return nil, err
	}
	if err := runAs.ensureTraversable(parent, logger); err != nil {
		return nil, err
	}
	if err := p.initDataDir(ctx, bin, runAs, opts.Ephemeral); err != nil {
		return nil, err
	}
	if err := p.stopStalePostmaster(ctx, bin, runAs); err != nil {
		return nil, err
	}
	if err := p.makeSocketDir(runAs); err != nil {
		return nil, err
	}
	if p.logs, err = newLogSink(p.logPath, logger, "postgres"); err != nil {
		return nil, err
	}
	// An automatically chosen port may be grabbed by someone else before
	// Postgres binds it; then try another one.
	for attempt := 1; ; attempt++ {
		remembered := p.instance.port("postgres")
		if attempt > 1 {
			remembered = 0
		}
		if p.port, err = choosePort(opts.Port, remembered); err != nil {
			return nil, err
		}
		err = p.run(ctx, bin, runAs, opts.Ephemeral, opts.Settings)
		if err == nil || opts.Port != 0 || attempt == 3 || !strings.Contains(p.logs.Tail(), "could not bind") {
			break
		}
		logger.Info("postgres could not bind its port; trying another", "port", p.port)
	}
	if err != nil {
		return nil, err
	}
	if err := p.instance.save(map[string]int{"postgres": p.port}, p.proc.cmd.Process.Pid); err != nil {
		logger.Warn("could not remember the postgres port", "err", err)
	}
	return p, nil
}

// initDataDir runs initdb unless the data directory holds a cluster. initdb
// works in a sibling directory renamed into place at the end, so that a
// killed initdb never leaves a half-made data directory behind.
func (p *Postgres) initDataDir(ctx context.Context, bin string, runAs *runAsUser, ephemeral bool) error {
	if _, err := os.Stat(filepath.Join(p.dataDir, "PG_VERSION")); err == nil {
		if err := runAs.chownTree(p.dataDir); err != nil {
			return err
		}
		return os.Chmod(p.dataDir, 0o700) // Postgres insists on 0700 or 0750
	}
	if entries, err := os.ReadDir(p.dataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("data directory %s is not empty but holds no PG_VERSION; move it away", p.dataDir)
	}
	tmp := p.dataDir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	if err := runAs.chown(tmp); err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", tmp, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale",
		"--no-sync", "--no-instructions")
	cmd.Dir = "/"
	cmd.SysProcAttr = runAs.sysProcAttr(0)
	if err := runLogged(cmd, p.logger); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("initdb: %w", err)
	}
	// An empty data directory (made by the caller) is replaced.
	if err := os.Remove(p.dataDir); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(tmp, p.dataDir); err != nil {
		return err
	}
	p.logger.Info("initialized a postgres data directory", "dir", p.dataDir, "ephemeral", ephemeral, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// stopStalePostmaster deals with a postmaster.pid left by a run of ours that
// was killed (our lock on the instance file rules out a live sika process):
// a postmaster still running on the data directory is stopped; a lock file
// naming a dead process is removed (Postgres would mostly cope, but not when
// the pid now belongs to an unrelated process of the same user).
func (p *Postgres) stopStalePostmaster(ctx context.Context, bin string, runAs *runAsUser) error {
	pidFile := filepath.Join(p.dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	if pid <= 0 || processName(pid) != "postgres" {
		p.logger.Info("removing a stale postmaster.pid", "dir", p.dataDir, "pid", pid)
		return os.Remove(pidFile)
	}
	p.logger.Warn("stopping a postgres left running on the data directory by an earlier run", "pid", pid, "dir", p.dataDir)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_ctl"), "stop", "-D", p.dataDir, "-m", "fast", "-w", "-t", "30")
	cmd.Dir = "/"
	cmd.SysProcAttr = runAs.sysProcAttr(0)
	if err := runLogged(cmd, p.logger); err != nil {
		return fmt.Errorf("stop the postgres left running (pid %d): %w", pid, err)
	}
	return nil
}

// maxSocketDir keeps the socket path (<dir>/.s.PGSQL.<port>.lock) well under
// the 108 bytes a Unix socket address holds.
const maxSocketDir = 80

// makeSocketDir creates the directory for the Unix socket: <parent of the
// data dir>/pg-socket, or a temporary directory when that path is too long.
func (p *Postgres) makeSocketDir(runAs *runAsUser) error {
	p.socketDir = filepath.Join(filepath.Dir(p.dataDir), "pg-socket")
	if len(p.socketDir) > maxSocketDir {
		dir, err := os.MkdirTemp("", "sika-pg-")
		if err != nil {
			return err
		}
		p.socketDir, p.tempSock = dir, true
	} else if err := os.MkdirAll(p.socketDir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(p.socketDir, 0o755); err != nil {
		return err
	}
	return runAs.chown(p.socketDir)
}

// run starts the postgres process and waits until it accepts connections.
func (p *Postgres) run(ctx context.Context, bin string, runAs *runAsUser, ephemeral bool, settings []string) error {
	args := []string{"-D", p.dataDir,
		"-c", "listen_addresses=" + loopback,
		"-c", "port=" + strconv.Itoa(p.port),
		"-c", "unix_socket_directories=" + p.socketDir,
	}
	if ephemeral {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, s := range settings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = p.logs.direct(), p.logs.direct()
	cmd.SysProcAttr = runAs.sysProcAttr(syscall.SIGINT)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	proc, err := startChild(cmd)
	if err != nil {
		return err
	}
	p.proc = proc
	if err := p.waitReady(ctx); err != nil {
		_ = proc.stop(syscall.SIGQUIT, 5*time.Second)
		return withTail(err, p.logs)
	}
	p.logger.Info("postgres is up", "url", p.URL("postgres"), "log", p.logPath, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// waitReady waits until the server answers a ping, failing early when the
// process exits.
func (p *Postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, postgresStartTimeout)
	defer cancel()
	for {
		if p.proc.exited() {
			return fmt.Errorf("postgres exited while starting: %v", p.proc.err)
		}
		err := ping(ctx, p.URL("postgres"))
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections: %w (last error: %v)", ctx.Err(), err)
		case <-p.proc.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// URL returns the connection URL of database on this server, as the
// `postgres` superuser.
func (p *Postgres) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", loopback, p.port, url.PathEscape(database))
}

// Port returns the TCP port the server listens on.
func (p *Postgres) Port() int { return p.port }

// CreateDatabase creates database name; it is not an error if it exists.
func (p *Postgres) CreateDatabase(ctx context.Context, name string) error {
	return CreateDatabase(ctx, p.URL("postgres"), name)
}

// DropDatabase drops database name, closing its connections; it is not an
// error if it does not exist.
func (p *Postgres) DropDatabase(ctx context.Context, name string) error {
	return DropDatabase(ctx, p.URL("postgres"), name)
}

// Stop shuts the server down (SIGINT: fast shutdown), killing it when it
// has not stopped after 10 s. Calling Stop again returns the first result.
func (p *Postgres) Stop() error {
	p.stopOnce.Do(func() {
		if err := p.proc.stop(syscall.SIGINT, 10*time.Second); err != nil {
			p.stopErr = fmt.Errorf("stop postgres: %w", err)
		}
		p.release()
		p.logger.Info("postgres stopped", "dir", p.dataDir)
	})
	return p.stopErr
}

// release frees what a stopped (or never started) server holds.
func (p *Postgres) release() {
	if p.logs != nil {
		_ = p.logs.Close()
	}
	if p.tempSock {
		_ = os.RemoveAll(p.socketDir)
	}
	if p.instance != nil {
		_ = p.instance.Close()
	}
}

// CreateDatabase creates database name on the server of adminURL (a URL of
// a user allowed to create databases); it is not an error if it exists.
func CreateDatabase(ctx context.Context, adminURL, name string) error {
	err := execAdmin(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	// 42P04: duplicate_database; 23505: the same, raced by a concurrent CREATE.
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name on the server of adminURL, closing its
// connections (Postgres 13 or newer); it is not an error if it does not
// exist.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	if err := execAdmin(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func execAdmin(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// DatabaseURL returns serverURL (a postgres:// URL) with its database
// replaced by name.
func DatabaseURL(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("not a postgres:// URL: %q", serverURL)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
