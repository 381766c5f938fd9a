package gatewaytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Fake is what the wire-faithful fakes of the operators share (mtnfake, orangefake, wavefake):
// a server on loopback that speaks the operator's wire format until the test ends, the lock of
// the fake's state, and the test's errors named after the operator. A fake embeds it and calls
// Start with its handler.
type Fake struct {
	// Mu guards the embedding fake's state: its operations, counters and settings.
	Mu   sync.Mutex
	t    testing.TB
	name string
	srv  *httptest.Server
}

// Start serves h on loopback until t ends; name is the operator's ("MTN"), in errors.
func (f *Fake) Start(t testing.TB, name string, h http.HandlerFunc) {
	f.t, f.name = t, name
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
}

// URL is the fake's base URL (the adapter's BaseURL).
func (f *Fake) URL() string { return f.srv.URL }

// T is the test the fake reports to.
func (f *Fake) T() testing.TB { return f.t }

// Errorf reports a request that breaks the operator's wire format on the test.
func (f *Fake) Errorf(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf("fake "+f.name+": "+format, args...)
}

// Set changes a setting of the fake (a delay, a forced answer) under its lock.
func Set[T any](f *Fake, setting *T, v T) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	*setting = v
}

// WriteJSON answers status with v as JSON, as every operator's API does.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
