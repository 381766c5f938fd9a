// Package payloadcodec encrypts the payloads Sika hands to Temporal (workflow and activity
// arguments and results, signal and update arguments, queries, memos, schedules' arguments):
// AES-256-GCM with keys from configuration, so that what Temporal stores (its database, its
// history exports, the UI and CLI of anyone who can reach the frontend) shows no customer data
// in clear, a post-push OTP first of all.
//
// Every client Sika creates carries it (DataConverter; the workers built on a client inherit
// it). Keys rotate: the first key of the ring encrypts, every key of the ring decrypts, and each
// payload names its key in its metadata (encryption-key-id), so that histories written with an
// older key still read while it stays configured. A payload written before the codec (no
// binary/encrypted encoding) passes through unchanged.
//
// Operators read histories in the Temporal UI through the codec server of the support console
// (web/console, /console/codec/decode, staff sessions only), which decodes with the same ring.
package payloadcodec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// EnvKeys is the environment variable holding the key ring: comma-separated id:key pairs,
// each key 32 bytes in standard base64, the first one encrypting (see ParseKeys).
const EnvKeys = "SIKA_PAYLOAD_KEYS"

// Metadata of an encrypted payload.
const (
	// Encoding is the value of the payload's "encoding" metadata.
	Encoding = "binary/encrypted"
	// MetadataKeyID names the metadata that holds the id of the key that encrypted the payload.
	MetadataKeyID = "encryption-key-id"
)

// ErrNoKeys is the error of an empty ring.
var ErrNoKeys = errors.New(EnvKeys + " is not set: Temporal payloads are encrypted with its first key (generate one with `sika admin payload-key`)")

// keySize is AES-256's.
const keySize = 32

// validID is what a key id may be: it goes into every payload's metadata.
var validID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Ring is the configured keys: Current encrypts, every key decrypts. It implements
// converter.PayloadCodec.
type Ring struct {
	current string
	ids     []string
	aeads   map[string]cipher.AEAD
	raw     string
}

var _ converter.PayloadCodec = (*Ring)(nil)

// ParseKeys reads a key ring: "id:base64key[,id:base64key…]", the first key encrypting. Key ids
// are 1–64 characters of letters, digits, '_', '-' and '.', unique; keys are 32 random bytes.
func ParseKeys(s string) (*Ring, error) {
	r := &Ring{aeads: map[string]cipher.AEAD{}, raw: strings.TrimSpace(s)}
	for part := range strings.SplitSeq(r.raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, enc, ok := strings.Cut(part, ":")
		if !ok || !validID.MatchString(id) {
			return nil, fmt.Errorf("%s: each key is id:base64key with an id of letters, digits, '_', '-' or '.' (the %d-th is not)", EnvKeys, len(r.ids)+1)
		}
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("%s: key id %q appears twice", EnvKeys, id)
		}
		key, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || len(key) != keySize {
			return nil, fmt.Errorf("%s: key %q is not %d bytes in standard base64", EnvKeys, id, keySize)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", EnvKeys, id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", EnvKeys, id, err)
		}
		r.ids = append(r.ids, id)
		r.aeads[id] = aead
	}
	if len(r.ids) == 0 {
		return nil, ErrNoKeys
	}
	r.current = r.ids[0]
	return r, nil
}

// NewKey makes a new key entry "id:base64key" with a random key and an id from the time
// (k20260102T150405Z), to put first in the ring.
func NewKey(now time.Time) (string, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("new payload key: %w", err)
	}
	return "k" + now.UTC().Format("20060102T150405Z") + ":" + base64.StdEncoding.EncodeToString(key), nil
}

// NewRing is a ring of one new key: for a process that starts the workers and clients of its
// own Temporal histories (tests, benchmark and chaos harnesses).
func NewRing() (*Ring, error) {
	k, err := NewKey(time.Now())
	if err != nil {
		return nil, err
	}
	return ParseKeys(k)
}

// LoadOrCreate returns the key ring kept in the file at path, writing a new one-key ring there
// (mode 0600) when the file is missing or empty: the development state (`sika dev`,
// `sika cluster`), whose Temporal histories outlive a process.
func LoadOrCreate(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		s := strings.TrimSpace(string(b))
		if _, err := ParseKeys(s); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return s, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	k, err := NewKey(time.Now())
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return k, nil
}

// Current is the id of the key that encrypts.
func (r *Ring) Current() string { return r.current }

// IDs are the ids of every key of the ring, the encrypting one first.
func (r *Ring) IDs() []string { return append([]string(nil), r.ids...) }

// Secret is the ring as ParseKeys read it, to hand to a child process's environment. It is a
// secret: never log it.
func (r *Ring) Secret() string { return r.raw }

// DataConverter is the SDK's default data converter with this ring's encryption: set it on
// client.Options.DataConverter.
func (r *Ring) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), r)
}

// Encode encrypts each payload with the current key: the whole payload (its metadata and data)
// is sealed, with the key id as additional data, behind a random 12-byte nonce.
func (r *Ring) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	aead := r.aeads[r.current]
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return payloads, fmt.Errorf("encode payload: %w", err)
		}
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return payloads, fmt.Errorf("encode payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte(r.current)},
			Data:     aead.Seal(nonce, nonce, plain, []byte(r.current)),
		}
	}
	return out, nil
}

// Decode decrypts the payloads this codec encrypted, with the key their metadata names; any
// other payload is returned as it is. A key that is not in the ring, or a payload that does not
// open with it, is an error.
func (r *Ring) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		aead, ok := r.aeads[id]
		if !ok {
			return payloads, fmt.Errorf("decode payload: it was encrypted with key %q, which is not in %s", id, EnvKeys)
		}
		data := p.GetData()
		if len(data) < aead.NonceSize()+aead.Overhead() {
			return payloads, errors.New("decode payload: too short to be encrypted")
		}
		plain, err := aead.Open(nil, data[:aead.NonceSize()], data[aead.NonceSize():], []byte(id))
		if err != nil {
			return payloads, fmt.Errorf("decode payload with key %q: %w", id, err)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return payloads, fmt.Errorf("decode payload: %w", err)
		}
		out[i] = &orig
	}
	return out, nil
}

// DecodeHandler is the codec server the Temporal UI (and `temporal --codec-endpoint`) calls to
// show decrypted payloads: the SDK's handler (converter.NewPayloadCodecHTTPHandler) on this
// ring, answering POST …/decode only. Encoding is never offered: nothing outside Sika's
// processes writes payloads. Whoever serves it decides who may call it.
func (r *Ring) DecodeHandler() http.Handler {
	h := converter.NewPayloadCodecHTTPHandler(r)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/decode") {
			http.NotFound(w, req)
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, maxDecodeBody)
		h.ServeHTTP(w, req)
	})
}

// maxDecodeBody bounds a decode request (a page of history's payloads; Temporal caps a payload
// at 2 MB by default).
const maxDecodeBody = 8 << 20
