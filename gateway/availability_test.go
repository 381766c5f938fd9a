package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClassifyAvailability(t *testing.T) {
	var p AvailabilityPolicy
	both := []RouteState{{Gateway: "a", Configured: true, Healthy: true}, {Gateway: "b", Configured: true, Healthy: true}}
	cases := []struct {
		name     string
		active   bool
		routes   []RouteState
		activity map[string]Activity
		want     Availability
		reasons  []string
	}{
		{"no traffic", true, both, nil, Operational, []string{}},
		{"answers well", true, both, map[string]Activity{"a": {Answered: 40, Unavailable: 2, LatencyP90: 800 * time.Millisecond}}, Operational, []string{}},
		{"switched off", false, both, nil, Down, []string{ReasonNetworkInactive}},
		{"no route", true, nil, nil, Down, []string{ReasonNoGateway}},
		{"gateway not configured here", true, []RouteState{{Gateway: "a", Healthy: true}}, nil, Down, []string{ReasonNoGateway}},
		{"one gateway tripped", true, both, map[string]Activity{"a": {Answered: 3, Unavailable: 3, Streak: 3}}, Degraded, []string{ReasonGatewayDown}},
		{"two unavailable in a row do not trip", true, both, map[string]Activity{"a": {Answered: 2, Unavailable: 2, Streak: 2}}, Operational, []string{}},
		{"router keeps one last", true, []RouteState{{Gateway: "a", Configured: true}, both[1]}, nil, Degraded, []string{ReasonGatewayDown}},
		{"every gateway down", true, both, map[string]Activity{"a": {Answered: 4, Unavailable: 4, Streak: 4}, "b": {Answered: 3, Unavailable: 3, Streak: 3}}, Down, []string{ReasonGatewaysDown}},
		{"every configured gateway down", true, []RouteState{both[0], {Gateway: "b"}}, map[string]Activity{"a": {Answered: 3, Unavailable: 3, Streak: 3}}, Down, []string{ReasonGatewaysDown}},
		{"many refusals, recovered", true, both, map[string]Activity{"a": {Answered: 8, Unavailable: 3, Streak: 0}}, Degraded, []string{ReasonFailures}},
		{"timeouts count as failures", true, both, map[string]Activity{"a": {Answered: 4, TimedOut: 1}, "b": {Answered: 4, TimedOut: 1}}, Degraded, []string{ReasonFailures}},
		{"too few answers for a rate", true, both, map[string]Activity{"a": {Answered: 4, Unavailable: 2, Streak: 1}}, Operational, []string{}},
		{"slow", true, both, map[string]Activity{"b": {Answered: 6, LatencyP90: 12 * time.Second}}, Degraded, []string{ReasonSlow}},
		{"slow on too few answers", true, both, map[string]Activity{"b": {Answered: 2, LatencyP90: 30 * time.Second}}, Operational, []string{}},
		{"down and slow", true, both, map[string]Activity{"a": {Answered: 3, Unavailable: 3, Streak: 3}, "b": {Answered: 9, LatencyP90: time.Minute}}, Degraded, []string{ReasonGatewayDown, ReasonSlow}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := p.Classify(c.active, c.routes, c.activity)
			assert.Equal(t, c.want, got.Status)
			assert.Equal(t, c.reasons, got.Reasons)
		})
	}
}
