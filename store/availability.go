package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
)

// NetworkHealth is what a network's availability is computed from, for every network of an
// environment: its enabled routes and what their gateways answered over the last minutes.
type NetworkHealth struct {
	// Routes are the enabled gateways of each network, by priority.
	Routes map[uuid.UUID][]GatewayRoute
	// Activity is, by network and gateway, what the gateway answered to the attempts started in
	// the window (gateway.Activity).
	Activity map[uuid.UUID]map[string]gateway.Activity
}

// NetworkHealth reads the routing table of env and the answers its gateways gave to the
// attempts started in the last window: two queries over the routes and the window's attempts
// (index transaction_attempts_recent_idx), whatever the size of the history. An attempt still
// waiting for its first answer does not count; one whose initiation ended without a clear
// answer (last_answer noted, answered_at not set) counts as timed out, with the time to that
// note as its latency.
func (s *Store) NetworkHealth(ctx context.Context, env sika.Environment, window time.Duration) (NetworkHealth, error) {
	h := NetworkHealth{Routes: map[uuid.UUID][]GatewayRoute{}, Activity: map[uuid.UUID]map[string]gateway.Activity{}}
	rows, err := s.pool.Query(ctx, `SELECT network_id, gateway, priority FROM gateway_routes
		WHERE environment = $1 AND is_enabled ORDER BY network_id, priority`, env)
	if err != nil {
		return h, fmt.Errorf("network routes: %w", err)
	}
	var network uuid.UUID
	var route GatewayRoute
	_, err = pgx.ForEachRow(rows, []any{&network, &route.Gateway, &route.Priority}, func() error {
		h.Routes[network] = append(h.Routes[network], route)
		return nil
	})
	if err != nil {
		return h, fmt.Errorf("scan network routes: %w", err)
	}

	rows, err = s.pool.Query(ctx, `WITH recent AS (
			SELECT network_id, gateway, failure_code = $3 AS unavailable, answered_at IS NULL AS timed_out,
				extract(epoch FROM COALESCE(answered_at, last_answer_at) - created_at) AS latency,
				row_number() OVER (PARTITION BY network_id, gateway ORDER BY COALESCE(answered_at, last_answer_at) DESC) AS newest
			FROM transaction_attempts
			WHERE environment = $1 AND created_at > now() - $2::bigint * interval '1 millisecond'
				AND network_id IS NOT NULL AND (answered_at IS NOT NULL OR last_answer_at IS NOT NULL))
		SELECT network_id, gateway, count(*), count(*) FILTER (WHERE unavailable), count(*) FILTER (WHERE timed_out),
			COALESCE(percentile_cont(0.9) WITHIN GROUP (ORDER BY latency), 0),
			COALESCE(min(newest) FILTER (WHERE NOT unavailable) - 1, count(*))
		FROM recent GROUP BY network_id, gateway`, env, window.Milliseconds(), gateway.FailureGatewayUnavailable)
	if err != nil {
		return h, fmt.Errorf("network activity: %w", err)
	}
	var a gateway.Activity
	var p90 float64
	_, err = pgx.ForEachRow(rows, []any{&network, &a.Gateway, &a.Answered, &a.Unavailable, &a.TimedOut, &p90, &a.Streak}, func() error {
		a.LatencyP90 = time.Duration(p90 * float64(time.Second))
		if h.Activity[network] == nil {
			h.Activity[network] = map[string]gateway.Activity{}
		}
		h.Activity[network][a.Gateway] = a
		return nil
	})
	if err != nil {
		return h, fmt.Errorf("scan network activity: %w", err)
	}
	return h, nil
}
