package main

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

// service is one process of the service under attack (`sika api` or `sika worker`) with its
// supervisor: it is started again whenever it exits, unless a fault holds it down. Its output is
// appended to a log file, which also tells when it is ready (readyLine).
type service struct {
	name      string
	bin       string
	env       []string
	logPath   string
	readyLine string
	log       *slog.Logger

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{} // closed when the current process has exited
	startedAt  time.Time
	logOffset  int64         // size of the log file when the current process started
	hold       chan struct{} // non-nil while a fault holds the service down; closed on release
	closing    bool
	starts     int
	unplanned  []string // exits nobody asked for, with their status
	startFails int
	loopDone   chan struct{}
}

func newService(name, bin string, env []string, logPath, readyLine string, log *slog.Logger) *service {
	return &service{name: name, bin: bin, env: env, logPath: logPath, readyLine: readyLine,
		log: log.With("service", name), loopDone: make(chan struct{})}
}

// run starts the supervisor loop.
func (s *service) run() {
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

// spawn starts one process unless the service is held or closing. The process is started and
// waited for by one goroutine locked to its OS thread, so that its parent-death signal (sent when
// the forking thread ends) means "the harness died" and nothing else.
func (s *service) spawn() (<-chan struct{}, error) {
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
		cmd := exec.Command(s.bin, s.name)
		cmd.Env = s.env
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			s.mu.Unlock()
			ch <- started{err: fmt.Errorf("start sika %s: %w", s.name, err)}
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

// stop holds the service down and ends its process with sig, killing it after grace. It returns
// once the process has exited; release lets the supervisor start it again.
func (s *service) stop(sig syscall.Signal, grace time.Duration) error {
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
		return fmt.Errorf("signal sika %s: %w", s.name, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return fmt.Errorf("sika %s did not exit within %s of %s; killed it", s.name, grace, sig)
}

// release lets the supervisor start the service again.
func (s *service) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// readySince reports whether a process started after t runs and has logged its ready line.
func (s *service) readySince(t time.Time) bool {
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

// state describes the service for error messages.
func (s *service) state() string {
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

// counts returns how often the service was started, exited on its own and failed to start.
func (s *service) counts() (starts, unplanned, startFails int, exits []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts, len(s.unplanned), s.startFails, append([]string(nil), s.unplanned...)
}

// close stops the service for good (SIGTERM, then SIGKILL after 20 s).
func (s *service) close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	err := s.stop(syscall.SIGTERM, 20*time.Second)
	s.release()
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
