package devstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// loopback is the only address the private infrastructure listens on.
const loopback = "127.0.0.1"

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on right now.
//
// Like the Temporal SDK and CLI, it leaves a connection to the port in
// TIME_WAIT so that Linux does not hand the same port to the next bind(:0) for
// a while; servers that set SO_REUSEADDR (Postgres and Go servers do) can
// still bind it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", loopback+":0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	addr := l.Addr().(*net.TCPAddr)
	c, err := net.DialTCP("tcp", nil, addr)
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	// Closing the accepted side first puts the server end in TIME_WAIT.
	_ = s.Close()
	return addr.Port, nil
}

// PortFree reports whether port can be listened on at 127.0.0.1 now.
func PortFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", loopback, port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// choosePort returns requested when it is not 0 (failing when it is taken),
// else remembered when it is not 0 and free, else a fresh free port. avoid
// lists ports already chosen for the same server.
func choosePort(requested, remembered int, avoid ...int) (int, error) {
	if requested != 0 {
		if !PortFree(requested) {
			return 0, fmt.Errorf("port %d on %s is already in use", requested, loopback)
		}
		return requested, nil
	}
	taken := func(p int) bool {
		for _, a := range avoid {
			if p == a {
				return true
			}
		}
		return false
	}
	if remembered != 0 && !taken(remembered) && PortFree(remembered) {
		return remembered, nil
	}
	for {
		p, err := FreePort()
		if err != nil || !taken(p) {
			return p, err
		}
	}
}

// instanceFile is the small JSON file next to a piece of persistent state (a
// Postgres data directory, a Temporal database file). It remembers the ports
// chosen on the last run, so that a second `sika dev` keeps its URLs, and
// while a server runs it is flock-ed, so that two processes never start
// servers on the same state.
type instanceFile struct {
	f    *os.File
	data instanceData
}

type instanceData struct {
	PID       int            `json:"pid"`        // ours
	ServerPID int            `json:"server_pid"` // the server's
	Ports     map[string]int `json:"ports"`
}

// openInstanceFile opens (creating it if needed) and locks the instance file
// at path. It fails when another process holds the lock.
func openInstanceFile(path string) (*instanceFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	inst := &instanceFile{f: f}
	// Best effort: an empty or damaged file only means no ports are remembered.
	_ = json.NewDecoder(f).Decode(&inst.data)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: the state next to it is in use by another process (pid %d)", path, inst.data.PID)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return inst, nil
}

// port returns the remembered port called name, or 0.
func (i *instanceFile) port(name string) int {
	return i.data.Ports[name]
}

// save records the ports and pid of the server (and our pid) in the file.
func (i *instanceFile) save(ports map[string]int, serverPID int) error {
	i.data = instanceData{PID: os.Getpid(), ServerPID: serverPID, Ports: ports}
	b, err := json.Marshal(i.data)
	if err != nil {
		return err
	}
	if err := i.f.Truncate(0); err != nil {
		return fmt.Errorf("write %s: %w", i.f.Name(), err)
	}
	if _, err := i.f.WriteAt(append(b, '\n'), 0); err != nil {
		return fmt.Errorf("write %s: %w", i.f.Name(), err)
	}
	return nil
}

// Close releases the lock; the file stays for the next run.
func (i *instanceFile) Close() error {
	return i.f.Close()
}
