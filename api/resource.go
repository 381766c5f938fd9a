package api

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// The shapes most resource handlers share, each written once: answer what a call gave or its
// error, read the object of the path's id in the caller's tenancy, list a page or a cursor page,
// delete. A new route's handler is then its own validation and store call between them.

// withBody mounts a handler that takes a request body: the body is decoded into a Req first,
// strictly (decodeBody: a member the struct does not declare is refused), and h runs with it
// only when it was. The struct is the route's declared body (requestBodies in the tests).
func withBody[Req any](h func(w http.ResponseWriter, r *http.Request, req Req) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := decodeBody(r, &req); err != nil {
			return err
		}
		return h(w, r, req)
	}
}

// reply answers data in the envelope with status, or returns err for the guard to render
// (writeError): the end of every handler whose answer is what one call gave.
func reply(w http.ResponseWriter, status int, data any, err error) error {
	if err != nil {
		return err
	}
	writeData(w, status, data)
	return nil
}

// byTenantID is a read or a change of one object of a merchant and environment by its id (the
// store's …ByID, RevokeAPIKey, CancelPayoutBatch…).
type byTenantID[T any] func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id uuid.UUID) (T, error)

// pathObject calls f on the path's {id}: a malformed id is not_found (kind names the object), as
// an unknown one is.
func pathObject[T any](r *http.Request, kind string, f func(ctx context.Context, id uuid.UUID) (T, error)) (T, error) {
	id, err := pathUUID(r, "id", kind)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(r.Context(), id)
}

// tenantObject is pathObject in the caller's tenancy: f gets the caller's merchant and
// environment, and another tenant's object is not found either.
func tenantObject[T any](r *http.Request, kind string, f byTenantID[T]) (T, error) {
	return pathObject(r, kind, func(ctx context.Context, id uuid.UUID) (T, error) {
		merchant, env := tenant(ctx)
		return f(ctx, merchant, env, id)
	})
}

// writeTenantObject answers what f gives for the path's id in the caller's tenancy (tenantObject).
func writeTenantObject[T any](w http.ResponseWriter, r *http.Request, kind string, f byTenantID[T]) error {
	v, err := tenantObject(r, kind, f)
	return reply(w, http.StatusOK, v, err)
}

// deleted is the body of a successful DELETE.
type deleted struct {
	ID      uuid.UUID `json:"id"`
	Deleted bool      `json:"deleted"`
}

// deleteTenantObject deletes the object of the path's id in the caller's tenancy (del) and
// answers {id, deleted: true}.
func deleteTenantObject(w http.ResponseWriter, r *http.Request, kind string,
	del func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id uuid.UUID) error) error {
	d, err := tenantObject(r, kind, func(ctx context.Context, merchant uuid.UUID, env sika.Environment, id uuid.UUID) (deleted, error) {
		return deleted{ID: id, Deleted: true}, del(ctx, merchant, env, id)
	})
	return reply(w, http.StatusOK, d, err)
}

// tenantAction runs an action that takes no body (noBody) on the caller's object of the path's
// id (act: revoke, cancel…), then, when it succeeded, after (a signal to its workflow; nil for
// none), and answers the object as act left it.
func tenantAction[T any](w http.ResponseWriter, r *http.Request, kind string, act byTenantID[T], after func(ctx context.Context, v T)) error {
	if err := noBody(r); err != nil {
		return err
	}
	v, err := tenantObject(r, kind, act)
	if err != nil {
		return err
	}
	if after != nil {
		after(r.Context(), v)
	}
	writeData(w, http.StatusOK, v)
	return nil
}

// actionID reads the path's {id} of an action that takes no body (revoke, cancel, approve…): a
// body member is refused (noBody) before the id is read.
func actionID(r *http.Request, kind string) (uuid.UUID, error) {
	if err := noBody(r); err != nil {
		return uuid.Nil, err
	}
	return pathUUID(r, "id", kind)
}

// idAndBody reads the path's {id} of an action that takes a body (kind names the object in a
// not_found), then the body into dst, strictly (decodeBody).
func idAndBody(r *http.Request, kind string, dst any) (uuid.UUID, error) {
	id, err := pathUUID(r, "id", kind)
	if err != nil {
		return uuid.Nil, err
	}
	return id, decodeBody(r, dst)
}

// writePage answers a page-number list: `page` and `page_size` are read first (parsePage), then
// list gives that page's rows and the count of all of them.
func writePage[T any](s *Server, w http.ResponseWriter, r *http.Request, list func(store.PageRequest) ([]T, int, error)) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	items, count, err := list(p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, s.newPage(r, p, count, items))
	return nil
}

// tenantList answers a page-number list of the caller's merchant and environment, read by list.
func tenantList[T any](s *Server, w http.ResponseWriter, r *http.Request, list func(context.Context, uuid.UUID, sika.Environment, store.PageRequest) ([]T, int, error)) error {
	merchant, env := tenant(r.Context())
	return writePage(s, w, r, func(p store.PageRequest) ([]T, int, error) { return list(r.Context(), merchant, env, p) })
}

// writeCursorList answers a filtered cursor list: the filter's validation errors (filterErr)
// and the cursor's or page size's in one field map, else the page list reads in the caller's
// tenancy, with links built from each row's position (keyOf).
func writeCursorList[T any](s *Server, w http.ResponseWriter, r *http.Request, filterErr error,
	list func(context.Context, uuid.UUID, sika.Environment, store.KeysetRequest) ([]T, bool, error), keyOf func(T) Cursor) error {
	req, err := s.parseCursorPage(r)
	if err := joinValidation(filterErr, err); err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	items, more, err := list(r.Context(), merchant, env, keysetOf(req))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, s.newCursorPage(r, req, toAnySlice(items), more, func(v any) Cursor { return keyOf(v.(T)) }))
	return nil
}

// owner is the merchant and environment of the call, and the member who makes it (nil for an
// API key): who a new object belongs to and who created it.
func owner(ctx context.Context) (uuid.UUID, sika.Environment, *uuid.UUID) {
	p := principalFrom(ctx)
	var member *uuid.UUID
	if p.Member != nil {
		member = &p.Member.ID
	}
	return p.Merchant.ID, p.Environment, member
}

// newSlugged gives a new object with a public page (a checkout session, a payment link) its id
// and its slug: prefix and n random base-62 characters.
func newSlugged(prefix string, n int) (uuid.UUID, string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, "", err
	}
	slug, err := sika.RandomBase62(n)
	if err != nil {
		return uuid.Nil, "", err
	}
	return id, prefix + slug, nil
}

// listOf is xs, or an empty list for nil: a list is answered [], never null.
func listOf[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
