package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// persistenceCalls are the dev server's persistence calls per operation, read from its Prometheus
// metrics (devstack.TemporalOptions.MetricsPort): workflow executions, history, tasks and
// visibility, every service summed. What a payment costs the dev server's one SQLite connection
// (docs/performance.md, issue 25).
type persistenceCalls map[string]float64

// print writes the calls made between before and c, per payment, the largest first.
func (c persistenceCalls) print(w io.Writer, before persistenceCalls, payments int, top int) {
	type op struct {
		name string
		n    float64
	}
	var ops []op
	total := 0.0
	for name, n := range c {
		if d := n - before[name]; d > 0 {
			ops = append(ops, op{name, d})
			total += d
		}
	}
	slices.SortFunc(ops, func(a, b op) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	per := func(n float64) string { return fmt.Sprintf("%.2f", n/float64(max(payments, 1))) }
	line(w, "all operations", "%s per payment (%.0f calls)", per(total), total)
	for i, o := range ops {
		if i == top {
			line(w, "…", "%d more operations", len(ops)-top)
			break
		}
		line(w, "  "+o.name, "%s per payment (%.0f)", per(o.n), o.n)
	}
}
