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
			if i == 4 || i == 5 {
				s.idle += v
			} else {
				s.busy += v
			}
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
	groups []cpuGroup // largest first
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
