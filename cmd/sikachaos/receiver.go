package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/sikahq/sika/webhook"
)

// receiver is the merchant's webhook endpoint: it verifies every delivery's signature with the
// endpoint's secret and records the events it accepted. To make the service's retries work, it
// refuses about one first delivery in twenty with a 503.
type receiver struct {
	mu       sync.Mutex
	secret   string
	rng      *rand.Rand
	accepted map[string]int // event id -> signature-valid deliveries acknowledged
	seen     map[string]int // event id -> every delivery, refused ones included
	refused  int            // 503s answered on purpose
	badSig   int            // deliveries whose signature did not verify
	mismatch int            // body id differs from the webhook-id header
}

func newReceiver(seed int64) *receiver {
	return &receiver{rng: rand.New(rand.NewPCG(uint64(seed), 0x5ec)), accepted: map[string]int{},
		seen: map[string]int{}}
}

// setSecret gives the receiver the endpoint's signing secret (known once the endpoint exists).
func (r *receiver) setSecret(secret string) {
	r.mu.Lock()
	r.secret = secret
	r.mu.Unlock()
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := req.Header.Get("webhook-id")
	if r.secret == "" || webhook.Verify(r.secret, req.Header, body, 5*time.Minute) != nil {
		r.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var payload struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &payload) != nil || payload.ID != id {
		r.mismatch++
		http.Error(w, "body does not match webhook-id", http.StatusBadRequest)
		return
	}
	r.seen[id]++
	if r.seen[id] == 1 && r.rng.IntN(20) == 0 {
		r.refused++
		w.Header().Set("Retry-After", "1")
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	r.accepted[id]++
	w.WriteHeader(http.StatusNoContent)
}

// receiverStats is what the receiver saw.
type receiverStats struct {
	accepted           map[string]int
	deliveries         int
	refused            int
	badSig, mismatched int
}

func (r *receiver) stats() receiverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := receiverStats{accepted: make(map[string]int, len(r.accepted)), refused: r.refused, badSig: r.badSig, mismatched: r.mismatch}
	for id, n := range r.accepted {
		s.accepted[id] = n
	}
	for _, n := range r.seen {
		s.deliveries += n
	}
	return s
}
