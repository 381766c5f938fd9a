package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/webhook"
)

// Fuzz targets of the request decoders and the pure validation they feed. The seed corpora are
// in testdata/fuzz/<FuzzName>/; `go test` runs them, `make fuzz` fuzzes each target.

// fuzzBenin is the numbering plan the phone checks below use.
var fuzzBenin = sika.Country{ISOCode: "BJ", Name: "Benin", CallingCode: "229", NationalNumberLengths: []int{8, 10}}

// fuzzDecode runs decodeJSONObject into dst and checks what any decoder must hold: no panic;
// an error is a *sika.Error, invalid_json exactly when the body is not JSON, otherwise a field
// map naming only fields of dst and members of the body that are not fields of dst (the
// unknown ones, with the unknown-field message and only them), or non_field_errors when the
// body is not an object, each with a message; a body that decodes has no unknown member (strict
// input). It reports whether the body decoded.
func fuzzDecode(t *testing.T, body []byte, dst any) bool {
	t.Helper()
	known := map[string]bool{}
	for _, name := range bodyFields(dst) {
		known[name] = true
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(body, &members)
	err := decodeJSONObject(body, dst)
	if err == nil {
		for name := range members {
			if !known[name] {
				t.Fatalf("decode %q: accepted the unknown member %q", body, name)
			}
		}
		return true
	}
	var se *sika.Error
	if !errors.As(err, &se) {
		t.Fatalf("decode %q: %T %v, want a *sika.Error", body, err, err)
	}
	blank := len(bytes.TrimSpace(body)) == 0
	switch se.Code {
	case sika.CodeInvalidJSON:
		if blank || json.Valid(body) {
			t.Fatalf("decode %q: invalid_json for a JSON body", body)
		}
	case sika.CodeValidation:
		if !json.Valid(body) {
			t.Fatalf("decode %q: a field map for a body that is not JSON: %v", body, se.Fields)
		}
		if len(se.Fields) == 0 {
			t.Fatalf("decode %q: a validation error without fields", body)
		}
		for field, msgs := range se.Fields {
			_, member := members[field]
			unknown := member && !known[field]
			if !(known[field] || unknown || field == "non_field_errors") || len(msgs) == 0 || slicesHasEmpty(msgs) {
				t.Fatalf("decode %q: field error %q: %q", body, field, msgs)
			}
			if isUnknown := slices.Equal(msgs, []string{sika.MsgUnknownField}); isUnknown != unknown {
				t.Fatalf("decode %q: field %q (unknown = %v): %q", body, field, unknown, msgs)
			}
		}
		var unknown []string
		for name := range members {
			if !known[name] {
				unknown = append(unknown, name)
			}
		}
		slices.Sort(unknown)
		for i, name := range unknown { // the first maxUnknownFields in sorted order are named
			if named := len(se.Fields[name]) > 0; named != (i < maxUnknownFields) {
				t.Fatalf("decode %q: unknown member %q (%d of %d) named = %v", body, name, i+1, len(unknown), named)
			}
		}
		if _, bad := se.Fields["non_field_errors"]; bad && members != nil && !slices.Contains(unknown, "non_field_errors") {
			t.Fatalf("decode %q: non_field_errors for a JSON object", body)
		}
	default:
		t.Fatalf("decode %q: code %s, want invalid_json or a field map", body, se.Code)
	}
	return false
}

func slicesHasEmpty(msgs []string) bool {
	for _, m := range msgs {
		if m == "" {
			return true
		}
	}
	return false
}

// fuzzAmount checks parseAmount on a decoded amount: an accepted one is > 0 with at most two
// decimals; a refused one has a message, and a negative number is told it must be greater
// than 0, not that it is not a number.
func fuzzAmount(t *testing.T, raw, currency string) {
	t.Helper()
	d, err := parseAmount(raw, currency)
	if err == nil {
		if !d.IsPositive() || !d.Equal(d.Round(2)) {
			t.Fatalf("parseAmount(%q, %q) accepted %s", raw, currency, d)
		}
		return
	}
	if err.Error() == "" {
		t.Fatalf("parseAmount(%q, %q): an empty message", raw, currency)
	}
	if digits, neg := strings.CutPrefix(strings.TrimSpace(raw), "-"); neg && plainDecimal.MatchString(digits) && err.Error() != sika.MsgAmountNotPositive {
		t.Fatalf("parseAmount(%q, %q) = %q, want %q", raw, currency, err, sika.MsgAmountNotPositive)
	}
}

// fuzzMetadata checks normaliseMetadata on a decoded metadata: accepted, it is a JSON object.
func fuzzMetadata(t *testing.T, raw json.RawMessage) {
	t.Helper()
	m, err := normaliseMetadata(raw)
	if err != nil {
		return
	}
	var obj map[string]any
	if json.Unmarshal(m, &obj) != nil || obj == nil {
		t.Fatalf("normaliseMetadata(%q) accepted %q, not a JSON object", raw, m)
	}
}

// fuzzPhone checks NormalizePhone on a decoded phone: accepted, it is E.164 of the country.
func fuzzPhone(t *testing.T, raw string) {
	t.Helper()
	out, err := sika.NormalizePhone(fuzzBenin, raw)
	if err == nil && !strings.HasPrefix(out, "+229") {
		t.Fatalf("NormalizePhone(%q) = %q", raw, out)
	}
}

func FuzzDecodeSoftpay(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var req softpayRequest
		if fuzzDecode(t, body, &req) {
			fuzzAmount(t, req.Amount, req.Currency)
			fuzzMetadata(t, req.Metadata)
			fuzzPhone(t, req.CustomerPhone)
		}
	})
}

func FuzzDecodePayout(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var req payoutRequest
		if fuzzDecode(t, body, &req) {
			fuzzAmount(t, req.Amount, req.Currency)
			fuzzMetadata(t, req.Metadata)
			fuzzPhone(t, req.Recipient)
		}
	})
}

func FuzzDecodeCheckoutSession(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var req checkoutSessionRequest
		if fuzzDecode(t, body, &req) {
			fuzzAmount(t, req.Amount, req.Currency)
			fuzzMetadata(t, req.Metadata)
			fuzzPhone(t, req.CustomerPhone)
		}
	})
}

// FuzzDecodePaymentLink runs decodePaymentLink, which also records the fields the body carries.
func FuzzDecodePaymentLink(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var plain paymentLinkRequest
		decoded := fuzzDecode(t, body, &plain)
		req, err := decodePaymentLink(httptest.NewRequest(http.MethodPost, "/api/v1/payment-links/", bytes.NewReader(body)), nil)
		if (err == nil) != decoded {
			t.Fatalf("decodePaymentLink(%q): error %v, decodeJSONObject agreed = %v", body, err, decoded)
		}
		if err != nil {
			return
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(body, &raw)
		for k := range raw {
			if !req.present[k] {
				t.Fatalf("decodePaymentLink(%q): %q is not marked present", body, k)
			}
		}
		if len(req.present) != len(raw) {
			t.Fatalf("decodePaymentLink(%q): present %v", body, req.present)
		}
		if req.Amount != nil {
			fuzzAmount(t, *req.Amount, "")
		}
		if req.MinAmount != nil {
			fuzzAmount(t, *req.MinAmount, "")
		}
		fuzzMetadata(t, req.Metadata)
	})
}

// FuzzDecodeKYC decodes the body both as a dossier and as a document, and runs the length check.
func FuzzDecodeKYC(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var dossier kycDossierRequest
		if fuzzDecode(t, body, &dossier) {
			var v sika.Validation
			for field, value := range map[string]string{"first_name": dossier.FirstName, "last_name": dossier.LastName,
				"company_name": dossier.CompanyName, "rccm_number": dossier.RCCMNumber, "ifu_number": dossier.IFUNumber} {
				maxLength(&v, field, value, kycTextMax)
				if over := len([]rune(value)) > kycTextMax; over != v.Has(field) {
					t.Fatalf("maxLength(%s, %d runes): flagged = %v", field, len([]rune(value)), v.Has(field))
				}
			}
			if dossier.Merchant != nil {
				_, _ = uuid.Parse(*dossier.Merchant)
			}
		}
		var doc kycDocumentRequest
		fuzzDecode(t, body, &doc)
	})
}

// fuzzNeverWebhook are ranges a webhook may never target, written independently of the guard:
// special-purpose IPv4 and IPv6 ranges and the IPv6 forms that carry an internal IPv4 address.
var fuzzNeverWebhook = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/3", "::/96", "64:ff9b:1::/48", "100::/64", "2001:2::/48", "2001:db8::/32", "3fff::/20",
		"fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
		"::ffff:127.0.0.0/104", "::ffff:10.0.0.0/104", "64:ff9b::7f00:0/104", "64:ff9b::a00:0/104", "64:ff9b::a9fe:0/112",
		"2002:7f00::/24", "2002:a00::/24", "2002:c0a8::/32", "::ffff:0:a00:0/104"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// FuzzDecodeWebhook decodes an endpoint body and checks its URL with a guard that resolves no
// name (no network while fuzzing): an accepted URL is absolute http(s), https in LIVE, with a
// public IP literal for host.
func FuzzDecodeWebhook(f *testing.F) {
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS while fuzzing")
	}}
	srv := newDocTestServer(Config{WebhookGuard: webhook.Guard{Resolver: noDNS}})
	f.Fuzz(func(t *testing.T, body []byte, live bool) {
		var req webhookRequest
		if !fuzzDecode(t, body, &req) || req.URL == nil {
			return
		}
		env := sika.EnvironmentTest
		if live {
			env = sika.EnvironmentLive
		}
		r := httptest.NewRequest(http.MethodPost, "/api/v1/merchant-webhooks/", nil)
		err := srv.checkEndpointURL(r, *req.URL, env)
		if err != nil {
			var se *sika.Error
			if !errors.As(err, &se) || se.Code != sika.CodeValidation || len(se.Fields["url"]) == 0 {
				t.Fatalf("checkEndpointURL(%q): %v, want a field error on url", *req.URL, err)
			}
			return
		}
		u, perr := url.Parse(*req.URL)
		if perr != nil || !u.IsAbs() || (u.Scheme != "https" && (live || u.Scheme != "http")) || u.User != nil {
			t.Fatalf("checkEndpointURL(%q, %s) accepted it", *req.URL, env)
		}
		a, perr := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
		if perr != nil {
			t.Fatalf("checkEndpointURL(%q) accepted a name without resolving it", *req.URL)
		}
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
			t.Fatalf("checkEndpointURL(%q) accepted the internal address %s", *req.URL, a)
		}
		for _, p := range fuzzNeverWebhook {
			if p.Contains(a) {
				t.Fatalf("checkEndpointURL(%q) accepted %s, in %s", *req.URL, a, p)
			}
		}
	})
}

// FuzzDecodeCursor: any string is either a cursor this server signed (and then re-encodes to
// exactly itself) or a validation error on `cursor`, never a panic or a 500.
func FuzzDecodeCursor(f *testing.F) {
	srv := newDocTestServer(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := srv.decodeCursor(raw)
		if err != nil {
			var se *sika.Error
			if !errors.As(err, &se) || se.Code != sika.CodeValidation || len(se.Fields["cursor"]) == 0 {
				t.Fatalf("decodeCursor(%q): %v, want a field error on cursor", raw, err)
			}
			return
		}
		if again := srv.encodeCursor(c); again != raw {
			t.Fatalf("decodeCursor(%q) = %+v, which encodes to %q", raw, c, again)
		}
	})
}

// FuzzParsePage: any query string is either a page within bounds (1 ≤ page ≤ maxPage,
// 1 ≤ page_size ≤ maxPageSize, an offset that does not overflow) or a validation error on page
// or page_size, never a 500.
func FuzzParsePage(f *testing.F) {
	for _, seed := range []string{"page=92233720368547760&page_size=100", "page=10000&page_size=100", "page=10001", "page=-1",
		"page=9223372036854775807", "page_size=99999999999999999999", "page=1&page=2", "page=%00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/checkout-sessions/", nil)
		r.URL.RawQuery = query
		p, err := parsePage(r)
		if err != nil {
			var se *sika.Error
			if !errors.As(err, &se) || se.Code != sika.CodeValidation || len(se.Fields) == 0 {
				t.Fatalf("parsePage(%q): %v, want a field error", query, err)
			}
			for field := range se.Fields {
				if field != "page" && field != "page_size" {
					t.Fatalf("parsePage(%q): an error on %q", query, field)
				}
			}
			return
		}
		if p.Page < 1 || p.Page > maxPage || p.PageSize < 1 || p.PageSize > maxPageSize {
			t.Fatalf("parsePage(%q) = %+v", query, p)
		}
		if off := (p.Page - 1) * p.PageSize; off < 0 || off/p.PageSize != p.Page-1 {
			t.Fatalf("parsePage(%q) = %+v: the offset overflows", query, p)
		}
	})
}

// fuzzLink is the payment link FuzzDecodeUpdate sends bodies against, as GET answers it.
var fuzzLink = func() sika.PaymentLink {
	amount := sika.NewAmount(decimal.RequireFromString("5000"))
	created := time.Date(2026, 11, 28, 1, 2, 3, 456789000, time.UTC)
	return sika.PaymentLink{ID: uuid.MustParse("0e0b9b6a-3c1e-4f57-a2b4-8f0f0c7a1d11"), Merchant: uuid.MustParse("5a2c0e7e-9d7b-4a43-8f11-2f6c9d0b3e22"),
		Name: "T-shirt", Slug: "pl_fuzz", AmountType: sika.AmountFixed, Amount: &amount, Currency: "XOF", IsActive: true,
		Environment: sika.EnvironmentTest, CreatedAt: created, UpdatedAt: created}
}()

// FuzzDecodeUpdate: a PUT or PATCH body against a resource (decodePaymentLink on fuzzLink) is
// decoded only when every member is a field the route takes or one of the resource's read-only
// fields sent back unchanged (which then are not marked present); a read-only field that differs
// is refused with the read-only message, naming it; a member the resource does not have is
// unknown.
func FuzzDecodeUpdate(f *testing.F) {
	got, _ := json.Marshal(fuzzLink)
	f.Add(got)
	var m map[string]any
	_ = json.Unmarshal(got, &m)
	m["name"] = "New name"
	renamed, _ := json.Marshal(m)
	f.Add(renamed)
	m["id"] = uuid.NewString()
	m["created_at"] = "2020-01-01T00:00:00Z"
	f.Add(func() []byte { b, _ := json.Marshal(m); return b }())
	f.Add([]byte(`{"slug":"pl_fuzz","unknown":1}`))
	have := map[string]json.RawMessage{}
	_ = json.Unmarshal(got, &have)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPut, "/api/v1/payment-links/x/", bytes.NewReader(body))
		current := fuzzLink
		req, err := decodePaymentLink(r, &current)
		var raw map[string]json.RawMessage
		isObject := json.Unmarshal(body, &raw) == nil && raw != nil
		takes := map[string]bool{}
		for _, name := range bodyFields(&paymentLinkRequest{}) {
			takes[name] = true
		}
		if err == nil {
			for k, v := range raw {
				was, readOnly := have[k]
				switch {
				case takes[k]:
					if !req.present[k] {
						t.Fatalf("%q: %q is not marked present", body, k)
					}
				case readOnly && sameJSON(v, was):
					if req.present[k] {
						t.Fatalf("%q: the read-only %q is marked present", body, k)
					}
				default:
					t.Fatalf("%q: accepted %q", body, k)
				}
			}
			return
		}
		var se *sika.Error
		if !errors.As(err, &se) {
			t.Fatalf("%q: %T %v", body, err, err)
		}
		if !isObject || se.Code != sika.CodeValidation {
			return
		}
		for field, msgs := range se.Fields {
			_, readOnly := have[field]
			isReadOnlyMsg := slices.Contains(msgs, sika.MsgReadOnly)
			if isReadOnlyMsg != (readOnly && !takes[field] && !sameJSON(raw[field], have[field])) {
				t.Fatalf("%q: field %q: %q", body, field, msgs)
			}
			if slices.Contains(msgs, sika.MsgUnknownField) && (readOnly || takes[field]) {
				t.Fatalf("%q: the resource's field %q called unknown", body, field)
			}
		}
	})
}
