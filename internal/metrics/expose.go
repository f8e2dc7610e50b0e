package metrics

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A family is one metric name: its type, help, label names and series.
type family struct {
	name, help, typ string
	labels          []string
	buckets         []float64 // a histogram's upper bounds, ascending
	series          sync.Map  // label values joined by "\xff" → *series
}

func counter(name, help string, labels ...string) *family {
	return &family{name: name, help: help, typ: "counter", labels: labels}
}

func gauge(name, help string, labels ...string) *family {
	return &family{name: name, help: help, typ: "gauge", labels: labels}
}

func histogram(name, help string, buckets []float64, labels ...string) *family {
	return &family{name: name, help: help, typ: "histogram", labels: labels, buckets: buckets}
}

// exponential is n upper bounds from start, each factor times the last.
func exponential(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

// A series is one set of label values: a value (counter, gauge), or a
// histogram's bucket counts, sum and count. Floats are kept as their
// bits and added with compare-and-swap.
type series struct {
	values  []string
	buckets []float64 // the family's (a histogram's)
	v       atomic.Uint64
	counts  []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	count   atomic.Uint64
}

// with is the series of these label values (as many as the family has).
func (f *family) with(values ...string) *series {
	key := strings.Join(values, "\xff")
	if s, ok := f.series.Load(key); ok {
		return s.(*series)
	}
	s := &series{values: slices.Clone(values), buckets: f.buckets}
	if f.buckets != nil {
		s.counts = make([]atomic.Uint64, len(f.buckets)+1)
	}
	got, _ := f.series.LoadOrStore(key, s)
	return got.(*series)
}

func addFloat(u *atomic.Uint64, d float64) {
	for {
		old := u.Load()
		if u.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func (s *series) add(d float64) { addFloat(&s.v, d) }

func (s *series) observe(v float64) {
	i, _ := slices.BinarySearch(s.buckets, v) // the first bound ≥ v
	s.counts[i].Add(1)
	s.count.Add(1)
	addFloat(&s.v, v)
}

// expose writes every family, then the sessions, the process's and the
// Go runtime's series, in Prometheus's text format (0.0.4).
func (st *set) expose() []byte {
	var b bytes.Buffer
	for _, f := range st.all {
		f.write(&b)
	}
	if f := sessionCounts(); f != nil {
		live, running, stored := f()
		header(&b, "zeroclaw_sessions", "Sessions, by state (live: loaded; running: a turn runs; stored: all on disk).", "gauge")
		for _, p := range []struct {
			state string
			n     int
		}{{"live", live}, {"running", running}, {"stored", stored}} {
			b.WriteString(`zeroclaw_sessions{state="` + p.state + `"} ` + strconv.Itoa(p.n) + "\n")
		}
	}
	writeRuntime(&b)
	writeProcess(&b, st.started)
	return b.Bytes()
}

func header(b *bytes.Buffer, name, help, typ string) {
	b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

// write writes a family's series, sorted by their labels (a family
// that has none yet is left out, as Prometheus's client does).
func (f *family) write(b *bytes.Buffer) {
	var all []*series
	f.series.Range(func(_, v any) bool { all = append(all, v.(*series)); return true })
	if len(all) == 0 {
		return
	}
	slices.SortFunc(all, func(x, y *series) int { return slices.Compare(x.values, y.values) })
	// Labels are written in name order.
	order := make([]int, len(f.labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(f.labels[i], f.labels[j]) })
	header(b, f.name, f.help, f.typ)
	for _, s := range all {
		labels := func(extra string) string {
			var l strings.Builder
			for _, i := range order {
				if l.Len() > 0 {
					l.WriteByte(',')
				}
				l.WriteString(f.labels[i] + `="` + escape(s.values[i]) + `"`)
			}
			if extra != "" {
				if l.Len() > 0 {
					l.WriteByte(',')
				}
				l.WriteString(extra)
			}
			if l.Len() == 0 {
				return ""
			}
			return "{" + l.String() + "}"
		}
		if f.buckets == nil {
			b.WriteString(f.name + labels("") + " " + num(math.Float64frombits(s.v.Load())) + "\n")
			continue
		}
		cum := uint64(0)
		for i, le := range f.buckets {
			cum += s.counts[i].Load()
			b.WriteString(f.name + "_bucket" + labels(`le="`+num(le)+`"`) + " " + strconv.FormatUint(cum, 10) + "\n")
		}
		cum += s.counts[len(f.buckets)].Load()
		b.WriteString(f.name + "_bucket" + labels(`le="+Inf"`) + " " + strconv.FormatUint(cum, 10) + "\n")
		b.WriteString(f.name + "_sum" + labels("") + " " + num(math.Float64frombits(s.v.Load())) + "\n")
		b.WriteString(f.name + "_count" + labels("") + " " + strconv.FormatUint(cum, 10) + "\n")
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// escape escapes a label value as the text format wants.
func escape(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// writeRuntime writes the Go runtime's series (from ReadMemStats, not
// runtime/metrics: that package's initialisation would be paid by every
// process of the binary, the ACP bridge and the CLI included).
func writeRuntime(b *bytes.Buffer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, r := range []struct {
		name, help, typ string
		v               uint64
	}{
		{"go_goroutines", "Number of goroutines that currently exist.", "gauge", uint64(runtime.NumGoroutine())},
		{"go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", "gauge", ms.HeapAlloc},
		{"go_memstats_sys_bytes", "Bytes of memory obtained from the OS.", "gauge", ms.Sys},
		{"go_memstats_alloc_bytes_total", "Bytes allocated in the heap, all time.", "counter", ms.TotalAlloc},
		{"go_gc_cycles_total", "Completed GC cycles.", "counter", uint64(ms.NumGC)},
	} {
		header(b, r.name, r.help, r.typ)
		b.WriteString(r.name + " " + strconv.FormatUint(r.v, 10) + "\n")
	}
	header(b, "go_info", "Information about the Go environment.", "gauge")
	b.WriteString(`go_info{version="` + runtime.Version() + `"} 1` + "\n")
}

// writeProcess writes the process's series that this platform can read
// (process_metrics_*.go).
func writeProcess(b *bytes.Buffer, started time.Time) {
	p := readProcess()
	if p.cpuSeconds >= 0 {
		header(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
		b.WriteString("process_cpu_seconds_total " + num(p.cpuSeconds) + "\n")
	}
	if p.rss > 0 {
		header(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge")
		b.WriteString("process_resident_memory_bytes " + strconv.FormatUint(p.rss, 10) + "\n")
		header(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge")
		b.WriteString("process_virtual_memory_bytes " + strconv.FormatUint(p.vsize, 10) + "\n")
	}
	if p.threads > 0 {
		header(b, "go_threads", "Number of OS threads of the process.", "gauge")
		b.WriteString("go_threads " + strconv.Itoa(p.threads) + "\n")
	}
	if p.openFDs >= 0 {
		header(b, "process_open_fds", "Number of open file descriptors.", "gauge")
		b.WriteString("process_open_fds " + strconv.Itoa(p.openFDs) + "\n")
	}
	header(b, "process_start_time_seconds", "Start time of the process since the Unix epoch in seconds.", "gauge")
	b.WriteString("process_start_time_seconds " + num(float64(started.UnixNano())/1e9) + "\n")
}

// processStats are what readProcess can tell (-1, 0: unknown).
type processStats struct {
	cpuSeconds float64
	rss, vsize uint64
	openFDs    int
	threads    int
}
