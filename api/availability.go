package api

import (
	"context"
	"sync"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// defaultAvailabilityTTL is how long a computed availability is served before the attempts are
// read again: every GET /networks/ of a replica within it costs no query.
const defaultAvailabilityTTL = 15 * time.Second

// availabilityJSON is a network's availability as GET /networks/ shows it.
type availabilityJSON struct {
	Status    gateway.Availability `json:"status"`
	Reasons   []string             `json:"reasons"`
	CheckedAt time.Time            `json:"checked_at"`
}

// networkJSON is a network with its availability.
type networkJSON struct {
	sika.Network
	Availability availabilityJSON `json:"availability"`
}

// availabilitySnapshot is what one read of the attempts gave, for one environment.
type availabilitySnapshot struct {
	health store.NetworkHealth
	read   time.Time
}

// availabilityCache keeps the last read per environment; one reader at a time refreshes it,
// the others wait for that read rather than querying too.
type availabilityCache struct {
	mu    sync.Mutex
	byEnv map[sika.Environment]availabilitySnapshot
}

// networkHealth returns the environment's routes and recent gateway answers, read at most once
// per AvailabilityTTL.
func (s *Server) networkHealth(ctx context.Context, env sika.Environment) (availabilitySnapshot, error) {
	c := &s.availability
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.cfg.Now()
	if snap, ok := c.byEnv[env]; ok && now.Sub(snap.read) < s.cfg.AvailabilityTTL && !now.Before(snap.read) {
		return snap, nil
	}
	h, err := s.store.NetworkHealth(ctx, env, s.cfg.Availability.WindowOrDefault())
	if err != nil {
		return availabilitySnapshot{}, err
	}
	snap := availabilitySnapshot{health: h, read: now.UTC().Truncate(time.Microsecond)}
	if c.byEnv == nil {
		c.byEnv = map[sika.Environment]availabilitySnapshot{}
	}
	c.byEnv[env] = snap
	return snap, nil
}

// withAvailability adds to each network its availability in the caller's environment:
// switched off, its routes as this process can use them (a gateway configured here, and the
// Router's own health), and what its gateways answered over the last minutes
// (gateway.AvailabilityPolicy).
func (s *Server) withAvailability(ctx context.Context, networks []sika.Network) ([]networkJSON, error) {
	_, env := tenant(ctx)
	snap, err := s.networkHealth(ctx, env)
	if err != nil {
		return nil, err
	}
	out := make([]networkJSON, len(networks))
	for i, n := range networks {
		a := s.cfg.Availability.Classify(n.IsActive, s.routeStates(snap.health.Routes[n.ID]), snap.health.Activity[n.ID])
		out[i] = networkJSON{Network: n, Availability: availabilityJSON{Status: a.Status, Reasons: a.Reasons, CheckedAt: snap.read.UTC()}}
	}
	return out, nil
}

// routeStates says, for each route, whether this deployment has its gateway and whether the
// Router keeps it last.
func (s *Server) routeStates(routes []store.GatewayRoute) []gateway.RouteState {
	out := make([]gateway.RouteState, len(routes))
	for i, r := range routes {
		_, err := s.cfg.Gateways.Gateway(r.Gateway)
		configured := err == nil
		out[i] = gateway.RouteState{Gateway: r.Gateway, Configured: configured, Healthy: configured && s.cfg.Gateways.Healthy(r.Gateway)}
	}
	return out
}

// networkAvailability is one network's availability (GET /networks/{id}/).
func (s *Server) networkAvailability(ctx context.Context, n sika.Network) (networkJSON, error) {
	out, err := s.withAvailability(ctx, []sika.Network{n})
	if err != nil {
		return networkJSON{}, err
	}
	return out[0], nil
}
