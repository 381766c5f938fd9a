package api

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/web/console"
	"github.com/sikahq/sika/workflows"
)

// rawHistory reads a workflow's history with a client that has no codec: what Temporal stores
// and shows anyone who can reach it.
func rawHistory(t *testing.T, addr, workflowID string) []*historypb.HistoryEvent {
	t.Helper()
	raw, err := client.Dial(client.Options{HostPort: addr, Logger: quietTemporal()})
	require.NoError(t, err)
	defer raw.Close()
	var events []*historypb.HistoryEvent
	it := raw.GetWorkflowHistory(t.Context(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	require.NotEmpty(t, events)
	return events
}

// payloadsIn collects every payload of a message, however deep, but those of headers and search
// attributes: a header carries the trace context (telemetry.TemporalTracing), which its
// interceptor writes with the SDK's default converter, in clear; search attributes are indexed by
// the server, so never encoded (the SDK's TemporalChangeVersion of a workflow.GetVersion, such as
// ["otp-tries-cap-1"]). Neither may hold what a person should not read: the wire check of every
// event covers them.
func payloadsIn(m protoreflect.Message) []*commonpb.Payload {
	switch v := m.Interface().(type) {
	case *commonpb.Payload:
		return []*commonpb.Payload{v}
	case *commonpb.Header, *commonpb.SearchAttributes:
		return nil
	}
	var out []*commonpb.Payload
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				out = append(out, payloadsIn(v.List().Get(i).Message())...)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				out = append(out, payloadsIn(mv.Message())...)
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			out = append(out, payloadsIn(v.Message())...)
		}
		return true
	})
	return out
}

// TestOTPIsEncryptedInTemporalHistory: a post-push OTP confirmed on a MOOV_TG payment is in its
// workflow's history (the confirm-otp update's argument, the activity's input) only encrypted:
// absent from the raw history, read with a client without the codec; there once decoded with
// the service's keys. Every payload of the history is encrypted, and the codec server decodes
// them for staff.
func TestOTPIsEncryptedInTemporalHistory(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, map[string]any{"amount": "1000", "currency": "XOF", "country": "TG", "network": "MOOV_TG",
		"customer_phone": "90000123", "customer_name": "Afi"})
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	r := ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/confirm-otp/", map[string]string{"otp": sandbox.ValidOTP}, key...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 20*time.Second).Status)

	events := rawHistory(t, ps.temporalAddr, workflows.PaymentWorkflowID(p.ID))
	var payloads []*commonpb.Payload
	for _, ev := range events {
		wire, err := proto.Marshal(ev)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(wire, []byte(sandbox.ValidOTP)), "the OTP in clear in event %d (%s)", ev.EventId, ev.EventType)
		assert.False(t, bytes.Contains(wire, []byte("90000123")), "the customer's number in event %d", ev.EventId)
		for _, pl := range payloadsIn(ev.ProtoReflect()) {
			assert.Equal(t, payloadcodec.Encoding, string(pl.Metadata[converter.MetadataEncoding]), "event %d (%s): %s", ev.EventId, ev.EventType, pl.Data)
			assert.Equal(t, ps.keys.Current(), string(pl.Metadata[payloadcodec.MetadataKeyID]), "event %d (%s)", ev.EventId, ev.EventType)
			payloads = append(payloads, pl)
		}
	}
	require.NotEmpty(t, payloads)

	decoded, err := ps.keys.Decode(payloads)
	require.NoError(t, err)
	otpSeen := 0
	for _, pl := range decoded {
		if bytes.Contains(pl.Data, []byte(sandbox.ValidOTP)) {
			otpSeen++
		}
	}
	assert.Positive(t, otpSeen, "the service's keys read the OTP back")

	// The codec server gives staff the same reading.
	staff := newStaffMember(t)
	c := newDashClient(t, ps.url)
	require.Equal(t, http.StatusSeeOther, c.consoleLogin(t, staff.Email, "correct horse battery").Status)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: payloads})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, ps.url+console.CodecPath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	ans := c.Send(t, req, "X-Namespace", "default")
	require.Equal(t, http.StatusOK, ans.Status, ans.Body)
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal([]byte(ans.Body), &out))
	require.Len(t, out.Payloads, len(payloads))
	found := false
	for _, pl := range out.Payloads {
		found = found || bytes.Contains(pl.Data, []byte(sandbox.ValidOTP))
	}
	assert.True(t, found)
}

// TestCodecServerIsForStaffOnly: the console's codec server decodes for a staff session only
// (none: 401; a merchant's dashboard session: 403), answers the Temporal UI's origin with CORS
// and refuses other browser origins; it never encodes.
func TestCodecServerIsForStaffOnly(t *testing.T) {
	keys, err := payloadcodec.NewRing()
	require.NoError(t, err)
	const ui = "http://temporal-ui.test:8233"
	ts := newTestServer(t, func(c *Config) { c.PayloadKeys, c.TemporalUIURL = keys, ui+"/" })
	acct := ts.newAccount(t, true)
	staff := newStaffMember(t)

	enc, err := keys.DataConverter().ToPayload("123456")
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{enc}})
	require.NoError(t, err)
	decode := func(c *dashClient, path string, headers ...string) dashAnswer {
		req, err := http.NewRequest(http.MethodPost, ts.url+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		return c.Send(t, req, headers...)
	}

	anon := newDashClient(t, ts.url)
	r := decode(anon, console.CodecPath, "Origin", ui)
	assert.Equal(t, http.StatusUnauthorized, r.Status, "no session")
	assert.NotContains(t, r.Body, "123456")

	merchant := dashLoggedIn(t, ts.url, acct)
	r = decode(anon, console.CodecPath, "Cookie", "sika_dashboard="+merchant.sessionCookie(t))
	assert.Equal(t, http.StatusForbidden, r.Status, "a merchant's session")
	mc := newDashClient(t, ts.url)
	assert.Equal(t, http.StatusForbidden, mc.consoleLogin(t, acct.Member.Email, "correct horse battery").Status)
	assert.Equal(t, http.StatusUnauthorized, decode(mc, console.CodecPath).Status, "a merchant cannot sign in to the console")

	c := newDashClient(t, ts.url)
	require.Equal(t, http.StatusSeeOther, c.consoleLogin(t, staff.Email, "correct horse battery").Status)
	r = decode(c, console.CodecPath, "Origin", "http://evil.test")
	assert.Equal(t, http.StatusForbidden, r.Status, "another site's page")
	assert.Empty(t, r.Header.Get("Access-Control-Allow-Origin"))

	r = decode(c, console.CodecPath, "Origin", ui)
	require.Equal(t, http.StatusOK, r.Status, r.Body)
	assert.Equal(t, ui, r.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", r.Header.Get("Access-Control-Allow-Credentials"))
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal([]byte(r.Body), &out))
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out.Payloads[0], &got))
	assert.Equal(t, "123456", got)

	r = decode(c, "/console/codec/encode", "Origin", ui)
	assert.Equal(t, http.StatusNotFound, r.Status, "no encoding")

	pre := c.Do(t, http.MethodOptions, console.CodecPath, nil, "Origin", ui, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type,x-namespace")
	assert.Equal(t, http.StatusNoContent, pre.Status)
	assert.Equal(t, ui, pre.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")
}
