package gateway

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Candidate is a gateway the routing table lists for a network, with its priority (1 first).
type Candidate struct {
	Gateway  string
	Priority int
}

// Router holds the configured gateways and observes their health: a gateway that failed to
// accept requests several times in a row is tried after the healthy ones until it answers again.
type Router struct {
	gateways map[string]Gateway
	health   HealthPolicy

	mu    sync.Mutex
	state map[string]*healthState
	now   func() time.Time
}

// HealthPolicy says when a gateway counts as unhealthy.
type HealthPolicy struct {
	// FailuresToTrip consecutive unavailable answers mark a gateway unhealthy (default 3).
	FailuresToTrip int
	// Cooldown is how long it stays unhealthy before being tried first again (default 30s).
	Cooldown time.Duration
}

type healthState struct {
	failures       int
	unhealthyUntil time.Time
}

// NewRouter returns a router over the given gateways.
func NewRouter(policy HealthPolicy, gateways ...Gateway) *Router {
	if policy.FailuresToTrip == 0 {
		policy.FailuresToTrip = 3
	}
	if policy.Cooldown == 0 {
		policy.Cooldown = 30 * time.Second
	}
	r := &Router{gateways: map[string]Gateway{}, health: policy, state: map[string]*healthState{}, now: time.Now}
	for _, g := range gateways {
		r.gateways[g.Name()] = observe(g)
	}
	return r
}

// Gateway returns a configured gateway by name (a nil Router has none), observed: its calls
// are timed and traced (see observed).
func (r *Router) Gateway(name string) (Gateway, error) {
	if r == nil {
		return nil, fmt.Errorf("gateway %q is not configured", name)
	}
	g, ok := r.gateways[name]
	if !ok {
		return nil, fmt.Errorf("gateway %q is not configured", name)
	}
	return g, nil
}

// Order returns the candidates this process can reach, healthy ones first, each group by
// priority. Unhealthy gateways are kept at the end: when every gateway is down, trying one is
// still better than refusing the payment.
func (r *Router) Order(candidates []Candidate) []Candidate {
	now := r.now()
	var healthy, unhealthy []Candidate
	r.mu.Lock()
	for _, c := range candidates {
		if _, ok := r.gateways[c.Gateway]; !ok {
			continue
		}
		if st := r.state[c.Gateway]; st != nil && now.Before(st.unhealthyUntil) {
			unhealthy = append(unhealthy, c)
		} else {
			healthy = append(healthy, c)
		}
	}
	r.mu.Unlock()
	byPriority := func(cs []Candidate) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Priority < cs[j].Priority })
	}
	byPriority(healthy)
	byPriority(unhealthy)
	return append(healthy, unhealthy...)
}

// Healthy reports whether a gateway is currently considered healthy.
func (r *Router) Healthy(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state[name]
	return st == nil || !r.now().Before(st.unhealthyUntil)
}

// Observe records the outcome of a call: an unavailable or auth failure counts against the
// gateway; any answer from it (even a decline) shows it is up.
func (r *Router) Observe(name string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state[name]
	if st == nil {
		st = &healthState{}
		r.state[name] = st
	}
	if err != nil && (KindOf(err) == KindUnavailable || KindOf(err) == KindAuth) {
		st.failures++
		if st.failures >= r.health.FailuresToTrip {
			st.unhealthyUntil = r.now().Add(r.health.Cooldown)
		}
		return
	}
	if err == nil || KindOf(err) == KindDeclined || KindOf(err) == KindInvalid {
		st.failures = 0
		st.unhealthyUntil = time.Time{}
	}
}
