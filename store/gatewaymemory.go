package store

import (
	"context"
	"fmt"

	"github.com/sikahq/sika/gateway"
)

// GatewayMemory is the durable gateway.Memory, in the gateway_memory table.
type GatewayMemory struct{ s *Store }

var _ gateway.Memory = GatewayMemory{}

// GatewayMemory returns the store's gateway.Memory.
func (s *Store) GatewayMemory() GatewayMemory { return GatewayMemory{s: s} }

// Remember implements gateway.Memory; data must be a JSON document.
func (m GatewayMemory) Remember(ctx context.Context, gw, key string, data []byte) error {
	_, err := m.s.pool.Exec(ctx, `
		INSERT INTO gateway_memory (gateway, key, data) VALUES ($1, $2, $3)
		ON CONFLICT (gateway, key) DO UPDATE SET data = EXCLUDED.data, updated_at = now()`, gw, key, string(data))
	if err != nil {
		return fmt.Errorf("remember %s %s: %w", gw, key, err)
	}
	return nil
}

// Recall implements gateway.Memory.
func (m GatewayMemory) Recall(ctx context.Context, gw, key string) ([]byte, bool, error) {
	var data string
	err := m.s.pool.QueryRow(ctx, `SELECT data::text FROM gateway_memory WHERE gateway = $1 AND key = $2`, gw, key).Scan(&data)
	if isNoRows(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("recall %s %s: %w", gw, key, err)
	}
	return []byte(data), true, nil
}
