package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// Exchange sends req with client and reads at most limit bytes of the answer, whatever its
// status. It applies the routing rule every adapter must follow when no answer comes: a failure
// before any byte of the request may have reached the operator (DNS, a refused dial, nothing
// written) is Unavailable, safe to send to the next gateway; a failure after that (timeout,
// broken connection, unreadable answer) is Ambiguous, and only a status read can tell. Error
// texts name op and the network error only, never a header or a body, so never a credential.
// The caller bounds the exchange with req's context.
func Exchange(client *http.Client, op string, req *http.Request, limit int64) (status int, body []byte, err error) {
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) },
	}))
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, transportError(op, err, wrote.Load())
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, Ambiguous(fmt.Errorf("%s: read answer: %w", op, err))
	}
	return resp.StatusCode, body, nil
}

// transportError classifies a request that got no answer (see Exchange).
func transportError(op string, err error, wrote bool) error {
	err = fmt.Errorf("%s: %w", op, err)
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr), errors.As(err, &opErr) && opErr.Op == "dial", !wrote:
		return Unavailable(err)
	}
	return Ambiguous(err)
}
