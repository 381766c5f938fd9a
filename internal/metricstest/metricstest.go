// Package metricstest reads a Prometheus /metrics page in tests: every sample, with its labels,
// so that a test can say how much a counter moved or which series a process exports.
package metricstest

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sample is one line of the text exposition.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Page is one read of a /metrics page: its samples by name (a histogram's are under
// name_bucket, name_sum and name_count).
type Page map[string][]Sample

var (
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// Scrape GETs url and reads its Prometheus text exposition.
func Scrape(t testing.TB, url string) Page {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	page := Page{}
	for _, line := range strings.Split(string(body), "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, line)
		s := Sample{Labels: map[string]string{}, Value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.Labels[p[1]] = p[2]
		}
		page[m[1]] = append(page[m[1]], s)
	}
	return page
}

// Sum adds the samples of name whose labels include every given pair (name, value, …).
func (p Page) Sum(name string, labels ...string) float64 {
	var total float64
next:
	for _, s := range p[name] {
		for i := 0; i+1 < len(labels); i += 2 {
			if s.Labels[labels[i]] != labels[i+1] {
				continue next
			}
		}
		total += s.Value
	}
	return total
}

// LabelNames are the label names the samples of name carry.
func (p Page) LabelNames(name string) map[string]bool {
	out := map[string]bool{}
	for _, s := range p[name] {
		for l := range s.Labels {
			out[l] = true
		}
	}
	return out
}
