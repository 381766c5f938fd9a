package historybench

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The export's targets (issue 23): its throughput over 1,000,000 rows, and the peak RSS of the
// process serving it.
const (
	TargetExportRowsPerSecond = 100_000
	TargetExportPeakRSS       = 64 << 20
)

// ExportResult is one measured export.
type ExportResult struct {
	Name        string
	Rows        int
	Bytes       int64
	Elapsed     time.Duration
	FirstByte   time.Duration
	PeakRSS     int64 // bytes, the process's high-water mark during the export
	BaseRSS     int64 // bytes, resident just before
	PeakHeap    uint64
	CPU         time.Duration // of the process (user and system) during the export
	ContentType string
	Disposition string
	Columns     []string // the header row
}

// RowsPerSecond is the export's throughput, from the request to the last row read.
func (e ExportResult) RowsPerSecond() float64 { return float64(e.Rows) / e.Elapsed.Seconds() }

// String is the export's figures on one line.
func (e ExportResult) String() string {
	return fmt.Sprintf("%-32s %7d rows %8s in %7.2f ms (first byte %.2f ms): %8.0f rows/s; RSS %s before, peak %s; Go heap peak %s; CPU %.2f µs/row",
		e.Name, e.Rows, MiB(e.Bytes), ms(e.Elapsed), ms(e.FirstByte), e.RowsPerSecond(), MiB(e.BaseRSS), MiB(e.PeakRSS), MiB(int64(e.PeakHeap)),
		float64(e.CPU.Nanoseconds())/1000/float64(max(e.Rows, 1)))
}

// MiB formats a size in bytes.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ExportPath is the route of the CSV export under the server's root.
const ExportPath = "/api/v1/transactions/export/"

// RunExports measures, against the API served at base (its root URL), a small export of the
// big merchant's TEST history (status=PENDING, about 7 % of it), the whole TEST history and,
// with live, the whole LIVE history: equal memory peaks for the small and the big exports mean
// the export streams in constant memory.
func RunExports(ctx context.Context, client *http.Client, base string, d *Dataset, live bool, logf func(string, ...any)) ([]ExportResult, error) {
	runs := []struct {
		name, key, query string
	}{
		{"TEST, status=PENDING (small)", d.Main.Test, "?status=PENDING"},
		{fmt.Sprintf("TEST, all (%d rows)", d.ExportRows), d.Main.Test, ""},
	}
	if live {
		runs = append(runs, struct{ name, key, query string }{fmt.Sprintf("LIVE, all (%d rows)", d.MainLiveRows()), d.Main.Live, ""})
	}
	var out []ExportResult
	for _, run := range runs {
		res, err := Export(ctx, client, run.name, base+ExportPath+run.query, run.key)
		if err != nil {
			return nil, err
		}
		logf("export %s: %d rows in %s", run.name, res.Rows, res.Elapsed.Round(time.Millisecond))
		out = append(out, res)
	}
	return out, nil
}

// Export downloads one export, counting its CSV records as they arrive, and samples the
// process's memory meanwhile: its peak RSS (the high-water mark, reset just before) and the
// peak of its Go heap. When the API serves from the same process, that is the server's memory
// and the client's together.
func Export(ctx context.Context, client *http.Client, name, target, key string) (res ExportResult, err error) {
	res.Name = name
	// What the bench did before (seeding a million rows through this process) is given back to
	// the system first, so that the figures are the export's and not the seeding's leftovers.
	debug.FreeOSMemory()
	resetPeakRSS()
	res.BaseRSS = procStatus("VmRSS")
	var heapPeak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			heapPeak = max(heapPeak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); wg.Wait(); res.PeakHeap = heapPeak }()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return res, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	begin, cpu := time.Now(), processCPU()
	resp, err := client.Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	res.FirstByte = time.Since(begin)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return res, fmt.Errorf("export %s: %d %s", name, resp.StatusCode, body)
	}
	res.ContentType, res.Disposition = resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition")
	var c recordCounter
	if _, err := io.CopyBuffer(&c, resp.Body, make([]byte, 64<<10)); err != nil {
		return res, fmt.Errorf("export %s: after %d rows: %w", name, max(c.records-1, 0), err)
	}
	if c.quoted || (c.bytes > 0 && c.last != '\n') {
		return res, fmt.Errorf("export %s: the file ends inside a record", name)
	}
	if res.Columns, err = csv.NewReader(bytes.NewReader(c.header)).Read(); err != nil {
		return res, fmt.Errorf("export %s: header: %w", name, err)
	}
	res.Rows = c.records - 1
	res.Elapsed, res.CPU = time.Since(begin), processCPU()-cpu
	res.Bytes = c.bytes
	res.PeakRSS = procStatus("VmHWM")
	return res, nil
}

// recordCounter counts the records of a CSV file as it is written to it, without reading their
// fields (the client of the export stays cheap beside the server it measures): a line feed
// outside double quotes ends a record; a quote doubled inside a quoted field closes and opens it
// again. It keeps the first record, the header.
type recordCounter struct {
	header  []byte
	records int
	quoted  bool
	bytes   int64
	last    byte
}

func (c *recordCounter) Write(p []byte) (int, error) {
	if c.records == 0 {
		c.header = append(c.header, p...)
	}
	c.bytes += int64(len(p))
	if len(p) > 0 {
		c.last = p[len(p)-1]
	}
	for rest := p; len(rest) > 0; {
		if c.quoted {
			i := bytes.IndexByte(rest, '"')
			if i < 0 {
				break
			}
			c.quoted, rest = false, rest[i+1:]
			continue
		}
		i := bytes.IndexAny(rest, "\"\n")
		if i < 0 {
			break
		}
		if rest[i] == '"' {
			c.quoted = true
		} else {
			c.records++
		}
		rest = rest[i+1:]
	}
	return len(p), nil
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// resetPeakRSS resets the process's resident-set high-water mark (VmHWM), Linux 4.0+.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatus reads a size field of /proc/self/status, in bytes (0 when unavailable).
func procStatus(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
