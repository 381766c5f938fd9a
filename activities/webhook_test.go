package activities

import (
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"soon", 0},
	} {
		assert.Equal(t, c.want, retryAfter(c.header, now), "Retry-After: %q", c.header)
	}
}

func TestStorableText(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"ok", 10, "ok"},
		{"O\x00K", 10, "OK"},
		{"a\xffb", 10, "ab"},
		{"héllo", 2, "h"}, // é is two bytes: cut before it, not inside
		{"héllo", 3, "hé"},
		{"\x00\x00", 1, ""},
	} {
		got := storableText(c.in, c.max)
		assert.Equal(t, c.want, got, "%q", c.in)
		assert.True(t, utf8.ValidString(got))
		assert.NotContains(t, got, "\x00")
		assert.LessOrEqual(t, len(got), c.max)
	}
}
