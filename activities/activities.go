// Package activities holds the I/O steps of the workflows: one Activities struct that holds
// what they share (the store, later the gateway router, a clock and an HTTP client). Gateway
// errors become retryable or non-retryable Temporal errors at this boundary and nowhere else.
package activities

import "github.com/sikahq/sika/store"

// Activities are registered on the worker as one struct; workflows call its methods by value.
type Activities struct {
	Store *store.Store
}
