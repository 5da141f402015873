package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// testdata/result-rgw-*.json are real results from RGW (Ceph 16.2.15, the
// project's lab). They must still match the document type exactly, so a
// schema change is seen here (and by the Python parser's tests that use them).
func TestRealRGWResultsMatchTheSchema(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "result-rgw-*.json"))
	if len(files) < 2 {
		t.Fatalf("fixtures missing: %v", files)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var d Document
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.Schema != Schema || d.Total.Ops == 0 || d.Total.Errors != 0 || len(d.Timeseries) == 0 || d.Cleanup.ObjectsLeft != 0 {
			t.Fatalf("%s: %+v", f, d.Total)
		}
		var sum int64
		for name, op := range d.Operations {
			h, err := hdr.Decode([]byte(op.HdrLat))
			if err != nil || h.TotalCount() != op.Ops || h.ValueAtQuantile(99) != op.LatNs.P99 {
				t.Fatalf("%s %s: histogram %v", f, name, err)
			}
			sum += op.Ops
		}
		if sum != d.Total.Ops {
			t.Fatalf("%s: operations add up to %d, total says %d", f, sum, d.Total.Ops)
		}
	}
}
