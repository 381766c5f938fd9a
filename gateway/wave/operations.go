package wave

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/sikahq/sika/gateway"
)

// Kinds of remembered operations.
const (
	kindCheckout = "checkout"
	kindPayout   = "payout"
)

// remembered is what the adapter keeps in gateway.Memory under a reference: which kind of
// operation it started and, once Wave answered, the id Wave gave it. A record without an id
// means "a create was sent and its answer is unknown": the next call looks the reference up
// with Wave's search before creating anything.
type remembered struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
}

// recall returns what is remembered of ref's operation of kind (found is false when nothing
// is, or when ref was used for another kind of operation). A memory that cannot be read is
// Unavailable: nothing was sent.
func (c *Client) recall(ctx context.Context, ref, kind string) (remembered, bool, error) {
	raw, found, err := c.cfg.Memory.Recall(ctx, c.cfg.Name, ref)
	if err != nil {
		return remembered{}, false, gateway.Unavailable(fmt.Errorf("%s: recall %s: %w", c.cfg.Name, ref, err))
	}
	var r remembered
	if !found || json.Unmarshal(raw, &r) != nil || r.Kind != kind {
		return remembered{}, false, nil
	}
	return r, true, nil
}

// remember stores r under ref.
func (c *Client) remember(ctx context.Context, ref string, r remembered) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%s: encode memory: %w", c.cfg.Name, err)
	}
	if err := c.cfg.Memory.Remember(ctx, c.cfg.Name, ref, raw); err != nil {
		return fmt.Errorf("%s: remember %s: %w", c.cfg.Name, ref, err)
	}
	return nil
}

// finder is one kind of Wave operation and its endpoints: created by POST path, read by GET
// path/{id}, searched by GET search?client_reference=.
type finder[T any] struct {
	kind         string // what is remembered of it
	noun         string // the operation in errors ("session")
	api          api
	path, search string
	id           func(T) string
	reference    func(T) string // its client_reference
	// prefer orders two operations of one reference (there should be one): a is the one to
	// answer with rather than b.
	prefer func(a, b T) bool
	// status maps an operation onto the gateway's states (an error for a state this adapter
	// does not know).
	status func(op T, ref string) (gateway.OperationStatus, error)
}

// statusOf maps ref's operation onto the gateway's states; a state this adapter does not know
// is Ambiguous.
func statusOf[T any](c *Client, f finder[T], ref string, op T) (gateway.OperationStatus, error) {
	st, err := f.status(op, ref)
	if err != nil {
		return gateway.OperationStatus{}, gateway.Ambiguous(fmt.Errorf("%s: %s %s: %w", c.cfg.Name, f.noun, f.id(op), err))
	}
	return st, nil
}

// readStatus reads ref's operation (by the remembered id, else by Wave's search by
// client_reference) and maps it; a reference Wave has none for is StatusNotFound.
func readStatus[T any](ctx context.Context, c *Client, f finder[T], ref string) (gateway.OperationStatus, error) {
	op, found, err := locate(ctx, c, f, ref)
	if err != nil {
		return gateway.OperationStatus{}, err
	}
	if !found {
		return gateway.OperationStatus{Reference: ref, Status: gateway.StatusNotFound}, nil
	}
	return statusOf(c, f, ref, op)
}

// locate finds ref's operation: by the remembered id when there is one, else by Wave's search
// (and then remembers the id found, so the next read is a plain GET). found is false when Wave
// has no operation under ref.
func locate[T any](ctx context.Context, c *Client, f finder[T], ref string) (T, bool, error) {
	r, _, err := c.recall(ctx, ref, f.kind)
	if err != nil {
		var zero T
		return zero, false, err
	}
	return locateFrom(ctx, c, f, ref, r)
}

// locateFrom is locate with what is remembered of ref already read.
func locateFrom[T any](ctx context.Context, c *Client, f finder[T], ref string, r remembered) (T, bool, error) {
	var zero T
	if r.ID != "" {
		op, err := readOp(ctx, c, f, r.ID)
		return op, err == nil, err
	}
	op, found, err := searchRef(ctx, c, f, ref)
	if err != nil || !found {
		return zero, false, err
	}
	// Best effort: without it, the next read searches again.
	_ = c.remember(ctx, ref, remembered{Kind: f.kind, ID: f.id(op)})
	return op, true, nil
}

// initiate returns ref's operation, creating it only when Wave certainly has none: an id
// remembered, or a create whose answer was lost and that Wave's search finds, is answered with
// the existing operation. The intent is remembered before the create is sent, so that a lost
// answer is searched for, by this process or any other.
func initiate[T any](ctx context.Context, c *Client, f finder[T], ref string, create func(context.Context) (T, error)) (T, error) {
	var zero T
	r, found, err := c.recall(ctx, ref, f.kind)
	if err != nil {
		return zero, err
	}
	if found {
		op, exists, err := locateFrom(ctx, c, f, ref, r)
		if err != nil || exists {
			return op, err
		}
	} else if err := c.remember(ctx, ref, remembered{Kind: f.kind}); err != nil {
		return zero, gateway.Unavailable(err)
	}
	op, err := create(ctx)
	if err != nil {
		return zero, err
	}
	_ = c.remember(ctx, ref, remembered{Kind: f.kind, ID: f.id(op)}) // else the search finds it
	return op, nil
}

// createOp sends a create (POST path, idempotency-key: ref). A conflict (Wave already holds an
// operation under the reference, or the key with another body) is answered with the operation
// Wave's search finds under ref; when the search does not show it (yet), the outcome is
// Ambiguous and a status read will tell.
func createOp[T any](ctx context.Context, c *Client, f finder[T], ref string, body any) (T, error) {
	var zero T
	req := request{api: f.api, method: http.MethodPost, path: f.path, op: "POST " + f.path, idempotencyKey: ref, body: body}
	a, err := c.do(ctx, req)
	if err != nil {
		return zero, err
	}
	if a.status == http.StatusConflict {
		op, found, err := searchRef(ctx, c, f, ref)
		if err == nil && !found {
			err = gateway.Ambiguous(fmt.Errorf("%s %s: 409 and no operation found for the reference: %s",
				c.cfg.Name, req.op, c.snippet(a.raw)))
		}
		return op, err
	}
	if !a.ok() {
		return zero, c.refusal(req, a)
	}
	var op T
	if err := c.decode(req, a, &op); err != nil {
		return zero, err
	}
	if f.id(op) == "" {
		return zero, gateway.Ambiguous(fmt.Errorf("%s %s: answer without an id", c.cfg.Name, req.op))
	}
	return op, nil
}

// readOp reads an operation by the id Wave gave it (GET path/{id}). A 404 means this key no
// longer sees it (another wallet's key, a wrong base URL), not that nothing was created:
// Ambiguous.
func readOp[T any](ctx context.Context, c *Client, f finder[T], id string) (T, error) {
	var op T
	req := request{api: f.api, method: http.MethodGet, path: f.path + "/" + url.PathEscape(id), op: "GET " + f.path + "/{id}"}
	what := f.noun + " " + id
	a, err := c.do(ctx, req)
	if err != nil {
		return op, err
	}
	if a.status == http.StatusNotFound {
		return op, gateway.Ambiguous(fmt.Errorf("%s %s: Wave does not know %s: %s", c.cfg.Name, req.op, what, c.snippet(a.raw)))
	}
	if !a.ok() {
		return op, c.refusal(req, a)
	}
	err = c.decode(req, a, &op)
	return op, err
}

// searchRef runs Wave's search by client_reference for ref and answers the operation of ref
// it prefers; found is false when Wave shows none.
func searchRef[T any](ctx context.Context, c *Client, f finder[T], ref string) (best T, found bool, err error) {
	req := request{api: f.api, method: http.MethodGet, path: f.search + "?" + url.Values{"client_reference": {ref}}.Encode(),
		op: "GET " + f.search}
	a, err := c.do(ctx, req)
	if err != nil {
		return best, false, err
	}
	if !a.ok() {
		return best, false, c.refusal(req, a)
	}
	var ans searchAnswer[T]
	if err := c.decode(req, a, &ans); err != nil {
		return best, false, err
	}
	for _, op := range ans.Result {
		if f.reference(op) == ref && (!found || f.prefer(op, best)) {
			best, found = op, true
		}
	}
	return best, found, nil
}
