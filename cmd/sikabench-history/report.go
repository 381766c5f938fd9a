package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
)

// Targets of the issue.
const (
	targetListP99   = 30 * time.Millisecond
	targetSearchP99 = 50 * time.Millisecond
)

// percentile is the nearest-rank percentile q (0 < q <= 1) of the durations.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func verdict(ok bool) string {
	if ok {
		return "OK"
	}
	return "MISSED"
}

func printReport(w io.Writer, o options, results []result, exports []historybench.ExportResult) {
	if o.exportOnly {
		fmt.Fprintf(w, "\nsikabench-history: %d transactions of one merchant in TEST, exported; load average %s\n\n", o.rows, historybench.LoadAverage())
	} else {
		fmt.Fprintf(w, "\nsikabench-history: %d transactions (big merchant: %d LIVE, %d TEST), %d measured requests per scenario, one at a time; load average %s\n\n",
			o.rows, (&historybench.Dataset{Rows: o.rows, ExportRows: o.exportRows, Others: 20}).MainLiveRows(), o.exportRows, o.n, historybench.LoadAverage())
	}
	if len(results) > 0 {
		fmt.Fprintf(w, "%-60s %8s %8s %8s %8s %9s\n", "scenario (ms)", "p50", "p95", "p99", "max", "rows/page")
	}
	groups := map[string][]time.Duration{}
	var order []string
	for _, r := range results {
		if _, ok := groups[r.group]; !ok {
			order = append(order, r.group)
		}
		groups[r.group] = append(groups[r.group], r.latencies...)
		fmt.Fprintf(w, "%-60s %8s %8s %8s %8s %9.1f\n", r.group+": "+r.name, ms(percentile(r.latencies, .5)),
			ms(percentile(r.latencies, .95)), ms(percentile(r.latencies, .99)), ms(slices.Max(r.latencies)),
			float64(r.rows)/float64(len(r.latencies)))
	}
	fmt.Fprintln(w)
	for _, g := range order {
		ds := groups[g]
		line := fmt.Sprintf("%-22s %6d requests  p50 %7s  p95 %7s  p99 %7s ms", g, len(ds), ms(percentile(ds, .5)),
			ms(percentile(ds, .95)), ms(percentile(ds, .99)))
		switch g {
		case groupList:
			line += fmt.Sprintf("   target p99 <= %s: %s", ms(targetListP99), verdict(percentile(ds, .99) <= targetListP99))
		case groupSearch:
			line += fmt.Sprintf("   target p99 <= %s: %s", ms(targetSearchP99), verdict(percentile(ds, .99) <= targetSearchP99))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	for _, e := range exports {
		fmt.Fprintf(w, "export %s\n", e)
	}
	if len(exports) >= 2 {
		e := exports[1]
		fmt.Fprintf(w, "export target >= %d rows/s over %d rows: %s; peak RSS <= %s: %s (%s; %s)\n", historybench.TargetExportRowsPerSecond,
			e.Rows, verdict(e.RowsPerSecond() >= historybench.TargetExportRowsPerSecond && e.Rows >= 1_000_000),
			historybench.MiB(historybench.TargetExportPeakRSS), verdict(e.PeakRSS <= historybench.TargetExportPeakRSS), e.ContentType, e.Disposition)
	}
}
