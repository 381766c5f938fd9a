package sika

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewReference(t *testing.T) {
	cases := []struct {
		name   string
		prefix string
		now    time.Time
		want   string // pattern
	}{
		{"UTC date", "PAY", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), `^PAY-20261121-[0-9A-HJKMNP-TV-Z]{10}$`},
		// 23:30 on 31 December at UTC−5 is 04:30 UTC on 1 January.
		{"date taken in UTC", "PO", time.Date(2026, 12, 31, 23, 30, 0, 0, time.FixedZone("EST", -5*3600)), `^PO-20270101-[0-9A-HJKMNP-TV-Z]{10}$`},
		{"digits in the prefix", "S2", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), `^S2-20260102-[0-9A-HJKMNP-TV-Z]{10}$`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := NewReference(c.prefix, c.now)
			require.NoError(t, err)
			assert.Regexp(t, regexp.MustCompile(c.want), got)
		})
	}
}

func TestNewReferenceInvalidPrefix(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	for _, prefix := range []string{"", "pay", "PAY-", "P Y", "PÄY"} {
		_, err := NewReference(prefix, now)
		assert.Error(t, err, "prefix %q", prefix)
	}
}

func TestNewReferenceUnique(t *testing.T) {
	const n = 100_000
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	seen := make(map[string]bool, n)
	for range n {
		ref, err := NewReference("PAY", now)
		require.NoError(t, err)
		require.False(t, seen[ref], "duplicate reference %s", ref)
		seen[ref] = true
	}
	got, want := len(seen), n
	assert.Equal(t, want, got)
}

// TestNewReferenceAlphabet checks that every Crockford character appears and no excluded
// letter ever does.
func TestNewReferenceAlphabet(t *testing.T) {
	counts := map[rune]int{}
	for range 2_000 {
		ref, err := NewReference("PAY", time.Now())
		require.NoError(t, err)
		for _, r := range ref[len(ref)-referenceRandomLen:] {
			counts[r]++
		}
	}
	for _, r := range crockfordBase32 {
		assert.Positive(t, counts[r], "character %c never drawn", r)
	}
	for _, r := range "ILOU" {
		assert.Zero(t, counts[r], "excluded character %c drawn", r)
	}
}
