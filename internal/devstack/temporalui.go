package devstack

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"text/template"
	"time"
)

// TemporalUIVersion is the Temporal Web UI server (github.com/temporalio/ui-server/v2, which
// embeds the UI's assets) that EnsureTemporalUI builds: the version the Temporal CLI of
// TemporalCLIVersion depends on (its go.mod), so that both builds share their downloads.
const TemporalUIVersion = "v2.42.1"

const temporalUIPackage = "github.com/temporalio/ui-server/v2/cmd/server"

// temporalUIStartTimeout bounds the wait for the UI server to answer.
const temporalUIStartTimeout = time.Minute

// EnsureTemporalUI returns <repoRoot>/bin/temporal-ui-server, building it when missing with
// `go install github.com/temporalio/ui-server/v2/cmd/server@TemporalUIVersion` (a few minutes
// the first time), under the lock of the other Temporal builds. repoRoot "" means the module
// root above the working directory. Nothing but Go modules is downloaded.
func EnsureTemporalUI(ctx context.Context, repoRoot string, logger *slog.Logger) (string, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if repoRoot == "" {
		var err error
		if repoRoot, err = FindRepoRoot("."); err != nil {
			return "", fmt.Errorf("find the temporal UI server: %w", err)
		}
	}
	binDir := filepath.Join(repoRoot, "bin")
	path := filepath.Join(binDir, "temporal-ui-server")
	if err := ensureGoTool(ctx, binDir, temporalUIPackage+"@"+TemporalUIVersion, path, logger); err != nil {
		return "", fmt.Errorf("build temporal-ui-server: %w", err)
	}
	return path, nil
}

// TemporalUIOptions configures StartTemporalUI.
type TemporalUIOptions struct {
	// Bin is the UI server (see EnsureTemporalUI). Required.
	Bin string
	// TemporalAddress is host:port of the Temporal frontend the UI talks to. Required.
	TemporalAddress string
	// Namespace is the namespace the UI opens on; "" means "default".
	Namespace string
	// Dir receives the server's configuration (config/development.yaml). Required.
	Dir string
	// LogPath is the server's log file; "" logs its output at debug level through Logger.
	LogPath string
	// Port is the HTTP port on 127.0.0.1; 0 picks a free one.
	Port int
	// CodecEndpoint, when set, is the codec server the UI decodes payloads with (Sika's
	// <public URL>/console/codec): the UI calls it from the browser with the browser's
	// credentials (includeCredentials), so that the support console's session reaches it.
	CodecEndpoint string
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

// TemporalUI is a running Temporal Web UI server, a child process.
type TemporalUI struct {
	// URL is where the UI is served (http://127.0.0.1:port, no trailing slash).
	URL  string
	proc *child
	logs *logSink
}

// temporalUIConfig is the UI server's configuration: what the CLI's dev server gives the UI
// it embeds (temporalcli/devserver), on loopback, without the version check.
var temporalUIConfig = template.Must(template.New("ui").Parse(`# written by sika (internal/devstack): the Temporal Web UI
temporalGrpcAddress: "{{.Address}}"
host: 127.0.0.1
port: {{.Port}}
enableUi: true
defaultNamespace: "{{.Namespace}}"
notifyOnNewVersion: false
hideLogs: true
cors:
  cookieInsecure: true
{{- if .Codec}}
codec:
  endpoint: "{{.Codec}}"
  includeCredentials: true
{{- end}}
`))

// StartTemporalUI starts the UI server and returns once it serves the UI and its API lists
// the namespaces of the Temporal frontend (so the frontend answers through it).
func StartTemporalUI(ctx context.Context, opts TemporalUIOptions) (_ *TemporalUI, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("start the temporal UI: %w", err)
		}
	}()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if !isExecutable(opts.Bin) {
		return nil, fmt.Errorf("%q is not an executable file", opts.Bin)
	}
	if opts.Port == 0 {
		if opts.Port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	confDir := filepath.Join(opts.Dir, "config")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := temporalUIConfig.Execute(&b, map[string]any{"Address": opts.TemporalAddress, "Port": opts.Port, "Namespace": opts.Namespace,
		"Codec": opts.CodecEndpoint}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(confDir, "development.yaml"), b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	start := time.Now()
	proc, logs, err := startServerProcess(opts.Bin, opts.Dir, opts.LogPath, "temporal-ui-server", opts.Logger,
		"--root", opts.Dir, "--config", "config", "--env", "development", "start")
	if err != nil {
		return nil, err
	}
	ui := &TemporalUI{URL: "http://" + net.JoinHostPort(loopback, strconv.Itoa(opts.Port)), proc: proc, logs: logs}
	if err := ui.await(ctx); err != nil {
		return nil, abandonStart(proc, logs, err)
	}
	opts.Logger.Info("temporal UI is up", "url", ui.URL, "temporal", opts.TemporalAddress, "took", time.Since(start).Round(time.Millisecond))
	return ui, nil
}

// await waits until the UI's page and its API's namespace list answer 200.
func (ui *TemporalUI) await(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, temporalUIStartTimeout)
	defer cancel()
	tries, cancelTries := context.WithCancel(ctx) // a request in flight ends when the server does
	defer cancelTries()
	go func() {
		select {
		case <-ui.proc.done:
			cancelTries()
		case <-tries.Done():
		}
	}()
	var last error
	for {
		if ui.proc.exited() {
			return fmt.Errorf("the temporal UI server exited while starting: %v", ui.proc.err)
		}
		last = nil
		for _, path := range []string{"/", "/api/v1/namespaces"} {
			if last = getOK(tries, ui.URL+path); last != nil {
				break
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the temporal UI at %s does not answer: %w (last error: %v)", ui.URL, ctx.Err(), last)
		case <-ui.proc.done:
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// getOK fails unless GET url answers 200 within a few seconds.
func getOK(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// Stop ends the UI server (SIGTERM; it keeps no state), killing it after a few seconds.
func (ui *TemporalUI) Stop() error {
	err := ui.proc.stop(syscall.SIGTERM, 5*time.Second)
	_ = ui.logs.Close()
	if err != nil && !diedOf(err, syscall.SIGKILL) {
		return fmt.Errorf("stop the temporal UI: %w", err)
	}
	return nil
}
