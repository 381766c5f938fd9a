package api

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Every exchange with a test server of this package is validated against the OpenAPI document
// on the server side (validatedHandler), whoever the client is: ts.call, the dashboard's and the
// console's browsers calling the JSON API, a test's own http.Get. A test does not choose which
// responses to check; it can only miss the document by not calling a route at all.
//
// A failure is reported to the test that made the request when it is known: ts.call marks its
// request with exchangeHeader and waits for the verdict, so the failure lands on its own t at
// its own line. Any other request fails the test that owns the server (newTestServer) or, on the
// package's shared payment stack, the whole run (TestMain, reportUnattributedExchanges).

// exchangeHeader carries the token by which ts.call receives the verdict on its request.
const exchangeHeader = "X-Sika-Test-Exchange"

// maxValidatedBody is how much of a response body is kept for validation; a longer one (a large
// CSV export) is validated for its status and headers only.
const maxValidatedBody = 8 << 20

// notValidatedPrefixes are the surfaces of the server that are not the documented API: the
// dashboard and console web apps (HTML, their own forms) and the routes tests mount for
// themselves.
var notValidatedPrefixes = []string{"/dashboard", "/console", basePath + "/test/"}

// exchangeVerdicts hands the result of a marked exchange from the server to the waiting client.
var exchangeVerdicts sync.Map // token → chan error

func verdictChannel(token string) chan error {
	ch, _ := exchangeVerdicts.LoadOrStore(token, make(chan error, 1))
	return ch.(chan error)
}

// unattributed collects failures of exchanges no test can be told about (shared stack).
var unattributed struct {
	sync.Mutex
	failures []string
}

func recordUnattributed(msg string) {
	unattributed.Lock()
	defer unattributed.Unlock()
	unattributed.failures = append(unattributed.failures, msg)
}

// reportUnattributedExchanges prints what the shared stack answered against the document to
// clients that were not ts.call, and turns a passing run into a failing one when there is any.
func reportUnattributedExchanges(code int) int {
	unattributed.Lock()
	defer unattributed.Unlock()
	if len(unattributed.failures) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "--- FAIL: %d responses of the shared payment stack do not conform to the OpenAPI document:\n", len(unattributed.failures))
	for _, f := range unattributed.failures {
		fmt.Fprintln(os.Stderr, f)
	}
	return 1
}

// validatedHandler serves next and validates every exchange of a documented surface; report
// receives the failures of requests that are not marked by ts.call.
func validatedHandler(next http.Handler, report func(string)) http.Handler {
	v, err := openAPIForTests()
	if err != nil {
		panic(err) // the document does not load: every test that reads it says why
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get(exchangeHeader)
		for _, p := range notValidatedPrefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				next.ServeHTTP(w, r)
				deliverVerdict(token, nil, report)
				return
			}
		}
		rec := &exchangeRecorder{ResponseWriter: w}
		check := r.Clone(r.Context()) // the handler may consume the request; the validator reads its URL and headers
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		deliverVerdict(token, rec.validate(v, check), report)
	})
}

// deliverVerdict hands the verdict to the ts.call waiting for it, or reports a failure. A
// client that follows a redirect sends the token twice: the first verdict waits in the
// channel, a later failure is reported to the server's test.
func deliverVerdict(token string, err error, report func(string)) {
	if token != "" {
		select {
		case verdictChannel(token) <- err:
			return
		default:
		}
	}
	if err != nil {
		report(err.Error())
	}
}

// validate checks the recorded exchange; its error says what and where.
func (rec *exchangeRecorder) validate(v *openAPIValidator, req *http.Request) error {
	body := rec.body.Bytes()
	header := rec.Header()
	if header.Get("Content-Encoding") == "gzip" && !rec.truncated {
		// The document and the reference go gzipped to a client that takes it: validate what
		// the client reads.
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("%s %s: Content-Encoding gzip, but %v", req.Method, req.URL.RequestURI(), err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("%s %s: Content-Encoding gzip, but %v", req.Method, req.URL.RequestURI(), err)
		}
	}
	if rec.truncated || strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
		// The status and the headers only: a stream has no end to validate, a huge export is
		// checked on its first rows by the export tests.
		bodyless := *v
		opts := *v.opts
		opts.ExcludeResponseBody = true
		bodyless.opts = &opts
		v, body = &bodyless, nil
	}
	operation, err := v.validate(req, rec.status, header, body)
	if err != nil {
		return fmt.Errorf("OpenAPI: %s %s (%s) answered %d, which the document does not allow:\n%v\nbody: %s",
			req.Method, req.URL.RequestURI(), operation, rec.status, err, bodyExcerpt(body, 2000))
	}
	return nil
}

// exchangeRecorder passes a response through and keeps a copy of its status and body.
type exchangeRecorder struct {
	http.ResponseWriter
	status    int
	body      bytes.Buffer
	truncated bool
}

func (rec *exchangeRecorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *exchangeRecorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if !rec.truncated {
		if rec.body.Len()+len(p) > maxValidatedBody {
			rec.truncated = true
			rec.body.Reset()
		} else {
			rec.body.Write(p)
		}
	}
	return rec.ResponseWriter.Write(p)
}

// Flush keeps streaming responses (the CSV export, an event stream) streaming.
func (rec *exchangeRecorder) Flush() {
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushes).
func (rec *exchangeRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// markExchange marks a request of ts.call so that the server's verdict comes back to it.
func markExchange(req *http.Request) string {
	token := uuid.NewString()
	req.Header.Set(exchangeHeader, token)
	return token
}

// awaitExchange is the server's verdict on a marked request; a server that does not validate
// (not one of this package's test servers) gives none.
func awaitExchange(token string) (validated bool, err error) {
	defer exchangeVerdicts.Delete(token)
	select {
	case err := <-verdictChannel(token):
		return true, err
	case <-time.After(5 * time.Second):
		return false, nil
	}
}

// serverReport is where a test server's unmarked exchanges fail: its own test.
func serverReport(t testing.TB) func(string) {
	return func(msg string) { t.Errorf("%s", msg) }
}
