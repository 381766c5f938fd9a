package sika

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
)

// API key prefixes name the environment a key works in.
const (
	APIKeyPrefixTest = "sk_test_"
	APIKeyPrefixLive = "sk_live_"
)

const (
	base62        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	apiKeyRandLen = 43 // 43 base62 characters carry more than 256 bits
	// apiKeyDisplayLen is how much of a key is kept in clear to recognise it in a list.
	apiKeyDisplayLen = 12
)

// NewAPIKeySecret returns a fresh secret key for env, its display prefix and its SHA-256 hash.
func NewAPIKeySecret(env Environment) (secret, display string, hash [32]byte, err error) {
	prefix := APIKeyPrefixTest
	if env == EnvironmentLive {
		prefix = APIKeyPrefixLive
	}
	random, err := RandomBase62(apiKeyRandLen)
	if err != nil {
		return "", "", hash, err
	}
	secret = prefix + random
	return secret, secret[:apiKeyDisplayLen], HashAPIKey(secret), nil
}

// RandomBase62 returns n characters drawn uniformly from [0-9A-Za-z] by crypto/rand. It reads
// the random bytes in one call and keeps those below 248 (4 × 62), so that a byte modulo 62 is
// uniform: one read per id instead of one crypto/rand.Int (a read and a big.Int) per character.
// Every payment draws two event ids.
func RandomBase62(n int) (string, error) {
	const accept = 256 - 256%len(base62) // 248
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/8+4) // about 3 % of the bytes are refused
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, c := range buf {
			if int(c) < accept {
				out = append(out, base62[int(c)%len(base62)])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out), nil
}

// HashAPIKey is how a key is looked up: the SHA-256 of the whole secret.
func HashAPIKey(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// APIKeyEnvironment returns the environment a secret claims by its prefix, and false when the
// string does not look like one of our keys at all.
func APIKeyEnvironment(secret string) (Environment, bool) {
	var env Environment
	var rest string
	switch {
	case strings.HasPrefix(secret, APIKeyPrefixTest):
		env, rest = EnvironmentTest, secret[len(APIKeyPrefixTest):]
	case strings.HasPrefix(secret, APIKeyPrefixLive):
		env, rest = EnvironmentLive, secret[len(APIKeyPrefixLive):]
	default:
		return "", false
	}
	if len(rest) < 32 || len(rest) > 128 {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		if !strings.ContainsRune(base62, rune(rest[i])) {
			return "", false
		}
	}
	return env, true
}
