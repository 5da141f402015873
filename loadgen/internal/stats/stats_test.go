package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

var names = []string{"put", "get"}

func TestCollectorAggregates(t *testing.T) {
	start := time.Unix(1000, 0)
	c := NewCollector(names, start)
	// 100 GETs of 1..100 ms in second 1, 10 PUTs of 5 ms in second 3, 2 PUT errors.
	for i := 1; i <= 100; i++ {
		c.Record(Sample{Op: 1, Lat: time.Duration(i) * time.Millisecond, TTFB: time.Millisecond, Bytes: 10,
			End: start.Add(500 * time.Millisecond)})
	}
	for range 10 {
		c.Record(Sample{Op: 0, Lat: 5 * time.Millisecond, Bytes: 4096, End: start.Add(2500 * time.Millisecond)})
	}
	c.Record(Sample{Op: 0, Lat: time.Second, Kind: "503 SlowDown", Bytes: 99, End: start.Add(2600 * time.Millisecond)})
	c.Record(Sample{Op: 0, Lat: time.Second, Kind: "timeout", End: start.Add(2700 * time.Millisecond)})

	s, err := c.Summarize(2, map[string]bool{"get": true})
	if err != nil {
		t.Fatal(err)
	}
	get, put := s.Operations["get"], s.Operations["put"]
	if get.Ops != 100 || get.Bytes != 1000 || get.OpsPerS != 50 || get.BytesPerS != 500 || get.Errors != 0 {
		t.Fatalf("get %+v", get)
	}
	within := func(got, want int64) bool { return got >= want && float64(got) <= float64(want)*1.001 }
	if q := get.LatNs; !within(q.P50, 50e6) || !within(q.P90, 90e6) || !within(q.P99, 99e6) || q.Max != 100e6 || q.Min != 1e6 || q.Mean != 50.5e6 {
		t.Fatalf("get latency %+v", q)
	}
	if get.TTFBNs == nil || get.TTFBNs.Max != 1e6 || get.HdrTTFB == "" {
		t.Fatalf("get ttfb %+v", get.TTFBNs)
	}
	if put.Ops != 10 || put.Errors != 2 || put.Bytes != 40960 || put.ErrorsByKind["503 SlowDown"] != 1 || put.ErrorsByKind["timeout"] != 1 {
		t.Fatalf("put %+v", put)
	}
	if put.LatNs.Max != 5e6 || put.TTFBNs != nil || put.HdrTTFB != "" {
		t.Fatalf("errors must stay out of latency; put has no ttfb: %+v", put)
	}
	tot := s.Total
	if tot.Ops != 110 || tot.Errors != 2 || tot.LatNs.Max != 100e6 || tot.LatNs.Min != 1e6 || tot.TTFBNs == nil {
		t.Fatalf("total %+v", tot)
	}
	if len(s.Timeseries) != 3 {
		t.Fatalf("timeseries %+v", s.Timeseries)
	}
	p1, p2, p3 := s.Timeseries[0], s.Timeseries[1], s.Timeseries[2]
	if p1.TS != 1 || p1.Ops != 100 || p2.TS != 2 || p2.Ops != 0 || p3.TS != 3 || p3.Ops != 10 || p3.Errors != 2 || p3.Bytes != 40960 {
		t.Fatalf("timeseries %+v", s.Timeseries)
	}
	if p1.LatNsP50 < 50e6 || p1.LatNsP50 > 51e6 || p3.LatNsP99 < 5e6 || p3.LatNsP99 > 5.1e6 {
		t.Fatalf("timeseries latency %+v", s.Timeseries)
	}
	if _, ok := s.Operations["delete"]; ok {
		t.Fatal("operations that never ran must be absent")
	}
}

func TestHistogramEncodingRoundTripsAndMerges(t *testing.T) {
	a, b := randomHist(1, 5000), randomHist(2, 3000)
	ea, err := EncodeHistogram(a)
	if err != nil {
		t.Fatal(err)
	}
	da, err := hdr.Decode([]byte(ea))
	if err != nil {
		t.Fatal(err)
	}
	if !da.Equals(a) {
		t.Fatal("decoded histogram differs")
	}
	m := NewHistogram()
	m.Merge(a)
	m.Merge(b)
	if m.TotalCount() != 8000 || m.ValueAtQuantile(99) < a.ValueAtQuantile(50) {
		t.Fatalf("merge: %d values", m.TotalCount())
	}
	if v := NewHistogram(); v.RecordValue(HistHighestNs) != nil || v.RecordValue(HistHighestNs*2) == nil {
		t.Fatal("range is not 1 h")
	}
}

// randomHist records n log-uniform latencies between 10 µs and 10 s.
func randomHist(seed uint64, n int) *hdr.Histogram {
	r := rand.New(rand.NewPCG(seed, seed))
	h := NewHistogram()
	for range n {
		v := int64(1e4 * math.Pow(10, r.Float64()*6))
		_ = h.RecordValue(v)
	}
	return h
}

// Fixture for testdata/hdr_check.py: two encoded histograms and the
// percentiles of their merge computed here. Regenerate with
// LOADGEN_WRITE_HDR_FIXTURE=1 go test ./internal/stats/.
type fixture struct {
	A, B        string
	Percentiles map[string]int64 // merged, by percentile
	TotalCount  int64
}

var fixturePercentiles = []float64{50, 90, 99, 99.9, 100}

func pctKey(p float64) string { b, _ := json.Marshal(p); return string(b) }

func TestHDRFixtureForPython(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "hdr_fixture.json")
	a, b := randomHist(1, 5000), randomHist(2, 3000)
	m := NewHistogram()
	m.Merge(a)
	m.Merge(b)
	want := fixture{Percentiles: map[string]int64{}, TotalCount: m.TotalCount()}
	want.A, _ = EncodeHistogram(a)
	want.B, _ = EncodeHistogram(b)
	for _, p := range fixturePercentiles {
		want.Percentiles[pctKey(p)] = m.ValueAtQuantile(p)
	}
	if os.Getenv("LOADGEN_WRITE_HDR_FIXTURE") == "1" {
		out, _ := json.MarshalIndent(want, "", " ")
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got fixture
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	// The committed fixture must still be what this code produces and reads.
	ga, err1 := hdr.Decode([]byte(got.A))
	gb, err2 := hdr.Decode([]byte(got.B))
	if err1 != nil || err2 != nil || !ga.Equals(a) || !gb.Equals(b) || got.TotalCount != want.TotalCount {
		t.Fatalf("fixture is stale: %v %v", err1, err2)
	}
	for k, v := range want.Percentiles {
		if got.Percentiles[k] != v {
			t.Fatalf("fixture percentile %s = %d, code gives %d", k, got.Percentiles[k], v)
		}
	}
}
