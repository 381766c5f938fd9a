package devstack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Replica is one long-lived process of the service (`sika api` or `sika worker`) with its
// supervisor: it is started again whenever it exits, unless Stop holds it down. Its output is
// appended to a log file, which also tells when it is ready (its ready line). The cluster runs
// its API and worker replicas this way, and the chaos harness its processes under attack.
type Replica struct {
	name      string
	bin       string
	args      []string
	env       []string
	logPath   string
	readyLine string
	log       *slog.Logger

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{} // closed when the current process has exited
	startedAt  time.Time
	logOffset  int64         // size of the log file when the current process started
	hold       chan struct{} // non-nil while Stop holds the replica down; closed on Release
	closing    bool
	starts     int
	unplanned  []string // exits nobody asked for, with their status
	startFails int
	loopDone   chan struct{}
}

// ReplicaOptions configures NewReplica.
type ReplicaOptions struct {
	// Name tells the replica apart in logs and reports ("api-1").
	Name string
	// Path and Args are the program and its arguments ("/repo/bin/sika", ["api"]).
	Path string
	Args []string
	// Env is the process's whole environment.
	Env []string
	// LogPath is the file the process's output is appended to.
	LogPath string
	// ReadyLine is what the process writes once it is ready ("api listening").
	ReadyLine string
	// Logger receives the supervisor's messages; nil means slog.Default().
	Logger *slog.Logger
}

// NewReplica returns a replica that is not started yet: see Run.
func NewReplica(o ReplicaOptions) *Replica {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Replica{name: o.Name, bin: o.Path, args: o.Args, env: o.Env, logPath: o.LogPath, readyLine: o.ReadyLine,
		log: o.Logger.With("replica", o.Name), loopDone: make(chan struct{})}
}

// Name returns the replica's name.
func (s *Replica) Name() string { return s.name }

// LogPath returns the file the replica's output goes to.
func (s *Replica) LogPath() string { return s.logPath }

// Run starts the supervisor loop, which starts the process and starts it again whenever it exits
// while not held down.
func (s *Replica) Run() {
	go func() {
		defer close(s.loopDone)
		for {
			s.mu.Lock()
			hold, closing := s.hold, s.closing
			s.mu.Unlock()
			switch {
			case closing:
				return
			case hold != nil:
				<-hold
				continue
			}
			exited, err := s.spawn()
			if err != nil {
				s.mu.Lock()
				s.startFails++
				s.mu.Unlock()
				s.log.Warn("start failed", "err", err)
				time.Sleep(500 * time.Millisecond)
				continue
			}
			if exited == nil { // held or closing by the time it would have started
				continue
			}
			<-exited
			s.mu.Lock()
			planned := s.hold != nil || s.closing
			if !planned {
				status := fmt.Sprint(s.cmd.ProcessState)
				s.unplanned = append(s.unplanned, status)
				s.log.Warn("exited on its own; restarting", "status", status, "log", s.logPath)
			}
			s.mu.Unlock()
			if !planned {
				time.Sleep(300 * time.Millisecond)
			}
		}
	}()
}

// spawn starts one process unless the replica is held or closing. The process is started and
// waited for by one goroutine locked to its OS thread, so that its parent-death signal (sent when
// the forking thread ends) means "the supervising process died" and nothing else.
func (s *Replica) spawn() (<-chan struct{}, error) {
	type started struct {
		exited chan struct{}
		err    error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the child
		s.mu.Lock()
		if s.hold != nil || s.closing {
			s.mu.Unlock()
			ch <- started{}
			return
		}
		logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			s.mu.Unlock()
			ch <- started{err: fmt.Errorf("open %s: %w", s.logPath, err)}
			return
		}
		defer logFile.Close()
		offset, _ := logFile.Seek(0, 2)
		cmd := exec.Command(s.bin, s.args...)
		cmd.Env = s.env
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			s.mu.Unlock()
			ch <- started{err: fmt.Errorf("start %s: %w", s.name, err)}
			return
		}
		exited := make(chan struct{})
		s.cmd, s.exited, s.startedAt, s.logOffset = cmd, exited, time.Now(), offset
		s.starts++
		s.mu.Unlock()
		ch <- started{exited: exited}
		_ = cmd.Wait()
		close(exited)
	}()
	r := <-ch
	if r.exited == nil {
		return nil, r.err
	}
	return r.exited, nil
}

// Stop holds the replica down and ends its process with sig, killing it after grace. It returns
// once the process has exited; release lets the supervisor start it again.
func (s *Replica) Stop(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	if s.hold == nil {
		s.hold = make(chan struct{})
	}
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", s.name, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return fmt.Errorf("%s did not exit within %s of %s; killed it", s.name, grace, sig)
}

// Release lets the supervisor start the replica again.
func (s *Replica) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// ReadySince reports whether a process started after t runs and has logged its ready line.
func (s *Replica) ReadySince(t time.Time) bool {
	s.mu.Lock()
	running := s.cmd != nil && s.hold == nil && !s.startedAt.Before(t) && !isClosed(s.exited)
	offset := s.logOffset
	s.mu.Unlock()
	if !running {
		return false
	}
	f, err := os.Open(s.logPath)
	if err != nil {
		return false
	}
	defer f.Close()
	// What the process wrote since it started; the ready line comes within its first lines.
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<20))
	return err == nil && bytes.Contains(b, []byte(s.readyLine))
}

// Ready reports whether the current process runs and has logged its ready line.
func (s *Replica) Ready() bool {
	s.mu.Lock()
	startedAt := s.startedAt
	s.mu.Unlock()
	return s.ReadySince(startedAt)
}

// State describes the replica for error messages.
func (s *Replica) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.cmd == nil:
		return "never started"
	case s.hold != nil:
		return "held down"
	case isClosed(s.exited):
		return "exited: " + fmt.Sprint(s.cmd.ProcessState)
	}
	return fmt.Sprintf("running since %s, log %s", s.startedAt.Format(time.TimeOnly), s.logPath)
}

// Counts returns how often the replica was started, exited on its own and failed to start.
func (s *Replica) Counts() (starts, unplanned, startFails int, exits []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts, len(s.unplanned), s.startFails, append([]string(nil), s.unplanned...)
}

// Close stops the replica for good (SIGTERM, then SIGKILL after 20 s).
func (s *Replica) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	err := s.Stop(syscall.SIGTERM, 20*time.Second)
	s.Release()
	<-s.loopDone
	return err
}

func isClosed(ch chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
