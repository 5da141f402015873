// Package stats aggregates operation samples into the result document:
// per-operation counts, latency and time-to-first-byte histograms (HDR,
// 1 µs .. 1 h, 3 significant digits, in nanoseconds) and a per-second time
// series. It knows nothing about how load is generated.
package stats

import (
	"encoding/base64"
	"math"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision, shared by every histogram the tool writes
// so that histograms from many clients merge exactly.
const (
	HistLowestNs  = int64(time.Microsecond)
	HistHighestNs = int64(time.Hour)
	HistSigFigs   = 3
	// per-second histograms only give p50/p99; 2 digits keep them small.
	seriesSigFigs = 2
)

// NewHistogram returns an empty histogram with the shared geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(HistLowestNs, HistHighestNs, HistSigFigs) }

func clampNs(ns int64) int64 {
	return min(max(ns, 0), HistHighestNs)
}

// EncodeHistogram gives the base64 V2 compressed encoding that Java's
// HdrHistogram and Python's hdrh decode.
func EncodeHistogram(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	// hdrhistogram-go already returns base64 text; check it decodes.
	if _, err := base64.StdEncoding.DecodeString(string(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

// Sample is one finished operation.
type Sample struct {
	Op    int           // index into the collector's op names
	Lat   time.Duration // from (intended) start to the end of the response
	TTFB  time.Duration // from (intended) start to response headers; 0 = none
	Bytes int64
	Kind  string    // error kind; "" for success
	End   time.Time // completion, places the sample in the time series
}

// latency holds one exact-moments-plus-histogram latency record.
type latency struct {
	h        *hdr.Histogram
	n        int64
	sum      float64
	min, max int64
}

func newLatency() *latency { return &latency{h: NewHistogram(), min: math.MaxInt64} }

func (l *latency) record(ns int64) {
	ns = clampNs(ns)
	_ = l.h.RecordValue(ns) // cannot fail: clamped into range
	l.n++
	l.sum += float64(ns)
	l.min = min(l.min, ns)
	l.max = max(l.max, ns)
}

func (l *latency) merge(o *latency) {
	l.h.Merge(o.h)
	l.n += o.n
	l.sum += o.sum
	l.min = min(l.min, o.min)
	l.max = max(l.max, o.max)
}

type opAcc struct {
	ops, bytes, errors int64
	kinds              map[string]int64
	lat, ttfb          *latency
}

func newOpAcc() *opAcc {
	return &opAcc{kinds: map[string]int64{}, lat: newLatency(), ttfb: newLatency()}
}

// Collector receives samples from many goroutines.
type Collector struct {
	mu     sync.Mutex
	names  []string
	ops    []*opAcc
	start  time.Time
	series series
}

// NewCollector counts the operations named; the time series starts at start.
func NewCollector(names []string, start time.Time) *Collector {
	c := &Collector{names: names, start: start}
	for range names {
		c.ops = append(c.ops, newOpAcc())
	}
	c.series.init()
	return c
}

// Record adds one sample. Failed operations count as errors and do not enter
// the latency histograms.
func (c *Collector) Record(s Sample) {
	c.mu.Lock()
	a := c.ops[s.Op]
	if s.Kind != "" {
		a.errors++
		a.kinds[s.Kind]++
	} else {
		a.ops++
		a.bytes += s.Bytes
		a.lat.record(int64(s.Lat))
		if s.TTFB > 0 {
			a.ttfb.record(int64(s.TTFB))
		}
	}
	c.series.add(s, c.start)
	c.mu.Unlock()
}

// Totals are the successful operations and their bytes recorded so far,
// over all operation kinds (for progress lines while a phase runs).
func (c *Collector) Totals() (ops, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.ops {
		ops += a.ops
		bytes += a.bytes
	}
	return ops, bytes
}

// Quantiles are latency figures in nanoseconds.
type Quantiles struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
}

func (l *latency) quantiles() *Quantiles {
	if l.n == 0 {
		return nil
	}
	return &Quantiles{
		P50: l.h.ValueAtQuantile(50), P90: l.h.ValueAtQuantile(90),
		P99: l.h.ValueAtQuantile(99), P999: l.h.ValueAtQuantile(99.9),
		Max: l.max, Min: l.min, Mean: math.Round(l.sum/float64(l.n)*10) / 10,
	}
}

// OpSummary is one entry of "operations" (and "total").
type OpSummary struct {
	Ops          int64            `json:"ops"`
	Bytes        int64            `json:"bytes"`
	Errors       int64            `json:"errors"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	OpsPerS      float64          `json:"ops_per_s"`
	BytesPerS    float64          `json:"bytes_per_s"`
	LatNs        *Quantiles       `json:"lat_ns"`
	TTFBNs       *Quantiles       `json:"ttfb_ns,omitempty"`
	HdrLat       string           `json:"hdr_lat"`
	HdrTTFB      string           `json:"hdr_ttfb,omitempty"`
}

func (a *opAcc) summary(durationS float64, withTTFB bool) (OpSummary, error) {
	s := OpSummary{Ops: a.ops, Bytes: a.bytes, Errors: a.errors, ErrorsByKind: a.kinds, LatNs: a.lat.quantiles()}
	if durationS > 0 {
		s.OpsPerS = float64(a.ops) / durationS
		s.BytesPerS = float64(a.bytes) / durationS
	}
	var err error
	if s.HdrLat, err = EncodeHistogram(a.lat.h); err != nil {
		return s, err
	}
	if withTTFB {
		s.TTFBNs = a.ttfb.quantiles()
		if s.HdrTTFB, err = EncodeHistogram(a.ttfb.h); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Point is one second of the time series.
type Point struct {
	TS       int     `json:"t_s"`
	Ops      int64   `json:"ops"`
	Bytes    int64   `json:"bytes"`
	Errors   int64   `json:"errors"`
	LatNsP50 float64 `json:"lat_ns_p50"`
	LatNsP99 float64 `json:"lat_ns_p99"`
}

// Summary is the aggregated result.
type Summary struct {
	Operations map[string]OpSummary `json:"operations"`
	Total      OpSummary            `json:"total"`
	Timeseries []Point              `json:"timeseries"`
}

// Summarize freezes the collector over durationS seconds. Operations that
// never ran are left out. ttfbOps names the operations with a TTFB.
func (c *Collector) Summarize(durationS float64, ttfbOps map[string]bool) (Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Summary{Operations: map[string]OpSummary{}}
	total := newOpAcc()
	anyTTFB := false
	for i, a := range c.ops {
		if a.ops+a.errors == 0 {
			continue
		}
		s, err := a.summary(durationS, ttfbOps[c.names[i]])
		if err != nil {
			return out, err
		}
		out.Operations[c.names[i]] = s
		total.ops += a.ops
		total.bytes += a.bytes
		total.errors += a.errors
		for k, v := range a.kinds {
			total.kinds[k] += v
		}
		total.lat.merge(a.lat)
		if ttfbOps[c.names[i]] {
			total.ttfb.merge(a.ttfb)
			anyTTFB = true
		}
	}
	var err error
	out.Total, err = total.summary(durationS, anyTTFB)
	out.Timeseries = c.series.points()
	return out, err
}

// series keeps finished seconds and the current one. Samples are placed by
// completion time; one that finishes after a later second has begun (rare:
// they are recorded in completion order) counts in the current second.
type series struct {
	cur    int // 1-based index of the open second
	acc    Point
	h      *hdr.Histogram
	closed []Point
}

func (s *series) init() {
	s.h = hdr.New(HistLowestNs, HistHighestNs, seriesSigFigs)
	s.cur, s.acc = 1, Point{TS: 1}
}

func (s *series) add(smp Sample, start time.Time) {
	sec := int(smp.End.Sub(start)/time.Second) + 1
	if sec < 1 {
		sec = 1
	}
	for sec > s.cur {
		s.close()
		s.cur++
		s.acc = Point{TS: s.cur}
	}
	if smp.Kind != "" {
		s.acc.Errors++
		return
	}
	s.acc.Ops++
	s.acc.Bytes += smp.Bytes
	_ = s.h.RecordValue(clampNs(int64(smp.Lat)))
}

func (s *series) close() {
	if s.h.TotalCount() > 0 {
		s.acc.LatNsP50 = float64(s.h.ValueAtQuantile(50))
		s.acc.LatNsP99 = float64(s.h.ValueAtQuantile(99))
	}
	s.closed = append(s.closed, s.acc)
	s.h.Reset()
}

func (s *series) points() []Point {
	out := append([]Point{}, s.closed...)
	if len(s.closed) > 0 || s.acc.Ops+s.acc.Errors > 0 {
		p := s.acc
		if s.h.TotalCount() > 0 {
			p.LatNsP50 = float64(s.h.ValueAtQuantile(50))
			p.LatNsP99 = float64(s.h.ValueAtQuantile(99))
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TS < out[j].TS })
	return out
}
