package gateway

import "time"

// Availability is how a network is doing at its gateways, as merchants are shown it
// (GET /networks/, the dashboard's network page).
type Availability string

// Availabilities.
const (
	// Operational: the network's gateways answer as they should.
	Operational Availability = "operational"
	// Degraded: payments go through, but a gateway is down (the next one serves), many
	// requests go unanswered or answers are slow.
	Degraded Availability = "degraded"
	// Down: the network is switched off, has no gateway in this deployment, or every gateway
	// of it is down: a payment now is likely to fail with network_unavailable or at the gateway.
	Down Availability = "down"
)

// Reasons of an availability other than operational, as the API names them.
const (
	ReasonNetworkInactive = "network_inactive"  // switched off in the catalogue
	ReasonNoGateway       = "no_gateway"        // no gateway of the network configured here
	ReasonGatewaysDown    = "all_gateways_down" // every gateway of the network is down
	ReasonGatewayDown     = "gateway_down"      // one gateway is down; another serves
	ReasonFailures        = "failures"          // many requests refused or left unanswered
	ReasonSlow            = "slow"              // the gateways take long to answer
)

// Activity is what one gateway answered about one network's requests over the last minutes
// (read from the recorded attempts by store.NetworkActivity).
type Activity struct {
	Gateway string
	// Answered counts the attempts started in the window that the gateway answered: accepted,
	// refused, decided, did not take (503), or left without a clear answer (timed out).
	Answered int
	// Unavailable counts those it did not take (the routing's gateway_unavailable).
	Unavailable int
	// TimedOut counts those whose initiation got no clear answer (ambiguous: timeout, 5xx
	// after sending).
	TimedOut int
	// LatencyP90: nine answers in ten came at least this fast (from the attempt's start to the
	// gateway's first answer); zero without a sample.
	LatencyP90 time.Duration
	// Streak counts the latest answers, newest first, that were unavailable: the routing table
	// trips a gateway after HealthPolicy.FailuresToTrip of them.
	Streak int
}

// RouteState is one gateway of a network's routing table, as this process sees it.
type RouteState struct {
	Gateway string
	// Configured: this deployment has the gateway (a LIVE operator without credentials has not).
	Configured bool
	// Healthy is the Router's own view (Router.Healthy): false while it keeps the gateway last.
	Healthy bool
}

// AvailabilityPolicy says when a network counts as degraded or down. The zero value uses the
// defaults.
type AvailabilityPolicy struct {
	// Health is the routing table's: a streak of FailuresToTrip unavailable answers marks a
	// gateway down, as the Router does.
	Health HealthPolicy
	// Window is how far back answers count (default 10 minutes).
	Window time.Duration
	// MinSample is the fewest answers at a network before rates and latency count (default 5).
	MinSample int
	// FailurePercent of unavailable and unanswered requests at or above which the network is
	// degraded (default 25), in whole percent: counts compared as integers.
	FailurePercent int
	// SlowAnswer: a ninetieth percentile of first answers at or above it is degraded (default
	// 10 s; the sandbox answers in milliseconds, operators in a second or two).
	SlowAnswer time.Duration
}

// withDefaults fills the zero fields.
func (p AvailabilityPolicy) withDefaults() AvailabilityPolicy {
	if p.Health.FailuresToTrip == 0 {
		p.Health.FailuresToTrip = 3
	}
	if p.Window == 0 {
		p.Window = 10 * time.Minute
	}
	if p.MinSample == 0 {
		p.MinSample = 5
	}
	if p.FailurePercent == 0 {
		p.FailurePercent = 25
	}
	if p.SlowAnswer == 0 {
		p.SlowAnswer = 10 * time.Second
	}
	return p
}

// WindowOrDefault is the window answers are read over.
func (p AvailabilityPolicy) WindowOrDefault() time.Duration { return p.withDefaults().Window }

// NetworkAvailability is a network's availability with the reasons it is not operational.
type NetworkAvailability struct {
	Status  Availability
	Reasons []string
}

// Classify computes a network's availability from whether it is active, its routing table as
// this process sees it, and what its gateways answered over the window (by gateway name; a
// gateway without answers is taken as up).
func (p AvailabilityPolicy) Classify(active bool, routes []RouteState, activity map[string]Activity) NetworkAvailability {
	p = p.withDefaults()
	if !active {
		return NetworkAvailability{Status: Down, Reasons: []string{ReasonNetworkInactive}}
	}
	var configured, down int
	var answered, failed int
	slow := false
	for _, r := range routes {
		if !r.Configured {
			continue
		}
		configured++
		a := activity[r.Gateway]
		if !r.Healthy || a.Streak >= p.Health.FailuresToTrip {
			down++
			continue
		}
		answered += a.Answered
		failed += a.Unavailable + a.TimedOut
		if a.Answered >= p.MinSample && a.LatencyP90 >= p.SlowAnswer {
			slow = true
		}
	}
	switch {
	case configured == 0:
		return NetworkAvailability{Status: Down, Reasons: []string{ReasonNoGateway}}
	case down == configured:
		return NetworkAvailability{Status: Down, Reasons: []string{ReasonGatewaysDown}}
	}
	var reasons []string
	if down > 0 {
		reasons = append(reasons, ReasonGatewayDown)
	}
	if answered >= p.MinSample && failed*100 >= p.FailurePercent*answered {
		reasons = append(reasons, ReasonFailures)
	}
	if slow {
		reasons = append(reasons, ReasonSlow)
	}
	if len(reasons) > 0 {
		return NetworkAvailability{Status: Degraded, Reasons: reasons}
	}
	return NetworkAvailability{Status: Operational, Reasons: []string{}}
}
