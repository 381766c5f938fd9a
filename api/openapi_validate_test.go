package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// openAPIValidator validates served responses against the document.
//
// Use it in any test that receives a response of the service:
//
//	v := newOpenAPIValidator(t)
//	rec := httptest.NewRecorder()
//	srv.ServeHTTP(rec, req)
//	v.check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
//
// It fails the test when the status is not documented for the operation, when a header the
// document declares required is missing or malformed, or when the body does not match the
// declared schema. Response objects are closed in the document, so a field it does not know
// fails too. Requests are not validated (tests send bad requests on purpose).
type openAPIValidator struct {
	doc    *openapi3.T
	router routers.Router
	opts   *openapi3filter.Options
}

// openAPIForTests is the document loaded, validated and routed once per test binary.
var openAPIForTests = sync.OnceValues(func() (*openAPIValidator, error) {
	raw, err := OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is not valid: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus:   true,
		MultiError:              true,
		AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
		SchemaValidationOptions: openAPIFormats(),
	}
	// The reason and where: not the schema and value dumps, the body is in the report.
	opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string {
		if at := e.JSONPointer(); len(at) > 0 && !strings.Contains(e.Reason, "at '") {
			return "at /" + strings.Join(at, "/") + ": " + e.Reason
		}
		return e.Reason
	})
	return &openAPIValidator{doc: doc, router: router, opts: opts}, nil
})

// openAPIFormats are the formats the document uses, checked as the contract defines them.
// date-time is stricter than RFC 3339: the contract writes UTC with `Z` and at most microseconds.
func openAPIFormats() []openapi3.SchemaValidationOption {
	uuidPattern := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	dateTimePattern := regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?Z$`)
	matches := func(format string, re *regexp.Regexp) openapi3.StringFormatValidator {
		return openapi3.NewCallbackValidator(func(s string) error {
			if !re.MatchString(s) {
				return fmt.Errorf("not a %s: %q", format, s)
			}
			return nil
		})
	}
	return []openapi3.SchemaValidationOption{
		openapi3.WithStringFormatValidator("uuid", matches("lowercase UUID", uuidPattern)),
		openapi3.WithStringFormatValidator("date-time", matches("UTC date-time (Z, at most microseconds)", dateTimePattern)),
		openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
		openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
			u, err := url.Parse(s)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return fmt.Errorf("not an absolute URL: %q", s)
			}
			return nil
		})),
	}
}

func newOpenAPIValidator(t testing.TB) *openAPIValidator {
	t.Helper()
	v, err := openAPIForTests()
	if err != nil {
		t.Fatalf("OpenAPI: %v", err)
	}
	return v
}

// check validates one exchange: finds the operation by method and path, then validates the
// status, the headers the document declares required and the JSON body against the declared
// schema. A 404 or 405 answered for a path or method no operation has is validated against the
// router's responses (NotFound, MethodNotAllowed).
func (v *openAPIValidator) check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	operation, err := v.validate(req, status, header, body)
	if err != nil {
		t.Errorf("OpenAPI: %s %s (%s) answered %d, which the document does not allow:\n%v\nbody: %s",
			req.Method, req.URL.Path, operation, status, err, bodyExcerpt(body, 2000))
	}
}

// validate returns the operation it matched (for the report) and what does not conform.
func (v *openAPIValidator) validate(req *http.Request, status int, header http.Header, body []byte) (string, error) {
	r := asRouted(req)
	route, params, err := v.findRoute(r, status)
	if err != nil {
		return "no operation", err
	}
	operation := route.Operation.OperationID
	if operation == "" {
		operation = "router"
	}
	return operation, v.validateResponse(route, params, r, status, header, body)
}

// findRoute finds the operation of a request; a 404 or 405 for a path or a method that no
// operation has is the router's response.
func (v *openAPIValidator) findRoute(r *http.Request, status int) (*routers.Route, map[string]string, error) {
	if strings.Contains(r.URL.Path, "//") {
		// An empty segment (an empty id) is no path of the document, whatever its router makes
		// of it: the service answers it as an unknown path.
		if status == http.StatusNotFound {
			return v.routerResponse(r, status, "NotFound"), nil, nil
		}
		return nil, nil, fmt.Errorf("no operation of the document matches a path with an empty segment")
	}
	route, params, err := v.router.FindRoute(r)
	if errors.Is(err, routers.ErrPathNotFound) && strings.HasPrefix(r.URL.Path, basePath+"/") {
		// A path under /api/v1 the document writes without its trailing slash (/openapi.json).
		bare := r.Clone(r.Context())
		bare.URL.Path = strings.TrimSuffix(r.URL.Path, "/")
		if alt, altParams, altErr := v.router.FindRoute(bare); !errors.Is(altErr, routers.ErrPathNotFound) {
			route, params, err = alt, altParams, altErr
		}
	}
	switch {
	case errors.Is(err, routers.ErrPathNotFound) && status == http.StatusNotFound:
		return v.routerResponse(r, status, "NotFound"), nil, nil
	case errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed:
		return v.routerResponse(r, status, "MethodNotAllowed"), nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("no operation of the document matches: %w", err)
	}
	return route, params, nil
}

func (v *openAPIValidator) validateResponse(route *routers.Route, params map[string]string, r *http.Request, status int, header http.Header, body []byte) error {
	if route.Operation.Responses.Status(status) == nil {
		return fmt.Errorf("status %d is not documented; documented: %s", status, strings.Join(documentedStatuses(route.Operation), ", "))
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: v.opts},
		Status:                 status,
		Header:                 header,
		Options:                v.opts,
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// routerResponse is a route whose only response is one of the router's own (components).
func (v *openAPIValidator) routerResponse(r *http.Request, status int, name string) *routers.Route {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, v.doc.Components.Responses[name]))
	return &routers.Route{Spec: v.doc, Path: r.URL.Path, Method: r.Method, Operation: op}
}

// asRouted is the request as the router sees it: under /api/v1 a path without its trailing
// slash is served as the same path with it (Server.ServeHTTP).
func asRouted(req *http.Request) *http.Request {
	r := req.Clone(context.Background())
	if strings.HasPrefix(r.URL.Path, basePath) && !strings.HasSuffix(r.URL.Path, "/") {
		r.URL.Path += "/"
		r.URL.RawPath = ""
	}
	return r
}

func documentedStatuses(op *openapi3.Operation) []string {
	return slices.Sorted(maps.Keys(op.Responses.Map()))
}

func bodyExcerpt(body []byte, max int) string {
	if len(body) > max {
		return string(body[:max]) + "…"
	}
	return string(body)
}
