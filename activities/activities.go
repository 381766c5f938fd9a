// Package activities holds the I/O steps of the workflows: one Activities struct that holds
// what they share (the store, the gateway router, the callback base URL, timing settings).
// Gateway errors become workflow-visible outcomes or retryable Temporal errors at this boundary
// and nowhere else.
package activities

import (
	"net/http"
	"sync"
	"time"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
)

// Activities are registered on the worker as one struct; workflows call its methods by value.
type Activities struct {
	Store    *store.Store
	Gateways *gateway.Router
	// CallbackBaseURL is the public URL gateways call back: <base>/gateway-callbacks/<gateway>/.
	CallbackBaseURL string
	// PushLifetime bounds how long a collection may wait for the customer (default 5 minutes).
	PushLifetime time.Duration
	// WebhookGuard decides which webhook destinations may be reached.
	WebhookGuard webhook.Guard
	// WebhookTimeout is how long an endpoint has to answer (default 15 s; tests shorten it).
	WebhookTimeout time.Duration

	clientOnce sync.Once
	client     *http.Client
}

// callbackURL is where a gateway reports outcomes.
func (a *Activities) callbackURL(gw string) string {
	return a.CallbackBaseURL + "/gateway-callbacks/" + gw + "/"
}

func (a *Activities) pushLifetime() time.Duration {
	if a.PushLifetime > 0 {
		return a.PushLifetime
	}
	return 5 * time.Minute
}
