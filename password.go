package sika

import (
	"errors"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Password policy: bcrypt reads at most 72 bytes, so longer passwords are refused rather than
// silently truncated.
const (
	MinPasswordLen   = 10
	MaxPasswordBytes = 72
)

// CheckPasswordPolicy returns a merchant-safe message when a new password is not acceptable.
func CheckPasswordPolicy(pw string) error {
	if utf8.RuneCountInString(pw) < MinPasswordLen {
		return errors.New("Ensure this field has at least 10 characters.")
	}
	if len(pw) > MaxPasswordBytes {
		return errors.New("Ensure this field has no more than 72 bytes.")
	}
	return nil
}

// HashPassword returns the bcrypt hash of a password.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(h), err
}

// PasswordMatches reports whether pw is the password of hash. With an empty hash (unknown
// member) it still spends the time of a comparison, so that timing does not reveal accounts.
func PasswordMatches(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// dummyHash is the hash of a password nobody has, compared against for unknown accounts.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("no member has this password"), bcrypt.DefaultCost)
	return h
})
