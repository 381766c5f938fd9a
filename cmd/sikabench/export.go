package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
)

// runExport seeds -export-rows transactions of a new merchant in TEST into the service's
// database (cmd/sikabench-history's data set, transactions only: the export reads nothing
// else), then exports a small part of them and all of them through the in-process API,
// measuring rows/s and the memory of this process (API and client) meanwhile.
func runExport(ctx context.Context, t *target, o options) ([]historybench.ExportResult, error) {
	end := time.Now().UTC().Add(-time.Hour).Truncate(time.Hour)
	d := &historybench.Dataset{Rows: o.exportRows, ExportRows: o.exportRows, TransactionsOnly: true, Start: end.AddDate(-2, 0, 0), End: end}
	progress("export: seeding %d transactions of one merchant", o.exportRows)
	if err := d.Seed(ctx, t.store, t.db, func(format string, args ...any) { progress("export: "+format, args...) }); err != nil {
		return nil, fmt.Errorf("export: seed: %w", err)
	}
	// Garbage of the earlier parts must not count in the export's peak.
	runtime.GC()
	debug.FreeOSMemory()
	root := strings.TrimSuffix(t.baseURL, "/api/v1")
	exports, err := historybench.RunExports(ctx, &http.Client{Timeout: 5 * time.Minute}, root, d, false,
		progress)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return exports, nil
}
