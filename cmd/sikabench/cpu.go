package main

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc CPU times (100 on every Linux the project runs on).
const clockTicks = 100

// cpuSnapshot is the machine's CPU time and each process's, from /proc (Linux; empty
// elsewhere). It shows where the cores went during the window: this process (in -self mode the
// API, worker, sandbox and clients), the Temporal server, Postgres, and anything else running.
type cpuSnapshot struct {
	at         time.Time
	busy, idle int64           // ticks, all cores
	irq, steal int64           // of busy: interrupts (loopback networking is softirq), hypervisor
	procs      map[int]procCPU // by pid
}

type procCPU struct {
	comm  string
	ppid  int
	ticks int64 // utime + stime
}

func takeCPUSnapshot() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), procs: map[int]procCPU{}}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i := 1; i < len(f) && i <= 8; i++ { // user nice system idle iowait irq softirq steal
			v, _ := strconv.ParseInt(f[i], 10, 64)
			switch i {
			case 4, 5:
				s.idle += v
				continue
			case 6, 7:
				s.irq += v
			case 8:
				s.steal += v
			}
			s.busy += v
		}
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime(14) stime(15); comm may hold spaces and parentheses.
		open, closing := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(string(b[closing+1:]))
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		s.procs[pid] = procCPU{comm: string(b[open+1 : closing]), ppid: ppid, ticks: ut + st}
	}
	return s
}

// cpuUse is the CPU spent between two snapshots.
type cpuUse struct {
	span   time.Duration
	cores  int
	busy   time.Duration // every process, kernel included (/proc/stat)
	idle   time.Duration
	irq    time.Duration // of busy: irq + softirq
	steal  time.Duration // of busy: taken by the hypervisor
	groups []cpuGroup    // largest first
}

type cpuGroup struct {
	name string
	cpu  time.Duration
}

// sub groups the processes alive at the end by what they are: this process, its descendants
// (our Temporal server and Postgres) by name, then everything else by name, prefixed "other".
func (end cpuSnapshot) sub(start cpuSnapshot) cpuUse {
	u := cpuUse{span: end.at.Sub(start.at), cores: runtime.NumCPU()}
	tick := time.Second / clockTicks
	u.busy, u.idle = time.Duration(end.busy-start.busy)*tick, time.Duration(end.idle-start.idle)*tick
	u.irq, u.steal = time.Duration(end.irq-start.irq)*tick, time.Duration(end.steal-start.steal)*tick
	self := os.Getpid()
	ours := func(pid int) bool {
		for i := 0; i < 64 && pid > 1; i++ {
			if pid == self {
				return true
			}
			pid = end.procs[pid].ppid
		}
		return false
	}
	by := map[string]time.Duration{}
	for pid, p := range end.procs {
		d := p.ticks - start.procs[pid].ticks // a process born in the window started at 0
		if d <= 0 {
			continue
		}
		name := p.comm
		switch {
		case pid == self:
			name = "sikabench (this process)"
		case ours(pid):
			name = p.comm + " (ours)"
		default:
			name = "other: " + p.comm
		}
		by[name] += time.Duration(d) * tick
	}
	for name, d := range by {
		u.groups = append(u.groups, cpuGroup{name, d})
	}
	sort.Slice(u.groups, func(i, j int) bool { return u.groups[i].cpu > u.groups[j].cpu })
	return u
}

// others is the busy time spent neither by this process and its descendants nor in interrupts
// or steal: other processes, alive or exited during the window.
func (u cpuUse) others() time.Duration {
	ours := time.Duration(0)
	for _, g := range u.groups {
		if !strings.HasPrefix(g.name, "other") {
			ours += g.cpu
		}
	}
	return max(0, u.busy-u.irq-u.steal-ours)
}

// cpuTracker samples /proc every second between start and finish, so that processes which
// exit during the window (test binaries, compilers) are still counted, by name, up to their
// last sample.
type cpuTracker struct {
	start      cpuSnapshot
	seen       map[int]procCPU
	stop, done chan struct{}
}

func startCPUTracker() *cpuTracker {
	t := &cpuTracker{start: takeCPUSnapshot(), seen: map[int]procCPU{}, stop: make(chan struct{}), done: make(chan struct{})}
	for pid, p := range t.start.procs {
		t.seen[pid] = p
	}
	go func() {
		defer close(t.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
			}
			for pid, p := range takeCPUSnapshot().procs {
				t.seen[pid] = p
			}
		}
	}()
	return t
}

func (t *cpuTracker) finish() cpuUse {
	close(t.stop)
	<-t.done
	end := takeCPUSnapshot()
	for pid, p := range t.seen {
		if _, alive := end.procs[pid]; !alive {
			end.procs[pid] = p
		}
	}
	return end.sub(t.start)
}
