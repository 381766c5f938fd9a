package payloadcodec

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

func newKey(t *testing.T, at time.Time) string {
	t.Helper()
	k, err := NewKey(at)
	require.NoError(t, err)
	return k
}

func ring(t *testing.T, keys ...string) *Ring {
	t.Helper()
	r, err := ParseKeys(strings.Join(keys, ","))
	require.NoError(t, err)
	return r
}

// An OTP goes through the data converter as Temporal would store it: no clear text in the
// payload, the key id in its metadata, and the value back on decoding.
func TestEncryptsAndDecrypts(t *testing.T) {
	r := ring(t, newKey(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	dc := r.DataConverter()
	p, err := dc.ToPayload("123456")
	require.NoError(t, err)
	assert.NotContains(t, string(p.Data), "123456")
	assert.Equal(t, Encoding, string(p.Metadata[converter.MetadataEncoding]))
	assert.Equal(t, "k20260102T030405Z", string(p.Metadata[MetadataKeyID]))
	var got string
	require.NoError(t, dc.FromPayload(p, &got))
	assert.Equal(t, "123456", got)

	// Two encodings of one value differ (a fresh nonce each time).
	q, err := dc.ToPayload("123456")
	require.NoError(t, err)
	assert.NotEqual(t, p.Data, q.Data)
}

// Rotation: a new key put first encrypts; a payload of the old key still decodes while the old
// key stays in the ring, and not once it is removed.
func TestRotation(t *testing.T) {
	old := newKey(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	next := newKey(t, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	before := ring(t, old)
	p, err := before.DataConverter().ToPayload(map[string]string{"otp": "654321"})
	require.NoError(t, err)

	after := ring(t, next, old)
	assert.Equal(t, "k20260601T000000Z", after.Current())
	var got map[string]string
	require.NoError(t, after.DataConverter().FromPayload(p, &got))
	assert.Equal(t, "654321", got["otp"])
	q, err := after.DataConverter().ToPayload("x")
	require.NoError(t, err)
	assert.Equal(t, "k20260601T000000Z", string(q.Metadata[MetadataKeyID]))

	dropped := ring(t, next)
	err = dropped.DataConverter().FromPayload(p, &got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `key "k20260101T000000Z"`)
}

// A payload written before the codec passes through; a tampered one, or one whose key id was
// changed, does not open.
func TestDecodeRefusesTamperingAndPassesClearPayloads(t *testing.T) {
	r := ring(t, "a:"+strings.Repeat("A", 43)+"=", "b:"+strings.Repeat("B", 43)+"=")
	clear, err := converter.GetDefaultDataConverter().ToPayload("written before the codec")
	require.NoError(t, err)
	out, err := r.Decode([]*commonpb.Payload{clear})
	require.NoError(t, err)
	assert.Same(t, clear, out[0])

	enc, err := r.Encode([]*commonpb.Payload{clear})
	require.NoError(t, err)
	tampered := &commonpb.Payload{Metadata: enc[0].Metadata, Data: bytes.Clone(enc[0].Data)}
	tampered.Data[len(tampered.Data)-1] ^= 1
	_, err = r.Decode([]*commonpb.Payload{tampered})
	assert.Error(t, err)
	relabelled := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte("b")}, Data: enc[0].Data}
	_, err = r.Decode([]*commonpb.Payload{relabelled})
	assert.Error(t, err, "the key id is authenticated")
}

func TestParseKeysRefusesBadRings(t *testing.T) {
	good := "a:" + strings.Repeat("A", 43) + "="
	for _, bad := range []string{"", " , ", "nokey", "a:notbase64!", "a:" + strings.Repeat("A", 20), "bad id:" + strings.Repeat("A", 43) + "=", good + "," + good} {
		_, err := ParseKeys(bad)
		assert.Error(t, err, "%q", bad)
		if err != nil && strings.Contains(bad, "A") {
			assert.NotContains(t, err.Error(), strings.Repeat("A", 20), "the key is not in the error")
		}
	}
}

func TestLoadOrCreateKeepsTheRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payload_keys")
	first, err := LoadOrCreate(path)
	require.NoError(t, err)
	again, err := LoadOrCreate(path)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// The codec server decodes and offers no encoding.
func TestDecodeHandler(t *testing.T) {
	r := ring(t, newKey(t, time.Now()))
	p, err := r.DataConverter().ToPayload("123456")
	require.NoError(t, err)
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	require.NoError(t, err)
	h := r.DecodeHandler()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/console/codec/decode", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(rec.Body.Bytes(), &out))
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out.Payloads[0], &got))
	assert.Equal(t, "123456", got)

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/console/codec/encode", bytes.NewReader(body)))
	assert.Equal(t, http.StatusNotFound, rec.Code)
}
