package gateway

import (
	"context"
	"time"
)

// Windows are an operator's documented delays: they decide when an answer that is not final in
// itself (a "not found" read, a request that expired on our side) may be treated as final.
type Windows struct {
	// NotFoundSettle is how long after a send a status read may still answer "not found" for
	// an operation the operator is creating (MTN answers 404 while it creates a transfer). A
	// NOT_FOUND read at least this long after the last send is final: nothing was created.
	NotFoundSettle time.Duration
	// LateSuccess is how long after a collection ended on our side (expired, cancel unclear)
	// the operator may still report it paid. Sika re-reads such attempts within it, so that a
	// success that never comes by callback is still credited.
	LateSuccess time.Duration
}

// Conservative windows for an adapter that documents none.
const (
	DefaultNotFoundSettle = 15 * time.Minute
	DefaultLateSuccess    = 24 * time.Hour
)

// Windowed is implemented by adapters that document their operator's windows.
type Windowed interface {
	Windows() Windows
}

// WindowsOf returns g's windows, each zero field replaced by its conservative default.
func WindowsOf(g Gateway) Windows {
	var w Windows
	if d, ok := adapter(g).(Windowed); ok {
		w = d.Windows()
	}
	if w.NotFoundSettle <= 0 {
		w.NotFoundSettle = DefaultNotFoundSettle
	}
	if w.LateSuccess <= 0 {
		w.LateSuccess = DefaultLateSuccess
	}
	return w
}

// Canceller is implemented by adapters whose operator can withdraw a collection request the
// customer has not approved yet. CancelCollection answers the operation's state after the
// cancel: FAILED (cancelled, or refused earlier) is final; SUCCESS means the customer approved
// first and the money moved; PENDING means the operator did not confirm the cancel (unclear).
// An error is as for any call: Unavailable (not cancelled), Ambiguous (unclear).
type Canceller interface {
	CancelCollection(ctx context.Context, reference string) (OperationStatus, error)
}

// FailureCancelled is the failure code of a collection the operator confirmed withdrawn.
const FailureCancelled = "cancelled"
