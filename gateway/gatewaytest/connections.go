package gatewaytest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Connections gives an adapter under test an HTTP client whose next dial can be refused for
// real (a connection to a loopback port nobody listens on): the RefuseConnection behaviour of
// every fake operator.
type Connections struct {
	closed    string
	transport *http.Transport

	mu     sync.Mutex
	refuse bool
}

// NewConnections returns a switch whose client dials normally until RefuseNext; its idle
// connections are closed when t ends.
func NewConnections(t testing.TB) *Connections {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a closed port: %v", err)
	}
	c := &Connections{closed: l.Addr().String()}
	_ = l.Close()
	c.transport = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.mu.Lock()
		refuse := c.refuse
		c.refuse = false
		c.mu.Unlock()
		if refuse {
			addr = c.closed // a real connection refused
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(c.transport.CloseIdleConnections)
	return c
}

// Client is the HTTP client to give the adapter.
func (c *Connections) Client() *http.Client { return &http.Client{Transport: c.transport} }

// RefuseNext makes the next dial, whichever endpoint it is for, be refused; open connections
// are closed first so that the next call must dial.
func (c *Connections) RefuseNext() {
	c.mu.Lock()
	c.refuse = true
	c.mu.Unlock()
	c.transport.CloseIdleConnections()
}

// Script is what a fake operator is told to do: the behaviours of its next initiations
// (Controls.Next) and the refusable connections of the adapter's client. A fake embeds it,
// which gives it Next and HTTPClient; its initiations call Take.
type Script struct {
	mu    sync.Mutex
	next  []Behaviour
	conns *Connections
}

// HTTPClient returns the client to give the adapter: its dials go through the refusal switch
// that Next(RefuseConnection) throws.
func (s *Script) HTTPClient(t testing.TB) *http.Client {
	conns := NewConnections(t)
	s.mu.Lock()
	s.conns = conns
	s.mu.Unlock()
	return conns.Client()
}

// Next sets the behaviour of the next initiation (Controls); RefuseConnection refuses the next
// dial of HTTPClient's client, whichever endpoint it is for.
func (s *Script) Next(b Behaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b == RefuseConnection {
		if s.conns != nil {
			s.conns.RefuseNext()
		}
		return
	}
	s.next = append(s.next, b)
}

// Take returns the behaviour of the initiation being served: the next one set, else Succeed.
func (s *Script) Take() Behaviour {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.next) == 0 {
		return Succeed
	}
	b := s.next[0]
	s.next = s.next[1:]
	return b
}
