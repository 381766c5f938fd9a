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
