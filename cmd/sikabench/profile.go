package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The in-process service's goroutines carry a pprof label "component" (set where they are
// started: startSelf, runCollections), so that its CPU profile tells the service from the rest
// of the bench process: a goroutine inherits its creator's labels.
const (
	componentKey = "component"
	compAPI      = "api"     // the HTTP server and every request it serves
	compWorker   = "worker"  // the Temporal worker (pollers, workflow and activity tasks), the outbox sweeper
	compService  = "service" // what both use: the Temporal client's connection, the store's pool and read cache
	compSandbox  = "sandbox" // the sandbox operator
	compLoad     = "load"    // the load's clients
)

// serviceComponents are the labels of `sika api` and `sika worker` in process.
var serviceComponents = []string{compAPI, compWorker, compService}

// labelled runs f with the calling goroutine labelled component (and the goroutines it starts),
// then puts back the labels of ctx.
func labelled(ctx context.Context, component string, f func()) {
	pprof.Do(ctx, pprof.Labels(componentKey, component), func(context.Context) { f() })
}

// allocUse is what this process allocated over a window: exact totals (runtime.MemStats), and
// two allocation profiles to compare (go tool pprof -diff_base), "" when one could not be written.
type allocUse struct {
	bytes, objects     uint64
	startFile, endFile string
}

type allocWindow struct {
	start runtime.MemStats
	use   allocUse
}

// startAllocs writes the allocation profile and reads the totals at the window's start.
func startAllocs(dir string) *allocWindow {
	a := &allocWindow{use: allocUse{startFile: writeAllocs(filepath.Join(dir, "collections-allocs-start.pprof"))}}
	runtime.ReadMemStats(&a.start)
	return a
}

// finish reads the totals and writes the allocation profile at the window's end.
func (a *allocWindow) finish(dir string) *allocUse {
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	a.use.bytes, a.use.objects = end.TotalAlloc-a.start.TotalAlloc, end.Mallocs-a.start.Mallocs
	a.use.endFile = writeAllocs(filepath.Join(dir, "collections-allocs-end.pprof"))
	return &a.use
}

// writeAllocs writes the process's allocation profile to path and returns it, or "" when it
// could not.
func writeAllocs(path string) string {
	f, err := os.Create(path)
	if err == nil {
		err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	if err != nil {
		progress("allocation profile: %v", err)
		return ""
	}
	return path
}

func (a *allocUse) print(w io.Writer, payments int) {
	if payments > 0 {
		line(w, "allocated per completed payment", "%.1f KiB in %.0f objects   (the whole process: service, sandbox and load)",
			float64(a.bytes)/1024/float64(payments), float64(a.objects)/float64(payments))
	}
	if a.startFile != "" && a.endFile != "" {
		line(w, "", "(by function: go tool pprof -sample_index=alloc_space -top -diff_base %s %s;", a.startFile, a.endFile)
		line(w, "", " each profile as of the last garbage collection before it was written)")
	}
}

// profileTop is the number of functions each table of the profile lists.
const profileTop = 15

// cpuProfile is a CPU profile read back: the CPU of each component, and per function the CPU
// of the service's samples (flat: in the function itself; cum: with what it called).
type cpuProfile struct {
	path   string
	total  time.Duration            // every sample
	by     map[string]time.Duration // by component; "" for unlabelled samples
	funcs  []funcCPU                // the service's samples
	window time.Duration            // the profile's duration
}

type funcCPU struct {
	name      string
	flat, cum time.Duration
}

// service is the CPU of the service's samples.
func (p *cpuProfile) service() time.Duration {
	var d time.Duration
	for _, c := range serviceComponents {
		d += p.by[c]
	}
	return d
}

// readCPUProfile reads a CPU profile written by runtime/pprof (gzipped profile.proto) and sums
// it by component and, over the samples labelled with a service component, by function.
func readCPUProfile(path string) (*cpuProfile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rp, err := decodeProfile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	str := func(i int64) string {
		if i < 0 || int(i) >= len(rp.strings) {
			return ""
		}
		return rp.strings[i]
	}
	cpu := len(rp.sampleTypes) - 1 // runtime/pprof: samples/count, cpu/nanoseconds
	for i, t := range rp.sampleTypes {
		if str(t) == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("%s: no sample types: not a CPU profile", path)
	}
	p := &cpuProfile{path: path, by: map[string]time.Duration{}, window: time.Duration(rp.duration)}
	flat, cum := map[string]time.Duration{}, map[string]time.Duration{}
	for _, s := range rp.samples {
		if cpu >= len(s.values) {
			continue
		}
		d := time.Duration(s.values[cpu])
		comp := ""
		for k, v := range s.labels {
			if str(k) == componentKey {
				comp = str(v)
			}
		}
		p.total += d
		p.by[comp] += d
		if !slices.Contains(serviceComponents, comp) {
			continue
		}
		seen := map[string]bool{}
		for i, loc := range s.locations {
			for j, fn := range rp.locations[loc] { // innermost (inlined) first
				name := str(rp.functions[fn])
				if i == 0 && j == 0 {
					flat[name] += d
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += d
				}
			}
		}
	}
	for name, c := range cum {
		p.funcs = append(p.funcs, funcCPU{name: name, flat: flat[name], cum: c})
	}
	return p, nil
}

// byFlat and byCum are the functions, most CPU first; byCum keeps those of the module's own
// packages (the runtime's and the libraries' roots, goexit or a server's accept loop, would
// fill it otherwise).
func (p *cpuProfile) byFlat(n int) []funcCPU {
	fs := slices.Clone(p.funcs)
	slices.SortFunc(fs, func(a, b funcCPU) int { return cmpDesc(a.flat, b.flat, a.name, b.name) })
	return fs[:min(n, len(fs))]
}

func (p *cpuProfile) byCum(n int) []funcCPU {
	var fs []funcCPU
	for _, f := range p.funcs {
		if strings.HasPrefix(f.name, modulePath+"/") && !strings.HasPrefix(f.name, modulePath+"/cmd/sikabench.") {
			fs = append(fs, f)
		}
	}
	slices.SortFunc(fs, func(a, b funcCPU) int { return cmpDesc(a.cum, b.cum, a.name, b.name) })
	return fs[:min(n, len(fs))]
}

func cmpDesc(a, b time.Duration, an, bn string) int {
	if a != b {
		if a > b {
			return -1
		}
		return 1
	}
	return strings.Compare(an, bn)
}

// modulePath is the module's import path, left out of the function names printed.
const modulePath = "github.com/sikahq/sika"

// print prints the profile: where this process's CPU went by component, the service's CPU per
// payment, and its functions by flat and by cumulative share.
func (p *cpuProfile) print(w io.Writer, payments int) {
	svc := p.service()
	line(w, "profile", "%s", p.path)
	line(w, "", "(go tool pprof -top -tagfocus=%s=%s %s)", componentKey, strings.Join(serviceComponents, ","), p.path)
	var parts []string
	for _, c := range append(slices.Clone(serviceComponents), compSandbox, compLoad, "") {
		name := c
		if c == "" {
			name = "unlabelled (runtime: GC workers, scheduler; the bench)"
		}
		parts = append(parts, fmt.Sprintf("%s %.1f s", name, p.by[c].Seconds()))
	}
	line(w, "sampled CPU of this process", "%.1f s over %.1f s: %s", p.total.Seconds(), p.window.Seconds(), wrap(strings.Join(parts, ", "), 80, 39))
	if payments > 0 {
		line(w, "service CPU per completed payment", "%s ms   (api + worker + shared, sampled; %d payments)", ms(svc/time.Duration(payments)), payments)
	}
	if svc <= 0 {
		return
	}
	share := func(d time.Duration) float64 { return 100 * d.Seconds() / svc.Seconds() }
	fmt.Fprintf(w, "  by flat share of the service's samples (in the function itself):\n")
	fmt.Fprintf(w, "  %7s %7s  %s\n", "flat%", "cum%", "function")
	for _, f := range p.byFlat(profileTop) {
		fmt.Fprintf(w, "  %6.1f%% %6.1f%%  %s\n", share(f.flat), share(f.cum), funcName(f.name))
	}
	fmt.Fprintf(w, "  by cumulative share (with what it calls), Sika's own functions:\n")
	fmt.Fprintf(w, "  %7s %7s  %s\n", "cum%", "flat%", "function")
	for _, f := range p.byCum(profileTop) {
		fmt.Fprintf(w, "  %6.1f%% %6.1f%%  %s\n", share(f.cum), share(f.flat), funcName(f.name))
	}
}

// genericShape is the type argument the compiler names a generic function's instance by.
var genericShape = regexp.MustCompile(`\[go\.shape\.[^\]]*\]`)

// funcName is a function's name as printed: without the module's path, a generic instance's
// shape folded.
func funcName(name string) string {
	return shorten(genericShape.ReplaceAllString(strings.TrimPrefix(name, modulePath+"/"), "[…]"), 110)
}

// rawProfile is the part of profile.proto the report reads.
type rawProfile struct {
	sampleTypes []int64 // string index of each value's type
	samples     []rawSample
	locations   map[uint64][]uint64 // location id → function ids, innermost first
	functions   map[uint64]int64    // function id → string index of its name
	strings     []string
	duration    int64 // ns
}

type rawSample struct {
	locations []uint64 // leaf first
	values    []int64
	labels    map[int64]int64 // key → string value, as string indices
}

// decodeProfile decodes profile.proto (github.com/google/pprof/proto/profile.proto):
// sample_type = 1, sample = 2, location = 4, function = 5, string_table = 6, duration_nanos = 10.
func decodeProfile(b []byte) (*rawProfile, error) {
	p := &rawProfile{locations: map[uint64][]uint64{}, functions: map[uint64]int64{}}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error {
		switch num {
		case 1: // ValueType: type = 1, unit = 2
			var t int64
			err := eachField(raw, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				if num == 1 {
					t = int64(v)
				}
				return nil
			})
			p.sampleTypes = append(p.sampleTypes, t)
			return err
		case 2:
			s, err := decodeSample(raw)
			p.samples = append(p.samples, s)
			return err
		case 4: // Location: id = 1, line = 4 (Line: function_id = 1)
			var id uint64
			var fns []uint64
			err := eachField(raw, func(num protowire.Number, _ protowire.Type, v uint64, raw []byte) error {
				switch num {
				case 1:
					id = v
				case 4:
					return eachField(raw, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
						if num == 1 {
							fns = append(fns, v)
						}
						return nil
					})
				}
				return nil
			})
			p.locations[id] = fns
			return err
		case 5: // Function: id = 1, name = 2
			var id uint64
			var name int64
			err := eachField(raw, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch num {
				case 1:
					id = v
				case 2:
					name = int64(v)
				}
				return nil
			})
			p.functions[id] = name
			return err
		case 6:
			p.strings = append(p.strings, string(raw))
		case 10:
			p.duration = int64(v)
		}
		return nil
	})
	return p, err
}

// decodeSample decodes a Sample: location_id = 1, value = 2 (both packed or not), label = 3
// (Label: key = 1, str = 2).
func decodeSample(b []byte) (rawSample, error) {
	s := rawSample{labels: map[int64]int64{}}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error {
		switch num {
		case 1, 2:
			xs, err := varints(typ, v, raw)
			for _, x := range xs {
				if num == 1 {
					s.locations = append(s.locations, x)
				} else {
					s.values = append(s.values, int64(x))
				}
			}
			return err
		case 3:
			var key, str int64
			err := eachField(raw, func(num protowire.Number, _ protowire.Type, v uint64, _ []byte) error {
				switch num {
				case 1:
					key = int64(v)
				case 2:
					str = int64(v)
				}
				return nil
			})
			if str != 0 { // numeric labels have no string
				s.labels[key] = str
			}
			return err
		}
		return nil
	})
	return s, err
}

// eachField calls f with every field of a protobuf message: a varint's value, or a
// length-delimited field's bytes; other wire types are skipped.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v uint64
		var raw []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			raw, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.VarintType && typ != protowire.BytesType {
			continue
		}
		if err := f(num, typ, v, raw); err != nil {
			return err
		}
	}
	return nil
}

// varints is a repeated varint field's values: packed (length-delimited) or one.
func varints(typ protowire.Type, v uint64, raw []byte) ([]uint64, error) {
	if typ == protowire.VarintType {
		return []uint64{v}, nil
	}
	var out []uint64
	for len(raw) > 0 {
		x, n := protowire.ConsumeVarint(raw)
		if n < 0 {
			return out, errors.New("bad packed varint")
		}
		out, raw = append(out, x), raw[n:]
	}
	return out, nil
}
