package cli

import (
	"github.com/cephbench/cephbench/loadgen/internal/config"
	"github.com/cephbench/cephbench/loadgen/internal/stats"
	"github.com/cephbench/cephbench/loadgen/internal/workload"
)

// Schema names the result document format; bump it on incompatible change.
const Schema = "cephbench-loadgen/1"

// Document is the JSON result (see docs/loadgen.md).
type Document struct {
	Schema        string                     `json:"schema"`
	Version       string                     `json:"version"`
	Protocol      string                     `json:"protocol"`
	Endpoint      string                     `json:"endpoint"`
	Workload      string                     `json:"workload"`
	Params        Params                     `json:"params"`
	StartUnixNs   int64                      `json:"start_unix_ns"`
	DurationS     float64                    `json:"duration_s"`
	StoppedReason *string                    `json:"stopped_reason"`
	Operations    map[string]stats.OpSummary `json:"operations"`
	Total         stats.OpSummary            `json:"total"`
	Timeseries    []stats.Point              `json:"timeseries"`
	WarmupOps     int64                      `json:"warmup_ops"`
	UnsentOps     int64                      `json:"unsent_ops"`
	Prefill       *workload.PrefillInfo      `json:"prefill"`
	Cleanup       workload.CleanupInfo       `json:"cleanup"`
	Histogram     HistogramInfo              `json:"histogram"`
}

// HistogramInfo states the geometry of every hdr_* histogram.
type HistogramInfo struct {
	Encoding  string `json:"encoding"`
	Unit      string `json:"unit"`
	LowestNs  int64  `json:"lowest_ns"`
	HighestNs int64  `json:"highest_ns"`
	SigFigs   int    `json:"significant_digits"`
}

// SizeWeight is one entry of params.sizes.
type SizeWeight struct {
	Bytes  int64  `json:"bytes"`
	Weight uint64 `json:"weight"`
}

// Params are all settings of the run in base units (never a credential).
type Params struct {
	Protocol       string            `json:"protocol"`
	Endpoint       string            `json:"endpoint"`
	SwiftAuthURL   *string           `json:"swift_auth_url"`
	Region         string            `json:"region"`
	Workload       string            `json:"workload"`
	Mix            map[string]uint64 `json:"mix"`
	Sizes          []SizeWeight      `json:"sizes"`
	RangeSizeBytes int64             `json:"range_size_bytes"`
	Buckets        int               `json:"buckets"`
	BucketPrefix   string            `json:"bucket_prefix"`
	KeyPrefix      string            `json:"key_prefix"`
	Objects        int               `json:"objects"`
	Concurrency    int               `json:"concurrency"`
	DurationS      float64           `json:"duration_s"`
	Ops            int64             `json:"ops"`
	RateOpsPerS    float64           `json:"rate_ops_per_s"`
	Loop           string            `json:"loop"`
	Arrival        *string           `json:"arrival"`
	WarmupS        float64           `json:"warmup_s"`
	Prefill        bool              `json:"prefill"`
	MaxErrorRatio  float64           `json:"max_error_ratio"`
	Keep           bool              `json:"keep"`
	UseExisting    bool              `json:"use_existing"`
	Output         string            `json:"output"`
	Seed           int64             `json:"seed"`
	TimeoutS       float64           `json:"timeout_s"`
}

func paramsOf(c *config.Config) Params {
	p := Params{
		Protocol: c.Protocol, Endpoint: c.Endpoint, Region: c.Region, Workload: c.Workload,
		RangeSizeBytes: c.RangeSize, Buckets: c.Buckets, BucketPrefix: c.BucketPrefix, KeyPrefix: c.KeyPrefix,
		Objects: c.Objects, Concurrency: c.Concurrency, DurationS: c.Duration.Seconds(), Ops: c.Ops,
		RateOpsPerS: c.Rate, Loop: "closed", WarmupS: c.Warmup.Seconds(), Prefill: c.Prefill,
		MaxErrorRatio: c.MaxErrorRatio, Keep: c.Keep, UseExisting: c.UseExisting, Output: c.Output,
		Seed: c.Seed, TimeoutS: c.Timeout.Seconds(),
	}
	if c.OpenLoop() {
		a := c.Arrival
		p.Loop, p.Arrival = "open", &a
	}
	if c.Protocol == "swift" {
		u := c.SwiftAuthURL
		p.SwiftAuthURL = &u
	}
	if len(c.Mix) > 0 {
		p.Mix = map[string]uint64{}
		for _, m := range c.Mix {
			p.Mix[m.Value] = m.Weight
		}
	}
	for _, s := range c.Sizes {
		p.Sizes = append(p.Sizes, SizeWeight{Bytes: s.Value, Weight: s.Weight})
	}
	return p
}
