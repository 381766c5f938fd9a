package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/sikahq/sika"
)

// TestContractProperties is the property-based pass of issue 15: for every operation of the
// OpenAPI document (its paths and methods, so a route added later is covered without a change
// here), rapid generates requests from the document itself (path ids of the merchant's real
// objects, of another merchant and made up; query and header parameters from their schemas;
// bodies valid by their schema, or made invalid: a field of the wrong type, a required field
// missing, an unknown field, huge values and strings, zero and negative amounts, malformed JSON)
// and sends them to the API on the package's real stack (Postgres, Temporal, the sandbox
// operator). Every answer must hold to the contract:
//
//   - never a 5xx;
//   - every error in the contract's envelope (§2);
//   - the status, the headers and the body allowed by the document for that operation, error
//     codes included (validatedHandler; each error response lists its codes).
//
// SIKA_CONTRACT_CHECKS sets how many requests each operation gets (default 3, a few hundred in
// all, about half a minute); a long run: SIKA_CONTRACT_CHECKS=200.
func TestContractProperties(t *testing.T) {
	checks := 3
	if s := os.Getenv("SIKA_CONTRACT_CHECKS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "SIKA_CONTRACT_CHECKS")
		checks = n
	}
	ps := payments(t)
	v := newOpenAPIValidator(t)
	f := newContractFixture(t, ps.testServer)

	prev := flag.Lookup("rapid.checks").Value.String()
	require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(checks)))
	t.Cleanup(func() { _ = flag.Set("rapid.checks", prev) })

	stats := &contractStats{byStatus: map[int]int{}}
	for _, path := range slices.Sorted(maps.Keys(v.doc.Paths.Map())) {
		item := v.doc.Paths.Value(path)
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			op := item.GetOperation(method)
			where := method + " " + path
			access := sweepAccessOf(t, where, op.Security)
			t.Run(where, func(t *testing.T) {
				rapid.Check(t, func(rt *rapid.T) {
					f.exchange(rt, ps.testServer, stats, path, method, item, op, access)
				})
			})
		}
	}
	stats.Lock()
	defer stats.Unlock()
	statuses := slices.Sorted(maps.Keys(stats.byStatus))
	var summary []string
	for _, s := range statuses {
		summary = append(summary, fmt.Sprintf("%d×%d", s, stats.byStatus[s]))
	}
	t.Logf("contract properties: %d requests over %d operations (%d checks each): %s",
		stats.requests, stats.operations(), checks, strings.Join(summary, " "))
	require.Greater(t, stats.requests, 0)
}

// contractStats counts what the pass sent and what came back.
type contractStats struct {
	sync.Mutex
	requests int
	byStatus map[int]int
	ops      map[string]bool
}

func (s *contractStats) add(where string, status int) {
	s.Lock()
	defer s.Unlock()
	s.requests++
	s.byStatus[status]++
	if s.ops == nil {
		s.ops = map[string]bool{}
	}
	s.ops[where] = true
}

func (s *contractStats) operations() int { return len(s.ops) }

// contractFixture is what the generated requests are about: merchant A's objects (its real ids
// by kind and environment), merchant B's, A's hosted-page slugs and the credentials of both.
type contractFixture struct {
	a, b      *account // both active
	inactive  *account // KYC not approved: its LIVE key is refused
	staff     []string
	own       *sweepFixture
	other     *sweepFixture
	slugs     []string // A's checkout session and payment link slugs
	otherSlug string
}

func newContractFixture(t *testing.T, ts *testServer) *contractFixture {
	t.Helper()
	f := &contractFixture{a: ts.newAccount(t, true), b: ts.newAccount(t, true), inactive: ts.newAccount(t, false), staff: ts.staff(t)}
	for _, p := range []string{"127.0.0.1/32", "::1/128"} { // API-key payouts from this test
		_, err := testStore.AddIPWhitelistEntry(t.Context(), f.a.Merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix(p), "contract properties")
		require.NoError(t, err)
	}
	f.own = newSweepFixture(t, ts, f.a)
	f.other = newSweepFixture(t, ts, f.b)
	slug := func(path string, body map[string]any, acct *account) string {
		r := ts.call(t, "POST", path, body, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var v struct{ Slug string }
		r.data(t, &v)
		return v.Slug
	}
	session := map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"}
	link := map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}
	f.slugs = []string{slug("/api/v1/checkout-sessions/", session, f.a), slug("/api/v1/payment-links/", link, f.a)}
	f.otherSlug = slug("/api/v1/checkout-sessions/", session, f.b)
	return f
}

// exchange generates one request of an operation, sends it and checks the answer.
func (f *contractFixture) exchange(rt *rapid.T, ts *testServer, stats *contractStats, path, method string, item *openapi3.PathItem, op *openapi3.Operation, access sweepAccess) {
	params := slices.Concat(item.Parameters, op.Parameters)
	target := path
	query := url.Values{}
	header := http.Header{}
	for _, p := range params {
		p := p.Value
		switch p.In {
		case openapi3.ParameterInPath:
			target = strings.Replace(target, "{"+p.Name+"}", url.PathEscape(f.pathValue(rt, path, p)), 1)
		case openapi3.ParameterInQuery:
			if rapid.Bool().Draw(rt, "with "+p.Name) {
				query.Set(p.Name, f.paramValue(rt, p))
			}
		case openapi3.ParameterInHeader:
			if p.Required || rapid.IntRange(0, 3).Draw(rt, "with "+p.Name) > 0 {
				header.Set(p.Name, f.paramValue(rt, p))
			}
		}
	}
	if item.Servers == nil || item.Servers[0].URL != "/" {
		target = basePath + target
	}
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	for name, values := range f.credentials(rt, access) {
		header[name] = values
	}
	body, contentType := f.body(rt, method, op)
	// fromGET is, in a round trip, the fields the body carries as GET answered them (not the
	// generated body's, which may be refused for what they are: an unknown field, a mutation).
	var fromGET map[string]bool
	if (method == http.MethodPut || method == http.MethodPatch) && rapid.IntRange(0, 3).Draw(rt, "round trip") == 0 {
		// The resource as GET answers it, with the generated body's fields over it: its
		// read-only fields come back unchanged, which strict input must accept.
		if got, ok := f.current(ts, target, header); ok {
			var over map[string]any
			if json.Unmarshal(body, &over) == nil {
				fromGET = map[string]bool{}
				for k := range got {
					if _, generated := over[k]; !generated {
						fromGET[k] = true
					}
				}
				maps.Copy(got, over)
				body, _ = json.Marshal(got)
				contentType = "application/json"
			}
		}
	}
	if contentType != "" {
		header.Set("Content-Type", contentType)
	}

	req, err := http.NewRequest(method, ts.url+target, bytes.NewReader(body))
	if err != nil {
		rt.Fatalf("build %s %s: %v", method, target, err)
	}
	req.Header = header
	token := markExchange(req)
	resp, err := noRedirects.Do(req)
	if err != nil {
		rt.Fatalf("%s %s: %v", method, target, err)
	}
	var raw []byte
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, err = io.ReadAll(resp.Body)
	} // a stream never ends: its status and headers are the answer, then the client leaves
	resp.Body.Close()
	if err != nil {
		rt.Fatalf("%s %s: read the answer: %v", method, target, err)
	}
	validated, verdict := awaitExchange(token)
	stats.add(method+" "+path, resp.StatusCode)
	sent := fmt.Sprintf("%s %s\nheaders: %v\nbody: %s\nanswer %d: %s", method, target, redactedHeaders(header),
		bodyExcerpt(body, 600), resp.StatusCode, bodyExcerpt(raw, 1500))
	if resp.StatusCode >= 500 {
		rt.Fatalf("a 5xx is a bug:\n%s", sent)
	}
	if !validated {
		rt.Fatalf("the server gave no verdict on the exchange:\n%s", sent)
	}
	if verdict != nil {
		rt.Fatalf("%v\nrequest: %s", verdict, sent)
	}
	if resp.StatusCode >= 400 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := checkErrorEnvelope(raw); err != nil {
			rt.Fatalf("not the error envelope (%v):\n%s", err, sent)
		}
	}
	if fromGET != nil && resp.StatusCode == http.StatusBadRequest {
		var env struct {
			Error map[string][]string `json:"error"`
		}
		_ = json.Unmarshal(raw, &env)
		for field, msgs := range env.Error {
			if fromGET[field] && (slices.Contains(msgs, sika.MsgUnknownField) || slices.Contains(msgs, sika.MsgReadOnly)) {
				rt.Fatalf("the resource as GET answered it was refused on %s: %v\n%s", field, msgs, sent)
			}
		}
	}
}

// current is the resource at target as GET answers it with the same credentials (ok false when
// GET does not answer 200 with an object).
func (f *contractFixture) current(ts *testServer, target string, header http.Header) (map[string]any, bool) {
	req, err := http.NewRequest(http.MethodGet, ts.url+target, nil)
	if err != nil {
		return nil, false
	}
	req.Header = header.Clone()
	resp, err := noRedirects.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&env) != nil || env.Data == nil {
		return nil, false
	}
	return env.Data, true
}

// noRedirects is a client that answers a redirect as it is: the 301 is the operation's answer.
var noRedirects = &http.Client{
	Timeout:       time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// checkErrorEnvelope is contract §2, independently of the document: success false and an
// error that is either {code, message} or a map of fields to non-empty lists of messages.
func checkErrorEnvelope(raw []byte) error {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		return err
	}
	if string(env["success"]) != "false" || len(env) != 2 || env["error"] == nil {
		return fmt.Errorf("want exactly success: false and error")
	}
	var business struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(env["error"], &business) == nil && business.Code != "" {
		if business.Message == "" {
			return fmt.Errorf("error %s without a message", business.Code)
		}
		return nil
	}
	var fields map[string][]string
	if err := json.Unmarshal(env["error"], &fields); err != nil || len(fields) == 0 {
		return fmt.Errorf("error is neither a code and message nor a field map")
	}
	for name, msgs := range fields {
		if len(msgs) == 0 || slices.Contains(msgs, "") {
			return fmt.Errorf("field %s without a message", name)
		}
	}
	return nil
}

func redactedHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for name := range h {
		v := h.Get(name)
		if name == "Authorization" && len(v) > 20 {
			v = v[:20] + "…"
		}
		if name != exchangeHeader {
			out[name] = bodyExcerpt([]byte(v), 80)
		}
	}
	return out
}

// pathValue is a path parameter: mostly the id of the merchant's own object of the kind the
// path names, else the same kind of another environment or merchant, a random id, garbage.
func (f *contractFixture) pathValue(rt *rapid.T, path string, p *openapi3.Parameter) string {
	if s := p.Schema.Value; s != nil && len(s.Enum) > 0 && rapid.IntRange(0, 4).Draw(rt, p.Name+" enum") > 0 {
		return fmt.Sprint(rapid.SampledFrom(s.Enum).Draw(rt, p.Name))
	}
	own := func(env sika.Environment) string {
		kind := sweepKindOf(path)
		if kind == "" {
			return ""
		}
		if p.Name == "sha256" {
			return f.own.file[0]
		}
		if p.Name == "ext" {
			return f.own.file[1]
		}
		return f.own.ids[env][kind]
	}
	var choices []string
	switch p.Name {
	case "slug":
		choices = append(slices.Clone(f.slugs), f.otherSlug)
	case "gateway":
		choices = []string{"sandbox-a", "sandbox-b", "wave"}
	default:
		choices = []string{own(sika.EnvironmentTest), own(sika.EnvironmentTest), own(sika.EnvironmentLive)}
		if kind := sweepKindOf(path); kind != "" {
			choices = append(choices, f.other.ids[sika.EnvironmentTest][kind])
		}
	}
	choices = slices.DeleteFunc(choices, func(s string) bool { return s == "" })
	choices = append(choices, uuid.NewString(), "evt_"+strings.ReplaceAll(uuid.NewString(), "-", ""))
	switch rapid.IntRange(0, 9).Draw(rt, p.Name+" kind") {
	case 8:
		// Any text but "/": a slash, even percent-encoded, is decoded by the router into a
		// separator, and the request then names another path rather than a value of this
		// parameter (GET /l/A%2FA/ is GET /l/A/A/, which no operation describes).
		return strings.ReplaceAll(rapid.StringN(0, 40, -1).Draw(rt, p.Name+" garbage"), "/", "")
	case 9:
		return strings.Repeat("9", rapid.IntRange(100, 5000).Draw(rt, p.Name+" length"))
	}
	return rapid.SampledFrom(choices).Draw(rt, p.Name)
}

// paramValue is a query or header parameter: from its schema, or garbage now and then.
func (f *contractFixture) paramValue(rt *rapid.T, p *openapi3.Parameter) string {
	if p.Name == "Idempotency-Key" && rapid.IntRange(0, 9).Draw(rt, "fresh key") > 0 {
		return uuid.NewString() // money moves only once per key: a fresh one gets past it
	}
	if p.Name == "X-Environment" && rapid.IntRange(0, 3).Draw(rt, "test environment") > 0 {
		return string(sika.EnvironmentTest)
	}
	if rapid.IntRange(0, 5).Draw(rt, p.Name+" garbage") == 0 {
		return rapid.SampledFrom([]string{"", "-1", "0", "abc", "1e309", strings.Repeat("x", 3000), "null", "%00", "ÿ"}).Draw(rt, p.Name)
	}
	if p.Schema == nil || p.Schema.Value == nil {
		return rapid.StringN(0, 20, -1).Draw(rt, p.Name)
	}
	v := f.value(rt, p.Name, p.Schema.Value, 0)
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ",")
	default:
		raw, _ := json.Marshal(v)
		return strings.Trim(string(raw), `"`)
	}
}

// credentials are mostly what the operation's security asks for, else none, a bad one, a key
// of the other scope, a LIVE key of a merchant that is not active, or another session.
func (f *contractFixture) credentials(rt *rapid.T, access sweepAccess) http.Header {
	h := http.Header{}
	set := func(kv []string) {
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
	}
	test := sika.EnvironmentTest
	switch rapid.IntRange(0, 15).Draw(rt, "credentials") {
	case 0:
		return h
	case 1:
		set(bearer("sk_test_" + rapid.StringMatching(`[A-Za-z0-9]{0,60}`).Draw(rt, "bad key")))
		return h
	case 2:
		set(f.a.key(test, sika.ScopePayin))
		return h
	case 3:
		set(f.a.key(test, sika.ScopePayout))
		return h
	case 4:
		set(f.inactive.key(sika.EnvironmentLive, sika.ScopeBoth))
		return h
	case 5:
		set(f.b.dashboard(test))
		return h
	}
	switch access {
	case sweepMember:
		set(bearer(f.a.Token))
	case sweepMerchant:
		if rapid.Bool().Draw(rt, "api key") {
			set(f.a.key(test, sika.ScopeBoth))
		} else {
			set(f.a.dashboard(test))
		}
	case sweepDashboard:
		set(f.a.dashboard(test))
	case sweepStaff:
		set(f.staff)
	}
	return h
}

// body is a request body for the operation and its Content-Type ("" for none).
func (f *contractFixture) body(rt *rapid.T, method string, op *openapi3.Operation) ([]byte, string) {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		if method == http.MethodGet || method == http.MethodDelete || rapid.IntRange(0, 3).Draw(rt, "no body") > 0 {
			return nil, ""
		}
		return []byte(`{"unexpected":1}`), "application/json"
	}
	content := op.RequestBody.Value.Content
	media := content.Get("application/json")
	if media == nil || media.Schema == nil {
		// A body that is not JSON (the multipart KYC upload): bytes that are not what it takes.
		ct := slices.Sorted(maps.Keys(content))[0]
		return rapid.SliceOfN(rapid.Byte(), 0, 2000).Draw(rt, "raw body"), rapid.SampledFrom([]string{ct, ct + "; boundary=x", "application/json"}).Draw(rt, "content type")
	}
	valid := f.value(rt, "body", media.Schema.Value, 0)
	var raw []byte
	switch rapid.IntRange(0, 9).Draw(rt, "body kind") {
	case 0, 1, 2, 3, 4:
		raw, _ = json.Marshal(valid)
	case 5, 6:
		raw, _ = json.Marshal(f.mutate(rt, valid, media.Schema.Value))
	case 7:
		good, _ := json.Marshal(valid)
		raw = good[:rapid.IntRange(0, max(0, len(good)-1)).Draw(rt, "cut at")]
		raw = append(raw, rapid.SampledFrom([]string{"", "}", ",", "\x00", "'", `"\u`}).Draw(rt, "tail")...)
	case 8:
		raw = []byte(rapid.SampledFrom([]string{"[]", "null", `"text"`, "42", "true", `[{"amount":"1"}]`, "{}", ""}).Draw(rt, "not an object"))
	case 9:
		m, _ := valid.(map[string]any)
		m = maps.Clone(m)
		if m == nil {
			m = map[string]any{}
		}
		m[rapid.SampledFrom(slices.Concat(slices.Sorted(maps.Keys(m)), []string{"description"})).Draw(rt, "huge field")] =
			strings.Repeat("A", rapid.IntRange(10_000, 1_100_000).Draw(rt, "huge length"))
		raw, _ = json.Marshal(m)
	}
	return raw, "application/json"
}

// mutate makes a valid body invalid in one way.
func (f *contractFixture) mutate(rt *rapid.T, valid any, s *openapi3.Schema) any {
	m, ok := valid.(map[string]any)
	if !ok {
		return []any{valid}
	}
	m = maps.Clone(m)
	keys := slices.Sorted(maps.Keys(m))
	pick := func(label string) string {
		if len(keys) == 0 {
			return "amount"
		}
		return rapid.SampledFrom(keys).Draw(rt, label)
	}
	switch rapid.IntRange(0, 6).Draw(rt, "mutation") {
	case 0: // a required field missing
		if req := requiredOf(s); len(req) > 0 {
			delete(m, rapid.SampledFrom(req).Draw(rt, "drop"))
		}
	case 1: // a field of the wrong type
		k := pick("retype")
		m[k] = rapid.SampledFrom([]any{42, -1.5, true, nil, []any{1}, map[string]any{"a": 1}, "text"}).Draw(rt, "wrong value")
	case 2: // an unknown field
		m["bogus_"+rapid.StringMatching(`[a-z]{1,8}`).Draw(rt, "unknown")] = 1
	case 3: // zero, negative and absurd amounts
		m[rapid.SampledFrom([]string{"amount", "min_amount", "max_amount"}).Draw(rt, "amount field")] = rapid.SampledFrom([]any{
			"0", "-5", "-0.01", "0.001", "1e400", "99999999999999999999999999999999.99", "NaN", "Infinity", " 100", "1,000",
			"١٠٠", 1000, 1e308, -1, math.MaxInt64}).Draw(rt, "amount")
	case 4: // huge numbers and strings in a field
		m[pick("huge")] = rapid.SampledFrom([]any{1e308, math.MaxInt64, -math.MaxInt64, strings.Repeat("9", 5000), strings.Repeat("é", 20000)}).Draw(rt, "huge value")
	case 5: // control characters and odd Unicode in a string field
		m[pick("odd")] = rapid.SampledFrom([]string{"\x00", "\u202e", "\ud7ff", "<script>", "' OR 1=1 --", "\n\r\t"}).Draw(rt, "odd string")
	case 6: // a nested object where a scalar goes, deeply
		var deep any = 1
		for range rapid.IntRange(1, 200).Draw(rt, "depth") {
			deep = map[string]any{"a": deep}
		}
		m[pick("deep")] = deep
	}
	return m
}

// requiredOf is the required members of an object schema, allOf parts included.
func requiredOf(s *openapi3.Schema) []string {
	req := slices.Clone(s.Required)
	for _, part := range s.AllOf {
		if part.Value != nil {
			req = append(req, requiredOf(part.Value)...)
		}
	}
	slices.Sort(req)
	return slices.Compact(req)
}

// value generates a value valid for a schema. Field names steer strings towards what the
// service knows (amounts, currencies, countries, networks, phone numbers, the merchant's ids),
// so that valid requests reach past validation.
func (f *contractFixture) value(rt *rapid.T, name string, s *openapi3.Schema, depth int) any {
	label := fmt.Sprintf("%s@%d", name, depth)
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return rapid.SampledFrom(s.Enum).Draw(rt, label)
	case len(s.OneOf) > 0:
		return f.value(rt, name, rapid.SampledFrom(s.OneOf).Draw(rt, label+" oneOf").Value, depth+1)
	case len(s.AnyOf) > 0:
		return f.value(rt, name, rapid.SampledFrom(s.AnyOf).Draw(rt, label+" anyOf").Value, depth+1)
	case len(s.AllOf) > 0:
		merged := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Properties: openapi3.Schemas{}}
		for _, part := range s.AllOf {
			p := part.Value
			if p == nil {
				continue
			}
			if len(p.Properties) == 0 && len(p.AllOf) == 0 && !p.Type.Is(openapi3.TypeObject) {
				return f.value(rt, name, p, depth+1)
			}
			maps.Copy(merged.Properties, p.Properties)
			merged.Required = append(merged.Required, requiredOf(p)...)
			for _, inner := range p.AllOf {
				if inner.Value != nil {
					maps.Copy(merged.Properties, inner.Value.Properties)
				}
			}
		}
		maps.Copy(merged.Properties, s.Properties)
		return f.value(rt, name, merged, depth+1)
	}
	types := []string{openapi3.TypeObject}
	if s.Type != nil && len(s.Type.Slice()) > 0 {
		types = slices.DeleteFunc(slices.Clone(s.Type.Slice()), func(t string) bool { return t == openapi3.TypeNull })
		if len(types) == 0 || (s.Type.IncludesNull() && rapid.IntRange(0, 7).Draw(rt, label+" null") == 0) {
			return nil
		}
	}
	switch typ := rapid.SampledFrom(types).Draw(rt, label+" type"); typ {
	case openapi3.TypeString:
		return f.stringValue(rt, name, s, label)
	case openapi3.TypeInteger, openapi3.TypeNumber:
		lo, hi := 0.0, 100.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		} else if lo > hi {
			hi = lo + 100
		}
		return rapid.IntRange(int(lo), int(max(lo, hi))).Draw(rt, label)
	case openapi3.TypeBoolean:
		return rapid.Bool().Draw(rt, label)
	case openapi3.TypeArray:
		if s.Items == nil || s.Items.Value == nil || depth > 4 {
			return []any{}
		}
		n := rapid.IntRange(int(s.MinItems), max(int(s.MinItems), 2)).Draw(rt, label+" items")
		out := make([]any, n)
		for i := range out {
			out[i] = f.value(rt, name, s.Items.Value, depth+1)
		}
		return out
	default: // object
		out := map[string]any{}
		if depth > 4 {
			return out
		}
		required := requiredOf(s)
		for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
			ps := s.Properties[prop].Value
			if ps == nil || ps.ReadOnly {
				continue
			}
			if slices.Contains(required, prop) || rapid.Bool().Draw(rt, prop+" present") {
				out[prop] = f.value(rt, prop, ps, depth+1)
			}
		}
		if len(s.Properties) == 0 && (s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has) {
			// Free-form (metadata): a few members of any kind.
			for i := range rapid.IntRange(0, 3).Draw(rt, label+" members") {
				out[fmt.Sprintf("k%d", i)] = rapid.SampledFrom([]any{"v", 1, true, nil, map[string]any{"n": []any{1, "x"}}}).Draw(rt, label+" member")
			}
		}
		return out
	}
}

// stringValue is a string valid for s, steered by the field's name.
func (f *contractFixture) stringValue(rt *rapid.T, name string, s *openapi3.Schema, label string) string {
	test := sika.EnvironmentTest
	phone := func() string {
		return "97000" + rapid.SampledFrom([]string{"123", "001", "003", "004"}).Draw(rt, label+" suffix")
	}
	switch name {
	case "amount", "min_amount", "max_amount":
		return rapid.SampledFrom([]string{"1000", "500", "25000", "100.50", "1", "150000"}).Draw(rt, label)
	case "currency":
		return rapid.SampledFrom([]string{"XOF", "XOF", "XAF", "EUR", "GNF"}).Draw(rt, label)
	case "country", "from_country", "to_country":
		return rapid.SampledFrom([]string{"BJ", "BJ", "TG", "SN", "CI", "CM"}).Draw(rt, label)
	case "network", "method":
		return rapid.SampledFrom([]string{"MTN_BJ", "MTN_BJ", "MOOV_BJ", "ORANGE_SN", "WAVE_SN", "MOOV_TG"}).Draw(rt, label)
	case "customer_phone", "phone_number", "recipient", "phone":
		return phone()
	case "otp":
		return rapid.SampledFrom([]string{"123456", "000000"}).Draw(rt, label)
	case "url", "file_url", "success_url", "cancel_url", "return_url", "redirect_url":
		return rapid.SampledFrom([]string{"https://93.184.216.34/hooks", "https://example.com/done"}).Draw(rt, label)
	case "payout_method":
		return rapid.SampledFrom([]string{f.own.ids[test]["payout_method"], f.other.ids[test]["payout_method"], uuid.NewString()}).Draw(rt, label)
	case "merchant":
		return rapid.SampledFrom([]string{f.a.Merchant.ID.String(), f.b.Merchant.ID.String()}).Draw(rt, label)
	case "transaction", "checkout_session":
		return rapid.SampledFrom([]string{f.own.ids[test]["payment"], f.own.ids[test]["checkout_session"], uuid.NewString()}).Draw(rt, label)
	case "cursor":
		return rapid.StringMatching(`[A-Za-z0-9_-]{0,40}`).Draw(rt, label)
	}
	switch s.Format {
	case "uuid":
		return rapid.SampledFrom([]string{uuid.NewString(), f.own.ids[test]["payment"], f.a.Merchant.ID.String()}).Draw(rt, label)
	case "date-time":
		return time.Now().UTC().Add(-time.Duration(rapid.IntRange(-48, 48).Draw(rt, label)) * time.Hour).Format(time.RFC3339)
	case "date":
		return time.Now().UTC().AddDate(0, 0, -rapid.IntRange(0, 30).Draw(rt, label)).Format(time.DateOnly)
	case "email":
		return rapid.StringMatching(`[a-z]{1,10}`).Draw(rt, label) + "@example.com"
	case "uri":
		return "https://example.com/" + rapid.StringMatching(`[a-z]{0,10}`).Draw(rt, label)
	case "ipv4", "ip":
		return rapid.SampledFrom([]string{"203.0.113.9", "10.0.0.0/8", "::1"}).Draw(rt, label)
	}
	if s.Pattern != "" {
		return rapid.StringMatching(s.Pattern).Draw(rt, label)
	}
	hi := 24
	if s.MaxLength != nil {
		hi = int(min(*s.MaxLength, 64))
	}
	lo := int(min(s.MinLength, uint64(hi)))
	return rapid.StringOfN(rapid.RuneFrom([]rune("abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789-é")), lo, hi, -1).Draw(rt, label)
}
