package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceSignature is an independent implementation of the Standard Webhooks scheme, written
// from the specification: base64(HMAC-SHA256(base64-decoded secret after "whsec_",
// "msg_id.timestamp.payload")).
func referenceSignature(secret, msgID string, ts int64, payload string) string {
	raw := secret[len("whsec_"):]
	key, _ := base64.StdEncoding.DecodeString(raw)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(ts, 10) + "." + payload))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func TestSignAgainstAnIndependentImplementation(t *testing.T) {
	secret, err := NewSecret()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(secret, "whsec_"))
	raw, err := base64.StdEncoding.DecodeString(secret[6:])
	require.NoError(t, err)
	assert.Len(t, raw, 32)

	now := time.Unix(1763700000, 0)
	body := []byte(`{"id":"evt_1","type":"transaction.succeeded"}`)
	got, err := Sign(secret, "evt_1", now, body)
	require.NoError(t, err)
	assert.Equal(t, referenceSignature(secret, "evt_1", now.Unix(), string(body)), got)

	// A fixed vector (secret of the Standard Webhooks documentation's format).
	fixed := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	assert.Equal(t, referenceSignature(fixed, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`),
		mustSign(t, fixed, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)))
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		mustSign(t, fixed, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)),
		"the example of the Standard Webhooks specification")
}

func mustSign(t *testing.T, secret, id string, at time.Time, body []byte) string {
	t.Helper()
	s, err := Sign(secret, id, at, body)
	require.NoError(t, err)
	return s
}

func TestVerify(t *testing.T) {
	oldSecret, _ := NewSecret()
	newSecret, _ := NewSecret()
	now := time.Now()
	body := []byte(`{"id":"evt_2"}`)
	h, err := Headers([]string{newSecret, oldSecret}, "evt_2", now, body)
	require.NoError(t, err)
	assert.Len(t, strings.Fields(h.Get(HeaderSignature)), 2, "two signatures during a rotation")
	assert.NoError(t, Verify(newSecret, h, body, 5*time.Minute))
	assert.NoError(t, Verify(oldSecret, h, body, 5*time.Minute), "the old secret still verifies during the overlap")

	other, _ := NewSecret()
	cases := map[string]error{
		"another secret":  Verify(other, h, body, 5*time.Minute),
		"tampered body":   Verify(newSecret, h, []byte(`{"id":"evt_3"}`), 5*time.Minute),
		"too old":         verifyAt(newSecret, h, body, 5*time.Minute, now.Add(10*time.Minute)),
		"missing headers": Verify(newSecret, http.Header{}, body, 5*time.Minute),
	}
	for name, err := range cases {
		assert.True(t, errors.Is(err, ErrVerification), "%s: %v", name, err)
	}
}

func TestGuardRefusesInternalDestinations(t *testing.T) {
	g := Guard{}
	ctx := context.Background()
	refused := []string{
		"http://127.0.0.1/hook", "http://127.8.9.10/", "http://[::1]/", "http://10.0.0.5/", "http://10.255.255.255/",
		"http://172.16.0.1/", "http://172.31.255.254/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://169.254.10.10/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/",
		"http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/", "http://localhost/",
		"http://[fe80::1]/", "http://[fc00::1]/", "http://100.64.0.1/", "http://[::]/",
	}
	for _, u := range refused {
		err := g.CheckURL(ctx, u, false)
		assert.True(t, errors.Is(err, ErrForbiddenDestination), "%s must be refused, got %v", u, err)
	}
	assert.Error(t, g.CheckURL(ctx, "ftp://example.com/", false))
	assert.Error(t, g.CheckURL(ctx, "http://user:pw@93.184.216.34/", false))
	assert.Error(t, g.CheckURL(ctx, "http://93.184.216.34/", true), "LIVE needs https")
	assert.NoError(t, g.CheckURL(ctx, "https://93.184.216.34/hooks", true), "a public address")
	assert.NoError(t, Guard{AllowPrivate: true}.CheckURL(ctx, "http://127.0.0.1:8080/", false), "allowed by configuration")
}

// TestGuardAllowsOnlyGlobalUnicast: the ranges the IANA special-purpose registries mark not
// globally reachable are refused, and an IPv4 address carried in IPv6 (NAT64, SIIT, mapped, 6to4,
// Teredo) is judged as IPv4.
func TestGuardAllowsOnlyGlobalUnicast(t *testing.T) {
	refused := []string{
		"::a00:1", "::808:808", // IPv4-compatible ::/96 (deprecated)
		"64:ff9b:1::a00:1", "64:ff9b:1::808:808", // local-use NAT64
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1", // well-known NAT64 of internal IPv4
		"::ffff:0:7f00:1", "::ffff:0:a00:1", // SIIT of internal IPv4
		"2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1", // 6to4 of internal IPv4
		"2001:0:4136:e378:8000:63bf:f5ff:fffe",              // Teredo whose client is 10.0.0.1 (inverted)
		"2001:0:a00:1:8000:63bf:3fff:fdd2",                  // Teredo whose server is 10.0.0.1
		"2001:2::1", "2001:10::1", "2001:db8::1", "3fff::1", // benchmarking, ORCHID, documentation
		"fec0::1", "fd00:ec2::254", "100::1", "ff02::1", "5f00::1", "4000::1", "fe80::1%eth0",
		"240.0.0.1", "255.255.255.255", "192.88.99.1", "224.0.0.1", "192.0.2.1", "198.51.100.7", "203.0.113.9",
		"198.18.0.1", "192.0.0.9",
	}
	for _, s := range refused {
		assert.False(t, allowed(netip.MustParseAddr(s)), "%s must be refused", s)
	}
	for _, s := range []string{
		"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4007:80e::200e",
		"64:ff9b::808:808",                     // NAT64 of a public address
		"2002:808:808::1",                      // 6to4 of a public address
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo: server 65.54.227.120, client 8.8.8.8
		"::ffff:8.8.8.8", "192.31.196.1", "2620:4f:8000::1",
	} {
		assert.True(t, allowed(netip.MustParseAddr(s)), "%s is globally reachable", s)
	}
	g := Guard{}
	for _, u := range []string{"http://[::a00:1]/", "http://[64:ff9b:1::a00:1]/", "http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/",
		"http://[fec0::1]/", "http://240.0.0.1/", "http://192.88.99.1/", "http://[100::1]/"} {
		assert.True(t, errors.Is(g.CheckURL(context.Background(), u, false), ErrForbiddenDestination), u)
	}
}

func TestTransportDialsOnlyCheckedAddresses(t *testing.T) {
	tr := Guard{}.Transport(time.Second)
	_, err := tr.DialContext(context.Background(), "tcp", "localhost:80")
	assert.True(t, errors.Is(err, ErrForbiddenDestination), "a name that resolves to loopback: %v", err)
	_, err = tr.DialContext(context.Background(), "tcp", "2130706433:80")
	assert.True(t, errors.Is(err, ErrForbiddenDestination))
}

func TestLegacyIPv4(t *testing.T) {
	for in, want := range map[string]string{"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"127.1": "127.0.0.1", "10.1": "10.0.0.1", "192.168.257": "192.168.1.1"} {
		got, ok := legacyIPv4(in)
		require.True(t, ok, in)
		assert.Equal(t, want, got.String(), in)
	}
	for _, in := range []string{"example.com", "1.2.3.4.5", "256.1.1.1", "0x", "a.b"} {
		_, ok := legacyIPv4(in)
		assert.False(t, ok, in)
	}
}
