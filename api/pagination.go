package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Page sizes of the spec's conventions.
const (
	defaultPageSize       = 20
	maxPageSize           = 100
	defaultCursorPageSize = 50
	maxCursorPageSize     = 200
	// maxPage caps `page` (10,000 pages of 100 is a million rows; past that, OFFSET is a scan no
	// client should ask for, and a larger page overflows the offset): above it is a 400.
	maxPage = 10000
)

// msgMaxPage is the message of a page number above maxPage.
var msgMaxPage = "Ensure this value is less than or equal to " + strconv.Itoa(maxPage) + "."

// page is the page-number pagination response: {count, next, previous, results}.
type page[T any] struct {
	Count    int     `json:"count"`
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
	Results  []T     `json:"results"`
}

// positiveInt parses an optional positive integer query parameter; the message of a bad one says
// whether it is not an integer or is below 1.
func positiveInt(q url.Values, name string, def int, verr *sika.Validation) int {
	raw := q.Get(name)
	if raw == "" && !q.Has(name) {
		return def
	}
	n, msg := atLeastOne(raw)
	if msg != "" {
		verr.Add(name, msg)
		return def
	}
	return n
}

// parsePage reads `page` and `page_size`: defaults 1 and 20, page_size above 100 clamped to
// 100, anything that is not a positive integer a validation error, and so is a page above
// maxPage.
func parsePage(r *http.Request) (store.PageRequest, error) {
	var verr sika.Validation
	q := r.URL.Query()
	p := store.PageRequest{
		Page:     positiveInt(q, "page", 1, &verr),
		PageSize: min(positiveInt(q, "page_size", defaultPageSize, &verr), maxPageSize),
	}
	if p.Page > maxPage {
		verr.Add("page", msgMaxPage)
		p.Page = 1
	}
	return p, verr.Err()
}

// newPage builds the page response with absolute next/previous URLs.
func (s *Server) newPage(r *http.Request, p store.PageRequest, count int, results any) page[any] {
	out := page[any]{Count: count, Results: []any{}}
	out.Results = toAnySlice(results)
	if p.Page*p.PageSize < count {
		u := s.absoluteURL(r, map[string]string{"page": strconv.Itoa(p.Page + 1)})
		out.Next = &u
	}
	if p.Page > 1 {
		prev := p.Page - 1
		if last := (count + p.PageSize - 1) / p.PageSize; prev > last {
			prev = max(last, 1)
		}
		u := s.absoluteURL(r, map[string]string{"page": strconv.Itoa(prev)})
		out.Previous = &u
	}
	return out
}

// absoluteURL is the request's URL on the public base URL, with some query values replaced.
func (s *Server) absoluteURL(r *http.Request, set map[string]string) string {
	q := r.URL.Query()
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	u := s.cfg.PublicURL + r.URL.Path
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	return u
}

// Cursor is a position in a list ordered by (created_at, id) descending: newest first, ties
// broken by id. Backward cursors walk towards newer rows (the `previous` link).
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
	Backward  bool
}

// cursorPageRequest is a validated cursor-pagination request.
type cursorPageRequest struct {
	Cursor   *Cursor
	PageSize int
}

// cursorPage is the cursor pagination response: {next, previous, results}, no count.
type cursorPage struct {
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
	Results  []any   `json:"results"`
}

// cursorMACLen is the length of the truncated HMAC that makes a cursor tamper-evident.
const cursorMACLen = 16

// encodeCursor renders a cursor as an opaque, signed, URL-safe string.
func (s *Server) encodeCursor(c Cursor) string {
	buf := make([]byte, 25, 25+cursorMACLen)
	if c.Backward {
		buf[0] = 1
	}
	binary.BigEndian.PutUint64(buf[1:9], uint64(c.CreatedAt.UnixMicro()))
	copy(buf[9:25], c.ID[:])
	buf = append(buf, s.cursorMAC(buf)...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// decodeCursor reads a cursor back; anything altered or malformed is a validation error
// (400), never a 500.
func (s *Server) decodeCursor(raw string) (Cursor, error) {
	bad := sika.FieldError("cursor", "Invalid cursor.")
	buf, err := base64.RawURLEncoding.Strict().DecodeString(raw)
	if err != nil || len(buf) != 25+cursorMACLen || buf[0] > 1 {
		return Cursor{}, bad
	}
	if !hmac.Equal(buf[25:], s.cursorMAC(buf[:25])) {
		return Cursor{}, bad
	}
	var c Cursor
	c.Backward = buf[0] == 1
	c.CreatedAt = time.UnixMicro(int64(binary.BigEndian.Uint64(buf[1:9]))).UTC()
	copy(c.ID[:], buf[9:25])
	return c, nil
}

func (s *Server) cursorMAC(b []byte) []byte {
	m := hmac.New(sha256.New, s.cursorKey)
	m.Write(b)
	return m.Sum(nil)[:cursorMACLen]
}

// parseCursorPage reads `cursor` and `page_size` (default 50, clamped to 200).
func (s *Server) parseCursorPage(r *http.Request) (cursorPageRequest, error) {
	var verr sika.Validation
	q := r.URL.Query()
	req := cursorPageRequest{PageSize: min(positiveInt(q, "page_size", defaultCursorPageSize, &verr), maxCursorPageSize)}
	if raw := q.Get("cursor"); raw != "" {
		c, err := s.decodeCursor(raw)
		if err != nil {
			return req, err
		}
		req.Cursor = &c
	}
	return req, verr.Err()
}

// newCursorPage builds the response from the rows a store keyset query returned. The query
// fetched PageSize+1 rows in the direction of the request (so hasMore tells whether another
// page lies that way); rows are already newest-first. keyOf gives each row's position.
func (s *Server) newCursorPage(r *http.Request, req cursorPageRequest, rows []any, hasMore bool, keyOf func(any) Cursor) cursorPage {
	out := cursorPage{Results: rows}
	if out.Results == nil {
		out.Results = []any{}
	}
	backward := req.Cursor != nil && req.Cursor.Backward
	if len(rows) > 0 {
		first, last := keyOf(rows[0]), keyOf(rows[len(rows)-1])
		if hasMore || backward {
			last.Backward = false
			u := s.absoluteURL(r, map[string]string{"cursor": s.encodeCursor(last)})
			out.Next = &u
		}
		if req.Cursor != nil && (!backward || hasMore) {
			first.Backward = true
			u := s.absoluteURL(r, map[string]string{"cursor": s.encodeCursor(first)})
			out.Previous = &u
		}
	}
	return out
}

// toAnySlice turns a typed slice into []any for the page envelope.
func toAnySlice(v any) []any {
	switch xs := v.(type) {
	case nil:
		return []any{}
	case []any:
		return xs
	}
	return reflectSlice(v)
}
