package devstack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// logSink receives the output of a child process: it appends it to a file
// when it has one, else logs every line through the logger at debug level
// (keeping the last few kilobytes in memory). Its tail goes into error
// messages.
//
// A child can write to the file directly (see direct), so that what it says
// after we are gone (killed, say) is kept. Given to exec.Cmd as is, the sink
// is fed through a pipe, and learns when the child has exited: the copy of
// the pipe (exec uses io.Copy, which calls our ReadFrom) reaches EOF.
type logSink struct {
	mu      sync.Mutex
	file    *os.File
	start   int64 // the size of the file when opened: the tail starts after it
	logger  *slog.Logger
	source  string
	partial []byte // an incomplete last line
	tail    []byte

	eofOnce sync.Once
	eof     chan struct{}
}

const logTailBytes = 8 << 10

// newLogSink returns a sink appending to path, or logging lines tagged with
// source when path is "".
func newLogSink(path string, logger *slog.Logger, source string) (*logSink, error) {
	s := &logSink{logger: logger, source: source, eof: make(chan struct{})}
	if path != "" {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open log file: %w", err)
		}
		s.file = f
		if fi, err := f.Stat(); err == nil {
			s.start = fi.Size()
		}
	}
	return s, nil
}

// direct returns what to give a child process as its stdout and stderr so
// that it writes to the file itself (when there is one).
func (s *logSink) direct() io.Writer {
	if s.file != nil {
		return s.file
	}
	return s
}

// Write implements io.Writer.
func (s *logSink) Write(p []byte) (int, error) {
	if s.file != nil {
		return s.file.Write(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, p...)
	if over := len(s.tail) - logTailBytes; over > 0 {
		s.tail = append(s.tail[:0], s.tail[over:]...)
	}
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(s.partial[:i])); line != "" {
			s.logger.Debug(line, "source", s.source)
		}
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

// ReadFrom implements io.ReaderFrom: it copies r until EOF, then marks the
// output as ended.
func (s *logSink) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(struct{ io.Writer }{s}, r) // the struct hides ReadFrom
	s.eofOnce.Do(func() { close(s.eof) })
	return n, err
}

// ended returns a channel closed when an output stream copied with ReadFrom
// has ended: when the child writing to it has exited.
func (s *logSink) ended() <-chan struct{} {
	return s.eof
}

// Tail returns the last lines of output, for error messages.
func (s *logSink) Tail() string {
	s.mu.Lock()
	tail := s.tail
	s.mu.Unlock()
	if s.file != nil {
		tail = nil
		if fi, err := s.file.Stat(); err == nil {
			off := max(fi.Size()-logTailBytes, s.start)
			tail = make([]byte, fi.Size()-off)
			n, _ := s.file.ReadAt(tail, off)
			tail = tail[:n]
		}
	}
	lines := strings.Split(strings.TrimSpace(string(tail)), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	return strings.Join(lines, "\n")
}

// Close closes the file, if any.
func (s *logSink) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// withTail adds the last output of a process to err.
func withTail(err error, sink *logSink) error {
	if tail := sink.Tail(); tail != "" {
		return fmt.Errorf("%w; last output:\n%s", err, tail)
	}
	return err
}

// runLogged runs a short-lived command, sending its output to the logger (at
// debug level) and putting the tail of the output in the error when it fails.
func runLogged(cmd *exec.Cmd, logger *slog.Logger) error {
	sink, _ := newLogSink("", logger, filepath.Base(cmd.Path))
	cmd.Stdout, cmd.Stderr = sink, sink
	if err := cmd.Run(); err != nil {
		return withTail(fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err), sink)
	}
	return nil
}

// child is a long-lived child process whose exit is observed in the
// background.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and been waited for
	err  error         // the result of Wait, valid once done is closed
}

// startChild starts cmd and waits for it in the background.
//
// Start and Wait run in one goroutine locked to its OS thread: Linux sends
// SysProcAttr.Pdeathsig when the thread that forked the child exits, not the
// process, so the thread must live exactly as long as the child. The signal
// then means "our process died" and nothing else.
func startChild(cmd *exec.Cmd) (*child, error) {
	c := &child{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Deliberately no UnlockOSThread: the thread ends with this goroutine.
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// startServerProcess starts the long-lived server bin with args in dir, its output appended to
// logPath (or, when "", logged through logger tagged with source), in a process group of its own
// and killed if our process dies.
func startServerProcess(bin, dir, logPath, source string, logger *slog.Logger, args ...string) (*child, *logSink, error) {
	logs, err := newLogSink(logPath, logger, source)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logs.direct(), logs.direct()
	cmd.SysProcAttr = (*runAsUser)(nil).sysProcAttr(syscall.SIGKILL)
	cmd.WaitDelay = 5 * time.Second
	proc, err := startChild(cmd)
	if err != nil {
		_ = logs.Close()
		return nil, nil, err
	}
	return proc, logs, nil
}

// abandonStart kills a server of startServerProcess that did not come up and returns err with
// the server's last output.
func abandonStart(proc *child, logs *logSink, err error) error {
	_ = proc.stop(syscall.SIGKILL, 5*time.Second)
	err = withTail(err, logs)
	_ = logs.Close()
	return err
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends sig to the process, waits up to grace for it to end, then kills
// its whole process group. It returns nil when the process ended by itself,
// exited 0 or died of sig.
func (c *child) stop(sig syscall.Signal, grace time.Duration) error {
	if c.exited() {
		return nil
	}
	pid := c.cmd.Process.Pid
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the group: it has its own
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("pid %d did not stop within %s after %s; killed it", pid, grace, sig)
	}
	if diedOf(c.err, sig) {
		return nil
	}
	return c.err
}

// diedOf reports whether err, from waiting for a process, says that the
// process was ended by sig.
func diedOf(err error, sig syscall.Signal) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// runAsUser describes the OS user a server must run as; nil means "as
// ourselves".
type runAsUser struct {
	name string
	cred *syscall.Credential
}

// postgresUser returns the OS user Postgres must run as: nil when we are not
// root, the `postgres` user when we are (Postgres refuses to run as root).
func postgresUser() (*runAsUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := lookupUser("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and Postgres refuses to run as root; the postgres OS user is needed (the Debian postgresql package creates it): %w", err)
	}
	return u, nil
}

// sysProcAttr returns the attributes for a child process that runs as u (if
// not nil), in its own process group (so that a Ctrl-C on the terminal reaches
// only us, and we stop it in order), and gets deathSig if our process dies.
func (u *runAsUser) sysProcAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
	if u != nil {
		a.Credential = u.cred
	}
	return a
}

// chown gives path to u (a no-op for a nil u).
func (u *runAsUser) chown(path string) error {
	if u == nil {
		return nil
	}
	if err := os.Lchown(path, int(u.cred.Uid), int(u.cred.Gid)); err != nil {
		return fmt.Errorf("chown %s to %s: %w", path, u.name, err)
	}
	return nil
}

// chownTree gives the tree at root to u unless root already belongs to u.
func (u *runAsUser) chownTree(root string) error {
	if u == nil {
		return nil
	}
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == u.cred.Uid {
		return nil
	}
	return filepath.WalkDir(root, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.chown(path)
	})
}

// ensureTraversable makes sure u can reach dir: each ancestor must be
// searchable by u. Ancestors that are not get the "others may search" bit
// (o+x: it lets nobody list or read them), with a log line saying so; this
// is what temporary directories made with mode 0700 need.
func (u *runAsUser) ensureTraversable(dir string, logger *slog.Logger) error {
	if u == nil {
		return nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		searchable := mode&0o001 != 0 ||
			(ok && st.Uid == u.cred.Uid && mode&0o100 != 0) ||
			(ok && u.inGroup(st.Gid) && mode&0o010 != 0)
		if !searchable {
			logger.Info("letting the "+u.name+" user traverse a directory (chmod o+x)", "dir", d)
			if err := os.Chmod(d, fi.Mode()|0o001); err != nil {
				return fmt.Errorf("let %s traverse %s: %w", u.name, d, err)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// lookupUser returns the credential of the OS user called name, with its
// supplementary groups.
func lookupUser(name string) (*runAsUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil && g != gid {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return &runAsUser{name: name, cred: cred}, nil
}

func (u *runAsUser) inGroup(gid uint32) bool {
	if gid == u.cred.Gid {
		return true
	}
	for _, g := range u.cred.Groups {
		if g == gid {
			return true
		}
	}
	return false
}

// processName returns the command name of a live (not zombie) process, or ""
// when there is no such process.
func processName(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// "pid (comm) state ppid ..."; comm may contain spaces and parentheses.
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open || len(stat) < end+3 || stat[end+2] == 'Z' {
		return ""
	}
	return string(stat[open+1 : end])
}

// waitGone waits up to timeout for process pid (not a child of ours) to end.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for processName(pid) != "" {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
