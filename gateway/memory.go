package gateway

import (
	"context"
	"sync"
)

// Memory keeps what an operator told us about an operation that later calls need and that the
// operator cannot be asked for by our reference alone: a checkout session id, a payment token,
// the token that authenticates the operator's notification. The process that reads a status or
// receives a callback is often not the one that started the operation (the API receives
// callbacks, any worker may poll, a worker may restart), so production uses a durable Memory
// (store.GatewayMemory, in Postgres); tests may use MapMemory.
//
// Keys are scoped by gateway name; an adapter chooses its own keys (e.g. the reference, or
// "notif:"+token for a reverse lookup).
type Memory interface {
	// Remember stores data (a JSON document) under (gateway, key), replacing what was there.
	Remember(ctx context.Context, gateway, key string, data []byte) error
	// Recall returns what was stored under (gateway, key); found is false when nothing was.
	Recall(ctx context.Context, gateway, key string) (data []byte, found bool, err error)
}

// MapMemory is an in-process Memory, for tests and single-process tools.
type MapMemory struct {
	mu sync.Mutex
	m  map[[2]string][]byte
}

// Remember implements Memory.
func (m *MapMemory) Remember(_ context.Context, gateway, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[[2]string][]byte{}
	}
	m.m[[2]string{gateway, key}] = append([]byte(nil), data...)
	return nil
}

// Recall implements Memory.
func (m *MapMemory) Recall(_ context.Context, gateway, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.m[[2]string{gateway, key}]
	return append([]byte(nil), data...), ok, nil
}
