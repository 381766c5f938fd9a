package api

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// Strict input (issue 15): a body member a route does not declare is a 400 validation error
// naming it, for every JSON route, checked once in decodeJSONObject.

// requestBodies maps every write operation under /api/v1 to the request struct its handler
// decodes: its json tags are the body fields the route declares. struct{}{} is a route that
// takes no body fields (noBody).
var requestBodies = map[string]any{
	"POST /auth/register/":                        registerRequest{},
	"POST /auth/login/":                           loginRequest{},
	"POST /auth/merchants/":                       createMerchantRequest{},
	"POST /api-keys/":                             createAPIKeyRequest{},
	"POST /api-keys/{id}/revoke/":                 struct{}{},
	"POST /ip-whitelist/":                         addIPRequest{},
	"PATCH /merchant-settings/":                   settingsPatchRequest{},
	"POST /payments/softpay/":                     softpayRequest{},
	"POST /payments/softpay/initialize/":          softpayRequest{},
	"POST /payments/{id}/confirm-otp/":            confirmOTPRequest{},
	"POST /payments/{id}/retry/":                  retryRequest{},
	"POST /payouts/initialize/":                   payoutRequest{},
	"POST /refunds/":                              refundRequest{},
	"POST /payout-batches/":                       payoutBatchRequest{},
	"POST /payout-batches/{id}/cancel/":           struct{}{},
	"POST /payouts/{id}/approve/":                 batchDecisionRequest{},
	"POST /payouts/{id}/reject/":                  batchDecisionRequest{},
	"POST /payout-batches/{id}/approve/":          batchDecisionRequest{},
	"POST /payout-batches/{id}/reject/":           batchDecisionRequest{},
	"POST /team-members/":                         teamMemberRequest{},
	"POST /settlements/":                          settlementRequest{},
	"POST /wallet-transfers/":                     walletTransferRequest{},
	"POST /merchant-payout-methods/":              payoutMethodRequest{},
	"PATCH /admin/merchant-payout-methods/{id}/":  reviewPayoutMethodRequest{},
	"POST /merchant-webhooks/":                    webhookRequest{},
	"PATCH /merchant-webhooks/{id}/":              webhookPatchRequest{},
	"POST /merchant-webhooks/{id}/rotate-secret/": struct{}{},
	"POST /events/{id}/redeliver/":                redeliverRequest{},
	"POST /admin/transactions/{id}/reverify/":     struct{}{},
	"POST /admin/money-decisions/{id}/approve/":   struct{}{},
	"POST /admin/money-decisions/{id}/reject/":    rejectionRequest{},
	"POST /admin/transactions/{id}/resolve/":      SupportDecision{},
	"POST /admin/money-flags/{id}/refund/":        flagRefundRequest{},
	"POST /admin/money-flags/{id}/settle/":        SupportDecision{},
	"POST /checkout-sessions/":                    checkoutSessionRequest{},
	"POST /checkout-sessions/{id}/cancel/":        struct{}{},
	"POST /checkout/{slug}/pay/":                  hostedPayRequest{},
	"POST /checkout/{slug}/confirm-otp/":          hostedOTPRequest{},
	"POST /payment-links/":                        paymentLinkRequest{},
	"PATCH /payment-links/{id}/":                  paymentLinkRequest{},
	"PUT /payment-links/{id}/":                    paymentLinkRequest{},
	"POST /links/{slug}/pay/":                     hostedPayRequest{},
	"POST /links/{slug}/confirm-otp/":             hostedOTPRequest{},
	"POST /merchant-kyc/":                         kycDossierRequest{},
	"POST /merchant-kyc/{id}/documents/":          kycDocumentRequest{},
	"POST /admin/merchant-kyc/{id}/approve/":      kycReviewRequest{},
	"POST /admin/merchant-kyc/{id}/reject/":       kycReviewRequest{},
	"POST /admin/merchants/{id}/suspend/":         merchantSuspensionRequest{},
	"POST /admin/merchants/{id}/unsuspend/":       merchantSuspensionRequest{},
}

// notJSONRoutes are the write routes whose body is not JSON.
var notJSONRoutes = map[string]string{
	"POST /merchant-kyc/upload/": "a multipart/form-data upload",
}

// writeRoutes walks the router: every POST, PUT and PATCH route under /api/v1, as
// "METHOD /path/" without the base path. DELETE routes take no body and are left out.
func writeRoutes(t *testing.T, srv *Server) []string {
	t.Helper()
	seen := map[string]bool{}
	err := srv.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, basePath+"/") || strings.HasPrefix(tpl, basePath+"/test/") {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			if m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
				seen[m+" "+strings.TrimPrefix(tpl, basePath)] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	return slices.Sorted(maps.Keys(seen))
}

func TestDecodeRefusesUnknownFields(t *testing.T) {
	fieldsOf := func(err error) map[string][]string { return validationFields(t, err) }
	unknown := []string{sika.MsgUnknownField}

	var req softpayRequest
	assert.Equal(t, map[string][]string{"bogus_field": unknown},
		fieldsOf(decodeJSONObject([]byte(`{"amount":"1000","bogus_field":1}`), &req)))

	// Names match exactly: a member in another case is not the field.
	assert.Equal(t, map[string][]string{"Amount": unknown},
		fieldsOf(decodeJSONObject([]byte(`{"Amount":"1000"}`), &req)))

	// Unknown members and type errors are reported together, one entry each.
	assert.Equal(t, map[string][]string{"bogus_field": unknown, "other": unknown, "customer_name": {"Expected a string."},
		"amount": {"Expected a string, not a number: send it in quotes."}},
		fieldsOf(decodeJSONObject([]byte(`{"amount":-5,"customer_name":true,"other":null,"bogus_field":{"a":1}}`), &req)))

	// metadata is free-form: nothing inside it is checked.
	req = softpayRequest{}
	require.NoError(t, decodeJSONObject([]byte(`{"amount":"1000","metadata":{"bogus_field":1,"order":{"lines":[{"sku":"A","x":null}]}}}`), &req))
	assert.JSONEq(t, `{"bogus_field":1,"order":{"lines":[{"sku":"A","x":null}]}}`, string(req.Metadata))

	// A body made of many unknown members names the first maxUnknownFields, in sorted order.
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%02d":1`, i)
	}
	b.WriteString("}")
	fields := fieldsOf(decodeJSONObject([]byte(b.String()), &req))
	assert.Len(t, fields, maxUnknownFields)
	assert.Contains(t, fields, "f00")
	assert.NotContains(t, fields, fmt.Sprintf("f%02d", maxUnknownFields))

	// A route without body fields takes an empty body or {}, nothing else.
	for _, body := range []string{"", " ", "{}"} {
		assert.NoError(t, decodeJSONObject([]byte(body), &struct{}{}), "%q", body)
	}
	assert.Equal(t, map[string][]string{"bogus_field": unknown}, fieldsOf(decodeJSONObject([]byte(`{"bogus_field":1}`), &struct{}{})))

	// Unexported fields (paymentLinkRequest.present) are not body fields.
	assert.Equal(t, map[string][]string{"present": unknown},
		fieldsOf(decodeJSONObject([]byte(`{"name":"x","present":{"name":true}}`), &paymentLinkRequest{})))
}

// TestRequestSchemasMatchDecoders keeps the document's request bodies equal to what the
// handlers decode: every write route is in requestBodies, its schema is closed
// (additionalProperties: false) with exactly the struct's fields, a route without body fields
// declares no body, and the 400 answer of each says that unknown fields are refused.
func TestRequestSchemasMatchDecoders(t *testing.T) {
	v := newOpenAPIValidator(t)
	srv := newDocTestServer(Config{})
	var raw struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]struct {
				Description string `json:"description"`
			} `json:"responses"`
		} `json:"components"`
	}
	doc, err := OpenAPIJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(doc, &raw))
	badRequest := raw.Components.Responses["BadRequest"].Description
	assert.Contains(t, badRequest, "Unknown field")

	routed := writeRoutes(t, srv)
	require.Greater(t, len(routed), 30)
	for _, where := range routed {
		if _, ok := notJSONRoutes[where]; ok {
			continue
		}
		dst, ok := requestBodies[where]
		if !assert.True(t, ok, "%s: add it to requestBodies with the struct its handler decodes", where) {
			continue
		}
		method, path, _ := strings.Cut(where, " ")
		item := v.doc.Paths.Value(path)
		require.NotNil(t, item, where)
		op := item.GetOperation(method)
		require.NotNil(t, op, where)
		want := bodyFields(dst)
		slices.Sort(want)

		// The 400 answer says unknown fields are refused (its own description, or BadRequest's).
		var opRaw struct {
			Responses map[string]struct {
				Ref         string `json:"$ref"`
				Description string `json:"description"`
			} `json:"responses"`
		}
		require.NoError(t, json.Unmarshal(raw.Paths[path][strings.ToLower(method)], &opRaw), where)
		r400, ok := opRaw.Responses["400"]
		if assert.True(t, ok, "%s: a 400 answer must be documented", where) {
			desc := r400.Description
			if desc == "" {
				desc = badRequest
			}
			assert.Contains(t, strings.ToLower(desc), "unknown", "%s: the 400 description must mention unknown fields", where)
		}
		if _, ok := opRaw.Responses["413"]; !ok {
			t.Errorf("%s: a body over 1 MiB answers 413; document it", where)
		}

		if len(want) == 0 {
			assert.Nil(t, op.RequestBody, "%s takes no body fields: declare no requestBody", where)
			assert.Contains(t, strings.Join(strings.Fields(op.Description), " "), "refused as an unknown field", "%s: say that the body must be empty", where)
			continue
		}
		if !assert.NotNil(t, op.RequestBody, where) {
			continue
		}
		media := op.RequestBody.Value.Content.Get("application/json")
		require.NotNil(t, media, where)
		schema := media.Schema.Value
		if len(schema.AllOf) > 0 { // allOf: [{$ref: the request}, {required: …}]
			for _, part := range schema.AllOf {
				if len(part.Value.Properties) > 0 {
					schema = part.Value
				}
			}
		}
		assert.Equal(t, want, slices.Sorted(maps.Keys(schema.Properties)), "%s: documented body fields vs the decoded struct", where)
		closed := schema.AdditionalProperties.Has != nil && !*schema.AdditionalProperties.Has && schema.AdditionalProperties.Schema == nil
		assert.True(t, closed, "%s: the request schema must say additionalProperties: false", where)
		for _, name := range want {
			if p := schema.Properties[name]; p != nil && p.Value != nil && p.Value.Type.Is(openapi3.TypeObject) {
				assert.Nil(t, p.Value.AdditionalProperties.Has, "%s: %s is free-form and stays open", where, name)
			}
		}
	}
	for where := range requestBodies {
		assert.Contains(t, routed, where, "requestBodies lists a route the router does not have")
	}
}

// strictFixture is what the sweep of TestUnknownBodyFieldIsRefused calls routes on.
type strictFixture struct {
	acct        *account
	staff       []string
	ids         map[string]string // path prefix → id of {id}
	slugs       map[string]string // path prefix → slug of {slug}
	targetKey   sika.APIKey
	session, lk string
}

func newStrictFixture(t *testing.T, ts *testServer) *strictFixture {
	t.Helper()
	ctx := context.Background()
	acct := ts.newAccount(t, true)
	f := &strictFixture{acct: acct, staff: ts.staff(t), ids: map[string]string{}, slugs: map[string]string{}}
	for _, p := range []string{"127.0.0.1/32", "::1/128"} { // API-key payouts from this test
		_, err := testStore.AddIPWhitelistEntry(ctx, acct.Merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix(p), "strict input test")
		require.NoError(t, err)
	}
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	dash := acct.dashboard(sika.EnvironmentTest)
	created := func(r *response) (id, slug string) {
		t.Helper()
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var v struct{ ID, Slug string }
		r.data(t, &v)
		return v.ID, v.Slug
	}
	var err error
	f.targetKey, err = testStore.CreateAPIKey(ctx, acct.Merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, "strict target", &acct.Member.ID)
	require.NoError(t, err)
	f.ids["/api-keys/"] = f.targetKey.ID.String()
	var slug string
	f.session, slug = created(ts.call(t, "POST", "/api/v1/checkout-sessions/",
		map[string]any{"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"}, key...))
	f.ids["/checkout-sessions/"], f.slugs["/checkout/"] = f.session, slug
	f.lk, slug = created(ts.call(t, "POST", "/api/v1/payment-links/",
		map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF"}, key...))
	f.ids["/payment-links/"], f.slugs["/links/"] = f.lk, slug
	f.ids["/merchant-webhooks/"], _ = created(ts.call(t, "POST", "/api/v1/merchant-webhooks/",
		map[string]string{"url": "https://93.184.216.34/hooks"}, dash...))
	f.ids["/admin/merchant-payout-methods/"], _ = created(ts.call(t, "POST", "/api/v1/merchant-payout-methods/",
		map[string]string{"type": "MOBILE_MONEY", "label": "Owner", "network": "MTN_BJ", "phone_number": "97000123"}, dash...))
	dossier := ts.submitKYC(t, dash, map[string]any{"kyc_type": "BUSINESS", "company_name": "Shop SARL"})
	f.ids["/merchant-kyc/"] = dossier.ID.String()
	f.ids["/admin/merchant-kyc/"] = dossier.ID.String()
	f.ids["/admin/merchants/"] = acct.Merchant.ID.String()
	// Routes that read their body before looking up the object: any id does.
	f.ids["/payments/"] = uuid.NewString()
	f.ids["/admin/transactions/"] = uuid.NewString()
	f.ids["/admin/money-decisions/"] = uuid.NewString()
	f.ids["/payouts/"] = uuid.NewString()
	f.ids["/payout-batches/"] = uuid.NewString()
	f.ids["/admin/money-flags/"] = uuid.NewString()
	f.ids["/events/"] = "evt_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	return f
}

// target fills the path parameters of a route of the fixture.
func (f *strictFixture) target(t *testing.T, path string) string {
	t.Helper()
	for prefix, id := range f.ids {
		if strings.HasPrefix(path, prefix) {
			path = strings.Replace(path, "{id}", id, 1)
		}
	}
	for prefix, slug := range f.slugs {
		if strings.HasPrefix(path, prefix) {
			path = strings.Replace(path, "{slug}", slug, 1)
		}
	}
	require.NotContains(t, path, "{", "unfilled path parameter in %s", path)
	return basePath + path
}

// strictValidBodies are well-formed bodies of each route with a body; the sweep adds
// "bogus_field" to each.
func strictValidBodies(f *strictFixture) map[string]map[string]any {
	softpay := map[string]any{"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
		"customer_phone": "97000123", "customer_name": "Koffi Mensah", "customer_email": "koffi@example.com",
		"description": "Order 42", "fee_charge_mode": "ADD_ON",
		"metadata": map[string]any{"order": map[string]any{"id": 42, "bogus_field": "inside metadata is free-form"}}}
	link := map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF", "metadata": map[string]any{"x": map[string]any{"y": 1}}}
	return map[string]map[string]any{
		"POST /auth/register/": {"email": "strict-" + uuid.NewString()[:8] + "@example.com", "password": "long enough password",
			"full_name": "Ama", "business_name": "Shop", "country": "BJ"},
		"POST /auth/login/":                  {"email": "nobody@example.com", "password": "long enough password"},
		"POST /auth/merchants/":              {"business_name": "Second shop", "country": "BJ"},
		"POST /api-keys/":                    {"scope": "BOTH", "name": "CI", "environment": "TEST"},
		"POST /api-keys/{id}/revoke/":        {},
		"POST /ip-whitelist/":                {"ip_address": "203.0.113.9", "description": "office"},
		"PATCH /merchant-settings/":          {"fee_charge_mode": "ADD_ON", "allow_client_override": true},
		"POST /payments/softpay/":            softpay,
		"POST /payments/softpay/initialize/": softpay,
		"POST /payments/{id}/confirm-otp/":   {"otp": "123456"},
		"POST /payments/{id}/retry/":         {"network": "MTN_BJ", "customer_phone": "97000123"},
		"POST /payouts/initialize/":          {"amount": "1000", "currency": "XOF", "country": "BJ", "method": "MTN_BJ", "recipient": "97000123", "recipient_name": "Ama", "metadata": map[string]any{"a": map[string]any{"b": 1}}},
		"POST /refunds/":                     {"transaction": uuid.NewString(), "amount": "100", "reason": "Damaged"},
		"POST /payout-batches/": {"description": "Salaries", "items": []any{map[string]any{"amount": "1000", "currency": "XOF",
			"country": "BJ", "phone": "97000123", "network": "MTN_BJ", "reference": "r1", "description": "Ama"}}},
		"POST /payout-batches/{id}/cancel/":           {},
		"POST /payouts/{id}/approve/":                 {"note": "checked"},
		"POST /payouts/{id}/reject/":                  {"note": "unknown beneficiary"},
		"POST /payout-batches/{id}/approve/":          {"note": "checked"},
		"POST /payout-batches/{id}/reject/":           {"note": "wrong list"},
		"POST /team-members/":                         {"email": "nobody@example.com", "role": "VIEWER"},
		"POST /settlements/":                          {"amount": "1000", "currency": "XOF", "country": "BJ", "payout_method": f.ids["/admin/merchant-payout-methods/"]},
		"POST /wallet-transfers/":                     {"amount": "1000", "from_country": "BJ", "to_country": "TG"},
		"POST /merchant-payout-methods/":              {"type": "MOBILE_MONEY", "label": "Owner", "network": "MTN_BJ", "phone_number": "97000124"},
		"PATCH /admin/merchant-payout-methods/{id}/":  {"is_verified": true},
		"POST /merchant-webhooks/":                    {"url": "https://93.184.216.34/other", "description": "prod"},
		"PATCH /merchant-webhooks/{id}/":              {"description": "renamed"},
		"POST /merchant-webhooks/{id}/rotate-secret/": {},
		"POST /events/{id}/redeliver/":                {},
		"POST /admin/transactions/{id}/reverify/":     {},
		"POST /admin/money-decisions/{id}/approve/":   {},
		"POST /admin/money-decisions/{id}/reject/":    {"note": "Not what the operator's statement shows."},
		"POST /admin/transactions/{id}/resolve/":      {"status": "FAILED", "reason": "Operator confirmed it never happened."},
		"POST /admin/money-flags/{id}/refund/":        {"amount": "1000", "reason": "The customer paid twice."},
		"POST /admin/money-flags/{id}/settle/":        {"status": "FAILED", "reason": "The operator reversed the transfer."},
		"POST /checkout-sessions/":                    {"amount": "1000", "currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama", "metadata": map[string]any{"cart": map[string]any{"n": 1}}},
		"POST /checkout-sessions/{id}/cancel/":        {},
		"POST /checkout/{slug}/pay/":                  {"network": "MTN_BJ", "customer_phone": "97000123"},
		"POST /checkout/{slug}/confirm-otp/":          {"transaction": uuid.NewString(), "otp": "123456"},
		"POST /payment-links/":                        link,
		"PATCH /payment-links/{id}/":                  {"name": "renamed"},
		"PUT /payment-links/{id}/":                    {"name": "renamed", "amount": "5000", "currency": "XOF"},
		"POST /links/{slug}/pay/":                     {"network": "MTN_BJ", "customer_phone": "97000123", "customer_name": "Ama"},
		"POST /links/{slug}/confirm-otp/":             {"transaction": uuid.NewString(), "otp": "123456"},
		"POST /merchant-kyc/":                         {"merchant": f.acct.Merchant.ID.String(), "kyc_type": "BUSINESS", "company_name": "Shop SARL"},
		"POST /merchant-kyc/{id}/documents/":          {"document_type": "OTHER", "label": "Statutes", "file_url": "https://example.com/x.pdf"},
		"POST /admin/merchant-kyc/{id}/approve/":      {"review_note": "ok"},
		"POST /admin/merchant-kyc/{id}/reject/":       {"review_note": "no"},
		"POST /admin/merchants/{id}/suspend/":         {"reason": "chargebacks"},
		"POST /admin/merchants/{id}/unsuspend/":       {"reason": "cleared"},
	}
}

// TestUnknownBodyFieldIsRefused walks every POST, PUT and PATCH route of the router and posts a
// well-formed body plus "bogus_field": 1, authenticated as the route needs (its document
// security): the answer is 400 with exactly one entry, bogus_field, and nothing was done.
func TestUnknownBodyFieldIsRefused(t *testing.T) {
	ts := newTestServer(t)
	f := newStrictFixture(t, ts)
	bodies := strictValidBodies(f)
	v := newOpenAPIValidator(t)
	checked := 0
	for _, where := range writeRoutes(t, ts.Server) {
		if _, ok := notJSONRoutes[where]; ok {
			continue
		}
		valid, ok := bodies[where]
		if !assert.True(t, ok, "%s: add a well-formed body to strictValidBodies", where) {
			continue
		}
		method, path, _ := strings.Cut(where, " ")
		// The well-formed body uses declared fields only.
		declared := bodyFields(requestBodies[where])
		for name := range valid {
			require.Contains(t, declared, name, "%s: the well-formed body sends an undeclared field", where)
		}
		op := v.doc.Paths.Value(path).GetOperation(method)
		var headers []string
		switch sweepAccessOf(t, where, op.Security) {
		case sweepPublic:
		case sweepMember:
			headers = bearer(f.acct.Token)
		case sweepMerchant:
			headers = f.acct.key(sika.EnvironmentTest, sika.ScopeBoth)
		case sweepDashboard:
			headers = f.acct.dashboard(sika.EnvironmentTest)
		case sweepStaff:
			headers = f.staff
		}
		body := maps.Clone(valid)
		body["bogus_field"] = 1
		t.Run(where, func(t *testing.T) {
			r := ts.call(t, method, f.target(t, path), body, headers...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
			assert.False(t, r.Env.Success)
			assert.Equal(t, map[string][]string{"bogus_field": {sika.MsgUnknownField}}, r.fields(), "%s", r.Body)
			checked++
		})
	}
	assert.GreaterOrEqual(t, checked, len(requestBodies))

	// Nothing was done: the key is not revoked, the merchant not suspended, the session still
	// open, no payment recorded.
	r := ts.call(t, "GET", "/api/v1/networks/", nil, bearer(f.targetKey.Secret)...)
	assert.Equal(t, 200, r.Status, "the key survived its refused revocation")
	assert.False(t, merchantNow(t, f.acct.Merchant.ID).IsSuspended)
	var session sika.CheckoutSession
	ts.call(t, "GET", "/api/v1/checkout-sessions/"+f.session+"/", nil, f.acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &session)
	assert.Equal(t, sika.CheckoutPending, session.Status)
	var page struct {
		Results []json.RawMessage `json:"results"`
	}
	ts.call(t, "GET", "/api/v1/transactions/", nil, f.acct.key(sika.EnvironmentTest, sika.ScopeBoth)...).data(t, &page)
	assert.Empty(t, page.Results)
}

// TestFreeFormMetadataStaysFreeForm: strictness stops at the route's own fields; metadata
// keeps whatever the merchant puts in it.
func TestFreeFormMetadataStaysFreeForm(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	metadata := map[string]any{"bogus_field": 1, "order": map[string]any{"lines": []any{map[string]any{"sku": "A-1", "Amount": "x"}}}}
	want, err := json.Marshal(metadata)
	require.NoError(t, err)

	r := ts.call(t, "POST", "/api/v1/checkout-sessions/", map[string]any{"amount": "1000", "currency": "XOF",
		"customer_email": "ama@example.com", "customer_name": "Ama", "metadata": metadata}, key...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var got struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	r.data(t, &got)
	assert.JSONEq(t, string(want), string(got.Metadata))

	r = ts.call(t, "POST", "/api/v1/payment-links/", map[string]any{"name": "Cap", "amount": "2000", "currency": "XOF", "metadata": metadata}, key...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	r.data(t, &got)
	assert.JSONEq(t, string(want), string(got.Metadata))

	// On softpay, an invalid amount is the only error: metadata's members are not fields.
	r = ts.call(t, "POST", "/api/v1/payments/softpay/", map[string]any{"amount": "0", "currency": "XOF", "country": "BJ",
		"network": "MTN_BJ", "customer_phone": "97000123", "customer_name": "Ama", "metadata": metadata}, key...)
	require.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{"amount": {sika.MsgAmountNotPositive}}, r.fields())
}

// TestCreateAPIKeyEnvironment: the body's environment is honoured, or the request refused when
// it contradicts X-Environment; a TEST key is never handed out as LIVE, nor the reverse.
func TestCreateAPIKeyEnvironment(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, false) // not active: LIVE keys are created, they just cannot move money yet
	noHeader := bearer(acct.Token)
	count := func(env sika.Environment) int {
		t.Helper()
		var p struct {
			Count int `json:"count"`
		}
		ts.call(t, "GET", "/api/v1/api-keys/", nil, acct.dashboard(env)...).data(t, &p)
		return p.Count
	}
	created := func(r *response, want sika.Environment) {
		t.Helper()
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var k sika.APIKey
		r.data(t, &k)
		assert.Equal(t, want, k.Environment)
		assert.True(t, strings.HasPrefix(k.Secret, "sk_"+strings.ToLower(string(want))+"_"), "key %q for %s", k.Prefix, want)
		// The key works in its environment: its calls see that environment's objects.
		r = ts.call(t, "GET", "/api/v1/merchant-balances/", nil, bearer(k.Secret)...)
		if want == sika.EnvironmentTest {
			assert.Equal(t, 200, r.Status, "%s", r.Body)
		} else {
			assert.Equal(t, "merchant_inactive", r.code(), "a LIVE key of an inactive merchant: %s", r.Body)
		}
	}

	// Honoured: without X-Environment the body decides, both ways.
	created(ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "BOTH", "environment": "TEST"}, noHeader...), sika.EnvironmentTest)
	created(ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "BOTH", "environment": "live"}, noHeader...), sika.EnvironmentLive)
	// Agreeing with the header, or alone in the header.
	created(ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "PAYIN", "environment": "test"}, acct.dashboard(sika.EnvironmentTest)...), sika.EnvironmentTest)
	created(ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "PAYIN"}, acct.dashboard(sika.EnvironmentTest)...), sika.EnvironmentTest)
	created(ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "PAYIN"}, noHeader...), sika.EnvironmentLive)

	// Refused when it contradicts the header, both ways, and when it is no environment.
	before := map[sika.Environment]int{sika.EnvironmentTest: count(sika.EnvironmentTest), sika.EnvironmentLive: count(sika.EnvironmentLive)}
	for _, c := range []struct {
		body   string
		header sika.Environment
	}{{"TEST", sika.EnvironmentLive}, {"LIVE", sika.EnvironmentTest}, {"PROD", sika.EnvironmentTest}, {"", ""}} {
		headers := noHeader
		if c.header != "" {
			headers = acct.dashboard(c.header)
		}
		r := ts.call(t, "POST", "/api/v1/api-keys/", map[string]any{"scope": "BOTH", "environment": c.body}, headers...)
		require.Equal(t, 400, r.Status, "%+v: %s", c, r.Body)
		assert.Equal(t, []string{"environment"}, slices.Collect(maps.Keys(r.fields())), "%+v: %s", c, r.Body)
		if c.body == "TEST" || c.body == "LIVE" {
			assert.Contains(t, r.fields()["environment"][0], "X-Environment")
		}
	}
	after := map[sika.Environment]int{sika.EnvironmentTest: count(sika.EnvironmentTest), sika.EnvironmentLive: count(sika.EnvironmentLive)}
	assert.Equal(t, before, after, "a refused request creates no key")
}

// TestValidationMessagesSayWhatIsWrong: a number that is too small is told so, not that it is
// not a number.
func TestValidationMessagesSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"-5", sika.MsgAmountNotPositive},
		{" -5.50 ", sika.MsgAmountNotPositive},
		{"-0", sika.MsgAmountNotPositive},
		{"0", sika.MsgAmountNotPositive},
		{"0.00", sika.MsgAmountNotPositive},
		{"abc", "A valid decimal number is required."},
		{"-abc", "A valid decimal number is required."},
		{"--5", "A valid decimal number is required."},
		{"5e3", "A valid decimal number is required."},
		{"", sika.MsgRequired},
		{"10.5", "Amounts in XOF must be whole numbers."},
	} {
		_, err := parseAmount(c.raw, "XOF")
		if assert.Error(t, err, c.raw) {
			assert.Equal(t, c.want, err.Error(), "%q", c.raw)
		}
	}
	d, err := parseAmount("5000", "XOF")
	require.NoError(t, err)
	assert.Equal(t, "5000", d.String())

	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopeBoth)
	require.NoError(t, func() error {
		_, err := testStore.AddIPWhitelistEntry(context.Background(), acct.Merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "test")
		return err
	}())
	_, err = testStore.AddIPWhitelistEntry(context.Background(), acct.Merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix("::1/128"), "test")
	require.NoError(t, err)

	routes := []struct {
		path  string
		field string
		body  map[string]any
	}{
		{"/api/v1/payments/softpay/", "amount", map[string]any{"currency": "XOF", "country": "BJ", "network": "MTN_BJ", "customer_phone": "97000123", "customer_name": "Ama"}},
		{"/api/v1/payouts/initialize/", "amount", map[string]any{"currency": "XOF", "country": "BJ", "method": "MTN_BJ", "recipient": "97000123"}},
		{"/api/v1/checkout-sessions/", "amount", map[string]any{"currency": "XOF", "customer_email": "ama@example.com", "customer_name": "Ama"}},
		{"/api/v1/payment-links/", "amount", map[string]any{"name": "Cap", "currency": "XOF"}},
		{"/api/v1/payment-links/", "min_amount", map[string]any{"name": "Cap", "currency": "XOF", "amount_type": "FREE"}},
		{"/api/v1/settlements/", "amount", map[string]any{"currency": "XOF", "country": "BJ", "payout_method": uuid.NewString()}},
		{"/api/v1/wallet-transfers/", "amount", map[string]any{"from_country": "BJ", "to_country": "TG"}},
	}
	for _, rt := range routes {
		for _, c := range []struct {
			value any
			want  string
		}{
			{"-5", sika.MsgAmountNotPositive},
			{"0", sika.MsgAmountNotPositive},
			{"abc", "A valid decimal number is required."},
			{-5, "Expected a string, not a number: send it in quotes."},
			{5000, "Expected a string, not a number: send it in quotes."},
		} {
			body := maps.Clone(rt.body)
			body[rt.field] = c.value
			r := ts.call(t, "POST", rt.path, body, key...)
			require.Equal(t, 400, r.Status, "%s %s=%v: %s", rt.path, rt.field, c.value, r.Body)
			assert.Equal(t, []string{c.want}, r.fields()[rt.field], "%s %s=%v: %s", rt.path, rt.field, c.value, r.Body)
		}
	}

	// Counts: usage_limit in a body, page, page_size and limit in a query.
	for _, c := range []struct {
		value any
		want  string
	}{{-5, sika.MsgMinOne}, {0, sika.MsgMinOne}, {"abc", "Expected an integer."}, {1.5, "Expected an integer."}} {
		r := ts.call(t, "POST", "/api/v1/payment-links/", map[string]any{"name": "Cap", "currency": "XOF", "amount": "100", "usage_limit": c.value}, key...)
		require.Equal(t, 400, r.Status, "usage_limit=%v: %s", c.value, r.Body)
		assert.Equal(t, map[string][]string{"usage_limit": {c.want}}, r.fields(), "usage_limit=%v", c.value)
	}
	staff := ts.staff(t)
	for _, c := range []struct{ query, field, want string }{
		{"page=-5", "page", sika.MsgMinOne},
		{"page=0", "page", sika.MsgMinOne},
		{"page=abc", "page", sika.MsgInteger},
		{"page_size=-1", "page_size", sika.MsgMinOne},
		{"page_size=1.5", "page_size", sika.MsgInteger},
	} {
		r := ts.call(t, "GET", "/api/v1/networks/?"+c.query, nil, key...)
		require.Equal(t, 400, r.Status, "%s: %s", c.query, r.Body)
		assert.Equal(t, map[string][]string{c.field: {c.want}}, r.fields(), c.query)
	}
	for _, c := range []struct{ query, want string }{{"limit=0", sika.MsgMinOne}, {"limit=-5", sika.MsgMinOne}, {"limit=ten", sika.MsgInteger}} {
		r := ts.call(t, "GET", "/api/v1/admin/money-flags/?"+c.query, nil, staff...)
		require.Equal(t, 400, r.Status, "%s: %s", c.query, r.Body)
		assert.Equal(t, map[string][]string{"limit": {c.want}}, r.fields(), c.query)
	}
}

// TestWebhookPatchRefusesWhatItCannotChange: an update names an endpoint's environment only to
// confirm it, and cannot move it to another payment link (no longer silently ignored).
func TestWebhookPatchRefusesWhatItCannotChange(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	dash := acct.dashboard(sika.EnvironmentTest)
	r := ts.call(t, "POST", "/api/v1/merchant-webhooks/", map[string]string{"url": "https://93.184.216.34/hooks"}, dash...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var e sika.WebhookEndpoint
	r.data(t, &e)
	path := "/api/v1/merchant-webhooks/" + e.ID.String() + "/"

	r = ts.call(t, "PATCH", path, map[string]any{"environment": "LIVE", "description": "moved"}, dash...)
	require.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Equal(t, []string{"environment"}, slices.Collect(maps.Keys(r.fields())))
	r = ts.call(t, "PATCH", path, map[string]any{"payment_link": uuid.NewString()}, dash...)
	require.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Equal(t, map[string][]string{"payment_link": {sika.MsgReadOnly}}, r.fields())

	r = ts.call(t, "PATCH", path, map[string]any{"environment": "test", "description": "kept"}, dash...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	r.data(t, &e)
	assert.Equal(t, "kept", e.Description)
	assert.Equal(t, sika.EnvironmentTest, e.Environment)
}

// TestPutPatchRoundTrip: every PUT and PATCH route of the router whose resource GET answers
// (the same path, or the collection's settings) takes back the resource exactly as GET answered
// it, with a writable field changed: its read-only fields (id, merchant, slug, created_at…) sent
// unchanged are accepted; one changed is refused as read-only, naming it; a field the resource
// does not have is unknown.
func TestPutPatchRoundTrip(t *testing.T) {
	ts := newTestServer(t)
	f := newStrictFixture(t, ts)
	dash := f.acct.dashboard(sika.EnvironmentTest)
	r := ts.call(t, "POST", "/api/v1/merchant-webhooks/", map[string]string{"url": "https://93.184.216.34/hooks"}, dash...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var hook sika.WebhookEndpoint
	r.data(t, &hook)
	r = ts.call(t, "POST", "/api/v1/payment-links/", map[string]any{"name": "T-shirt", "amount": "5000", "currency": "XOF",
		"usage_limit": 4, "metadata": map[string]any{"size": "M"}}, dash...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var link sika.PaymentLink
	r.data(t, &link)

	cases := map[string]struct {
		path     string
		writable string // a field the route takes, and a new value
		value    any
		readOnly string // one of the resource's read-only fields, and a changed value
		changed  any
	}{
		"PUT /payment-links/{id}/":       {"/api/v1/payment-links/" + link.ID.String() + "/", "name", "Hoodie", "slug", "pl_other"},
		"PATCH /payment-links/{id}/":     {"/api/v1/payment-links/" + link.ID.String() + "/", "is_active", false, "created_at", "2020-01-01T00:00:00Z"},
		"PATCH /merchant-webhooks/{id}/": {"/api/v1/merchant-webhooks/" + hook.ID.String() + "/", "description", "renamed", "merchant", uuid.NewString()},
		"PATCH /merchant-settings/":      {"/api/v1/merchant-settings/", "allow_client_override", true, "merchant", uuid.NewString()},
	}
	covered := 0
	for _, where := range writeRoutes(t, ts.Server) {
		method, _, _ := strings.Cut(where, " ")
		if method != http.MethodPut && method != http.MethodPatch || strings.Contains(where, "/admin/") {
			continue // the staff review of a payout method has no GET of its own
		}
		c, ok := cases[where]
		if !assert.True(t, ok, "%s: add it to the round trip", where) {
			continue
		}
		covered++
		t.Run(where, func(t *testing.T) {
			var got map[string]any
			ts.call(t, "GET", c.path, nil, dash...).data(t, &got)
			require.Contains(t, got, c.readOnly)

			back := maps.Clone(got)
			back[c.writable] = c.value
			r := ts.call(t, method, c.path, back, dash...)
			require.Equal(t, 200, r.Status, "the resource as GET answered it, one field changed: %s", r.Body)
			var after map[string]any
			r.data(t, &after)
			assert.Equal(t, c.value, after[c.writable])
			for name, v := range got {
				if name != c.writable && name != "updated_at" {
					assert.Equal(t, v, after[name], "%s is kept", name)
				}
			}

			back = maps.Clone(after)
			back[c.readOnly] = c.changed
			r = ts.call(t, method, c.path, back, dash...)
			require.Equal(t, 400, r.Status, "%s", r.Body)
			assert.Equal(t, map[string][]string{c.readOnly: {sika.MsgReadOnly}}, r.fields())

			back = maps.Clone(after)
			back["not_a_field"] = 1
			r = ts.call(t, method, c.path, back, dash...)
			require.Equal(t, 400, r.Status, "%s", r.Body)
			assert.Equal(t, map[string][]string{"not_a_field": {sika.MsgUnknownField}}, r.fields())
		})
	}
	assert.Equal(t, len(cases), covered)
}

// A NUL character is stored by Postgres in neither text nor jsonb: a body that holds one is a
// 400 naming the member, never a 500 from the database (found by the contract property pass:
// a softpay with "country":"\u0000").
func TestDecodeRefusesTheNULCharacter(t *testing.T) {
	fieldsOf := func(err error) map[string][]string { return validationFields(t, err) }
	var req softpayRequest
	assert.Equal(t, map[string][]string{"country": {msgNUL}, "metadata": {msgNUL}},
		fieldsOf(decodeJSONObject([]byte(`{"amount":"1000","country":"\u0000","metadata":{"note":"a\u0000b"}}`), &req)))
	require.NoError(t, decodeJSONObject([]byte(`{"amount":"1000","description":"a\\u0000 is text","metadata":{"k\\\\":"v"}}`), &req),
		"an escaped backslash before u0000 is text, not a NUL")
	for raw, want := range map[string]bool{
		`"\u0000"`: true, `"x\u0000"`: true, `"\\u0000"`: false, `"\\\u0000"`: true, `{"\u0000":1}`: true, `"u0000"`: false, `""`: false,
	} {
		assert.Equal(t, want, hasNUL([]byte(raw)), "%s", raw)
	}
}

// validationFields is the field map of a validation error.
func validationFields(t *testing.T, err error) map[string][]string {
	t.Helper()
	var se *sika.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, sika.CodeValidation, se.Code)
	return se.Fields
}

// A member named twice is refused wherever it is (encoding/json keeps the last one, another
// reader of the same bytes may keep the first), and so is text that is not UTF-8 (it would be
// stored changed).
func TestDecodeRefusesDuplicateMembersAndBadUTF8(t *testing.T) {
	var req softpayRequest
	assert.Equal(t, map[string][]string{"amount": {msgDuplicate}},
		validationFields(t, decodeJSONObject([]byte(`{"amount":"1000","currency":"XOF","amount":"5000"}`), &req)))
	assert.Equal(t, map[string][]string{"note": {msgDuplicate}},
		validationFields(t, decodeJSONObject([]byte(`{"amount":"1000","metadata":{"note":"a","x":[{"note":1}],"note":"b"}}`), &req)),
		"inside an object member")
	var batch struct {
		Items []json.RawMessage `json:"items"`
	}
	assert.Equal(t, map[string][]string{"amount": {msgDuplicate}},
		validationFields(t, decodeJSONObject([]byte(`{"items":[{"amount":"1"},{"amount":"2","phone":"1","amount":"3"}]}`), &batch)),
		"in an object inside an array")
	require.NoError(t, decodeJSONObject([]byte(`{"amount":"1000","metadata":{"amount":"x","a":{"amount":1},"b":[{"amount":1},{"amount":2}]}}`), &req),
		"the same name in different objects is no duplicate")
	_, err := decodeUpdate([]byte(`{"name":"a","name":"b"}`), &req, struct{}{})
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "PUT and PATCH too: %v", err)

	err = decodeJSONObject([]byte("{\"amount\":\"1000\",\"customer_name\":\"\xff\xfe\"}"), &req)
	assert.Equal(t, sika.CodeInvalidJSON, sika.ErrorCode(err), "%v", err)
	require.NoError(t, decodeJSONObject([]byte(`{"amount":"1000","customer_name":"Adjoa Kɔfi Ɛ 😀"}`), &req), "UTF-8 beyond ASCII is text")
	for raw, want := range map[string]string{`{}`: "", `[1,{"a":1,"a":2}]`: "a", `{"a":{"b":1},"b":2}`: "", `{"a":"{\"a\":1}","b":"a"}`: "", `not json`: ""} {
		got, _ := duplicateMember([]byte(raw))
		assert.Equal(t, want, got, "%s", raw)
	}
	var wide, wideTwice strings.Builder
	wide.WriteString("{")
	for i := range 100 {
		fmt.Fprintf(&wide, `"k%d":%d,`, i, i)
	}
	wideTwice.WriteString(wide.String() + `"k7":0}`)
	wide.WriteString(`"end":0}`)
	for raw, want := range map[string]string{`{"a":1,"\u0061":2}`: "a", `{"a\"b":1,"a\u0022b":2}`: `a"b`, wide.String(): "", wideTwice.String(): "k7",
		`{"a":[{"a":1},{"a":2}],"b":{"a":{"a":3}}}`: ""} {
		got, _ := duplicateMember([]byte(raw))
		assert.Equal(t, want, got, "escaped names are compared unescaped, wide objects through a set: %.60s", raw)
	}
}
