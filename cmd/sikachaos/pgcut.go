package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// pgCutter is a TCP proxy the API reaches Postgres through (the worker and the harness connect
// directly). It forwards bytes untouched until a cut is armed with a marker, a string that
// only one request's INSERT carries (its description): the connection that sends the marker is
// then cut, either at once (the INSERT never reaches Postgres: nothing is committed) or just
// after Postgres has committed the transaction, before the answer to COMMIT reaches the API
// (committed, but the API does not know). Either way the API answers a 5xx and releases the
// request's Idempotency-Key: what the store's idempotency backstop is for.
type pgCutter struct {
	ln     net.Listener
	target string // Postgres's host:port (the same across its restarts)
	log    *slog.Logger

	mu    sync.Mutex
	cuts  map[string]*pgCut // armed, by marker
	conns map[*proxiedConn]struct{}
	wg    sync.WaitGroup
}

// cutWhen says where a cut falls.
type cutWhen int

const (
	cutBeforeCommit cutWhen = iota // when the marker is sent: the transaction is rolled back
	cutAfterCommit                 // when Postgres answers COMMIT: committed, the answer lost
)

// pgCut is one armed cut and what became of it.
type pgCut struct {
	marker []byte
	when   cutWhen

	mu     sync.Mutex
	result cutResult
}

// cutResult is what became of a cut.
type cutResult int

const (
	cutPending cutResult = iota // the marker was not seen (yet)
	cutDone                     // cut where asked
	cutMissed                   // the marker was sent, but its transaction ended without COMMIT
)

func (c *pgCut) set(r cutResult) {
	c.mu.Lock()
	if c.result == cutPending {
		c.result = r
	}
	c.mu.Unlock()
}

func (c *pgCut) get() cutResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result
}

// newPGCutter listens on a loopback port in front of target.
func newPGCutter(target string, log *slog.Logger) (*pgCutter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &pgCutter{ln: ln, target: target, log: log, cuts: map[string]*pgCut{}, conns: map[*proxiedConn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// port is where the API connects.
func (p *pgCutter) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// arm makes the next connection that sends marker be cut as when says.
func (p *pgCutter) arm(marker string, when cutWhen) *pgCut {
	c := &pgCut{marker: []byte(marker), when: when}
	p.mu.Lock()
	p.cuts[marker] = c
	p.mu.Unlock()
	return c
}

// disarm forgets a cut that has not been claimed by a connection.
func (p *pgCutter) disarm(c *pgCut) {
	p.mu.Lock()
	delete(p.cuts, string(c.marker))
	p.mu.Unlock()
}

// claim returns the armed cut whose marker data holds, removing it from the armed ones.
func (p *pgCutter) claim(data []byte) *pgCut {
	p.mu.Lock()
	defer p.mu.Unlock()
	for m, c := range p.cuts {
		if bytes.Contains(data, c.marker) {
			delete(p.cuts, m)
			return c
		}
	}
	return nil
}

// maxMarker bounds a marker's length (the bytes kept between reads to find one split by them).
const maxMarker = 64

func (p *pgCutter) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.proxy(client)
		}()
	}
}

// proxiedConn is one API connection and its Postgres connection.
type proxiedConn struct {
	client, server net.Conn
	once           sync.Once
	mu             sync.Mutex
	watch          *pgCut // a cut waiting for this connection's COMMIT
}

// cut ends both sides at once; reset sends the API a TCP reset rather than an end of stream.
func (pc *proxiedConn) cut(reset bool) {
	pc.once.Do(func() {
		if tc, ok := pc.client.(*net.TCPConn); ok && reset {
			_ = tc.SetLinger(0)
		}
		_ = pc.client.Close()
		_ = pc.server.Close()
	})
}

func (p *pgCutter) proxy(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil { // Postgres is down: the API sees its connection refused as an end of stream
		_ = client.Close()
		return
	}
	pc := &proxiedConn{client: client, server: server}
	p.mu.Lock()
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	defer func() {
		pc.cut(false)
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
	}()
	go p.upstream(pc)
	p.downstream(pc)
}

// upstream forwards the API's bytes to Postgres, looking for armed markers.
func (p *pgCutter) upstream(pc *proxiedConn) {
	defer pc.cut(false)
	buf := make([]byte, 32<<10)
	var tail []byte // the last bytes of the previous read
	for {
		n, err := pc.client.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			p.mu.Lock()
			armed := len(p.cuts) > 0
			p.mu.Unlock()
			if armed {
				if c := p.claim(append(tail, chunk...)); c != nil {
					if c.when == cutBeforeCommit {
						p.log.Info("pgcut: cut before the commit", "marker", string(c.marker))
						c.set(cutDone)
						pc.cut(true)
						return
					}
					pc.mu.Lock()
					pc.watch = c
					pc.mu.Unlock()
				}
			}
			tail = append(tail[:0], chunk[max(0, len(chunk)-maxMarker):]...)
			if _, werr := pc.server.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// downstream forwards Postgres's messages to the API. It follows their framing (a type byte and
// a length) so that a watched connection is cut at its CommandComplete "COMMIT": Postgres has
// committed, the API never learns it. A ReadyForQuery "idle" before it means the transaction
// ended otherwise (rolled back): the cut is missed.
func (p *pgCutter) downstream(pc *proxiedConn) {
	var f pgFrames
	buf := make([]byte, 32<<10)
	for {
		n, err := pc.server.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			pc.mu.Lock()
			watch := pc.watch
			pc.mu.Unlock()
			cutHere := false
			f.feed(chunk, watch != nil, func(typ byte, body []byte) bool {
				switch {
				case watch == nil:
				case typ == 'C' && string(body) == "COMMIT\x00":
					cutHere = true
					return false
				case typ == 'Z' && len(body) == 1 && body[0] == 'I':
					watch.set(cutMissed)
					pc.mu.Lock()
					pc.watch, watch = nil, nil
					pc.mu.Unlock()
				}
				return true
			})
			if cutHere {
				p.log.Info("pgcut: cut after the commit", "marker", string(watch.marker))
				watch.set(cutDone)
				pc.cut(true)
				return
			}
			if _, werr := pc.client.Write(chunk); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				p.log.Debug("pgcut: server side", "err", err)
			}
			return
		}
	}
}

// pgFrames follows the framing of Postgres's backend messages across reads.
type pgFrames struct {
	hdr  [5]byte
	hn   int    // header bytes read of the current message
	left int    // body bytes still to come of the current message
	body []byte // the current body, kept when it is short and someone looks
	keep bool
}

// feed walks chunk; when look is set it calls each for every complete message of type 'C' or
// 'Z' with its body, and stops at the first for which each returns false (the connection is
// then cut: the framing is not followed any further).
func (f *pgFrames) feed(chunk []byte, look bool, each func(typ byte, body []byte) bool) {
	for len(chunk) > 0 {
		if f.hn < 5 {
			k := copy(f.hdr[f.hn:], chunk)
			f.hn += k
			chunk = chunk[k:]
			if f.hn < 5 {
				return
			}
			f.left = int(binary.BigEndian.Uint32(f.hdr[1:5])) - 4
			typ := f.hdr[0]
			f.keep = look && (typ == 'C' || typ == 'Z') && f.left <= 64
			f.body = f.body[:0]
		}
		k := min(f.left, len(chunk))
		if f.keep {
			f.body = append(f.body, chunk[:k]...)
		}
		f.left -= k
		chunk = chunk[k:]
		if f.left == 0 {
			f.hn = 0
			if f.keep && !each(f.hdr[0], f.body) {
				return
			}
		}
	}
}

// close stops the proxy and every connection through it.
func (p *pgCutter) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for pc := range p.conns {
		pc.cut(false)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// pgCutterURL is the API's database URL through the proxy.
func pgCutterURL(port int, database string) string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/" + database + "?sslmode=disable"
}
