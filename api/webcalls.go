package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// ctxWebMember marks an in-process call of a web app (CallAsMember) with the member its
// browser session signed in: authenticate takes that member as a dashboard token's would be
// taken. The key is unexported, so no HTTP request can carry it.
const ctxWebMember ctxKey = 100

// CallAsMember serves an APICall of the dashboard in process: the route runs through the whole
// middleware chain (observe, authentication as the member with X-Merchant-Id and X-Environment,
// rate limit, merchant standing, scope, idempotency) exactly as a dashboard session's HTTP
// request would. The browser's address and request id are carried over, so the IP whitelist
// exemption of dashboard calls, the rate limit and the logs see the real caller.
func (s *Server) CallAsMember(r *http.Request, call webapp.APICall) (webapp.APIAnswer, error) {
	var body io.Reader = http.NoBody
	contentType := ""
	switch {
	case call.RawBody != nil:
		body, contentType = call.RawBody, call.ContentType
	case call.Body != nil:
		raw, err := json.Marshal(call.Body)
		if err != nil {
			return webapp.APIAnswer{}, fmt.Errorf("encode %s %s: %w", call.Method, call.Path, err)
		}
		body, contentType = bytes.NewReader(raw), "application/json"
	}
	target := basePath + call.Path
	if len(call.Query) > 0 {
		target += "?" + call.Query.Encode()
	}
	ctx := context.WithValue(r.Context(), ctxWebMember, &call.Member)
	req, err := http.NewRequestWithContext(ctx, call.Method, target, body)
	if err != nil {
		return webapp.APIAnswer{}, fmt.Errorf("build %s %s: %w", call.Method, call.Path, err)
	}
	if call.RawBody != nil {
		req.ContentLength = -1 // a stream: its length is known when it ends
	}
	req.RemoteAddr = r.RemoteAddr
	for _, h := range []string{"X-Forwarded-For", "X-Request-Id", "User-Agent", "Accept-Language"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("X-Merchant-Id", call.Merchant.String())
	req.Header.Set("X-Environment", string(call.Environment))
	if call.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", call.IdempotencyKey)
	}
	rec := &bufferedResponse{header: http.Header{}}
	s.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return webapp.APIAnswer{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}, nil
}

// webMember is the member of an in-process web call, or nil.
func webMember(ctx context.Context) *sika.Member {
	m, _ := ctx.Value(ctxWebMember).(*sika.Member)
	return m
}

// bufferedResponse keeps an in-process answer in memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}
