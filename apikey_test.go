package sika

import (
	"math"
	"strings"
	"testing"
)

// RandomBase62 draws every character of the alphabet with the same chance: a chi-square test of
// 620,000 characters against the uniform law (61 degrees of freedom: a uniform draw exceeds the
// bound, 116, about once in 30,000 runs; keeping every byte modulo 62 would give the first eight
// characters a quarter more weight and a chi-square in the thousands).
func TestRandomBase62IsUniform(t *testing.T) {
	for _, n := range []int{0, 1, 26, 43, 200} {
		s, err := RandomBase62(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != n || strings.Trim(s, base62) != "" {
			t.Fatalf("RandomBase62(%d) = %q: want %d characters of [0-9A-Za-z]", n, s, n)
		}
	}
	counts := map[rune]int{}
	const draws, each = 10_000, 62
	for range draws {
		s, err := RandomBase62(each)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s {
			counts[c]++
		}
	}
	if len(counts) != len(base62) {
		t.Fatalf("%d distinct characters drawn, want %d", len(counts), len(base62))
	}
	expected := float64(draws*each) / float64(len(base62))
	chi2 := 0.0
	for _, c := range base62 {
		d := float64(counts[c]) - expected
		chi2 += d * d / expected
	}
	if limit := 116.0; chi2 > limit || math.IsNaN(chi2) {
		t.Errorf("chi-square %.1f over %d characters exceeds %.0f: the draw is not uniform (%v)", chi2, draws*each, limit, counts)
	}
}
