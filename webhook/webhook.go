// Package webhook signs and verifies Sika's webhook deliveries, which follow the Standard
// Webhooks scheme, and guards the service's outgoing webhook connections.
//
// A merchant verifies a delivery with the endpoint's signing secret:
//
//	err := webhook.Verify(secret, r.Header, body, 5*time.Minute)
//
// Each delivery carries `webhook-id` (the event id, the same on every retry: dedupe on it),
// `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature`: space-separated
// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` entries, two of them while a rotated
// secret is still live. Deliveries come at least once and in no promised order: order events by
// their created_at.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix starts every signing secret.
const secretPrefix = "whsec_"

// ErrVerification is wrapped by every verification failure.
var ErrVerification = errors.New("webhook verification failed")

// NewSecret returns a signing secret: "whsec_" and the base64 of 32 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

func key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(k) == 0 {
		return nil, fmt.Errorf("%w: malformed secret", ErrVerification)
	}
	return k, nil
}

// Sign returns the `v1,<signature>` entry of one secret for a delivery.
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, k)
	fmt.Fprintf(m, "%s.%d.", id, timestamp.Unix())
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// Headers returns the three headers of a delivery signed with every given secret.
func Headers(secrets []string, id string, timestamp time.Time, body []byte) (http.Header, error) {
	h := http.Header{}
	var sigs []string
	for _, s := range secrets {
		sig, err := Sign(s, id, timestamp, body)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return h, nil
}

// Verify checks a delivery against a secret: one of its signatures must match, and its
// timestamp must be within tolerance of now (which defeats replays of old deliveries).
func Verify(secret string, header http.Header, body []byte, tolerance time.Duration) error {
	return verifyAt(secret, header, body, tolerance, time.Now())
}

func verifyAt(secret string, header http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	id, ts := header.Get(HeaderID), header.Get(HeaderTimestamp)
	if id == "" || ts == "" || header.Get(HeaderSignature) == "" {
		return fmt.Errorf("%w: missing headers", ErrVerification)
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad timestamp", ErrVerification)
	}
	at := time.Unix(secs, 0)
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrVerification)
	}
	want, err := Sign(secret, id, at, body)
	if err != nil {
		return err
	}
	for _, got := range strings.Fields(header.Get(HeaderSignature)) {
		if hmac.Equal([]byte(got), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching signature", ErrVerification)
}
