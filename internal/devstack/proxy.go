package devstack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// balancer is the one address in front of the API replicas: a reverse proxy that sends each
// request to the next healthy replica (round robin). A replica is healthy while its /readyz
// answers 200; it is checked every healthInterval, and taken out at once when a request to it
// fails to connect.
type balancer struct {
	backends []*backend
	next     atomic.Uint64
	proxy    *httputil.ReverseProxy
	server   *http.Server
	stop     context.CancelFunc
	done     sync.WaitGroup
}

type backend struct {
	url     *url.URL
	healthy atomic.Bool
}

type backendKey struct{}

const healthInterval = 250 * time.Millisecond

// startBalancer serves on ln in front of the given base URLs.
func startBalancer(ln net.Listener, targets []string) (*balancer, error) {
	b := &balancer{}
	for _, t := range targets {
		u, err := url.Parse(t)
		if err != nil {
			return nil, err
		}
		b.backends = append(b.backends, &backend{url: u})
	}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			be := r.In.Context().Value(backendKey{}).(*backend)
			r.SetURL(be.url)
			r.Out.Host = r.In.Host // the API sees the address the client used
			r.SetXForwarded()
		},
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second,
			DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			be := r.Context().Value(backendKey{}).(*backend)
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				be.healthy.Store(false)
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the API replica did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	b.checkAll(ctx)
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(healthInterval):
				b.checkAll(ctx)
			}
		}
	}()
	b.server = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.server.Serve(ln) }()
	return b, nil
}

// ServeHTTP sends the request to the next healthy replica, or answers 503 when there is none.
func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := uint64(len(b.backends))
	start := b.next.Add(1)
	for i := range n {
		be := b.backends[(start+i)%n]
		if be.healthy.Load() {
			b.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, be)))
			return
		}
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "no API replica is healthy", http.StatusServiceUnavailable)
}

// checkAll asks every replica's /readyz at once.
func (b *balancer) checkAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, be := range b.backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			be.healthy.Store(readyz(ctx, be.url.String()))
		}()
	}
	wg.Wait()
}

var healthClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// readyz reports whether the API at baseURL answers /readyz with 200.
func readyz(ctx context.Context, baseURL string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// close stops serving and checking.
func (b *balancer) close() {
	b.stop()
	b.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = b.server.Shutdown(ctx)
}
