package sika

import (
	"crypto/rand"
	"fmt"
	"time"
)

// crockfordBase32 is Crockford's base32 alphabet: digits and capitals without I, L, O and U,
// so that a reference read aloud or copied by hand is not mistaken for another.
const crockfordBase32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// referenceRandomLen is the number of random characters of a reference: 50 bits, so that
// a million references of one prefix on one day collide with a probability below 1 in 2 000.
// The store's unique constraint remains the guarantee; a collision is retried there.
const referenceRandomLen = 10

// NewReference returns a human-readable transaction reference for search and support:
// prefix, the UTC date of now and ten random Crockford base32 characters from crypto/rand,
// joined by dashes, e.g. "PAY-20261121-7K3Q9M2XHD". The prefix must be upper-case ASCII
// letters and digits, so that the reference splits unambiguously on its dashes.
func NewReference(prefix string, now time.Time) (string, error) {
	if !isReferencePrefix(prefix) {
		return "", fmt.Errorf("new reference: invalid prefix %q", prefix)
	}
	var b [referenceRandomLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new reference: read random bytes: %w", err)
	}
	for i := range b {
		// 256 is a multiple of 32, so the low five bits of a random byte are uniform.
		b[i] = crockfordBase32[b[i]&31]
	}
	return prefix + "-" + now.UTC().Format("20060102") + "-" + string(b[:]), nil
}

// isReferencePrefix reports whether p is non-empty upper-case ASCII letters and digits.
func isReferencePrefix(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if (p[i] < 'A' || p[i] > 'Z') && (p[i] < '0' || p[i] > '9') {
			return false
		}
	}
	return true
}
