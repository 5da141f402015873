package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "512": 512, "4096B": 4096, "4KiB": 4096, "4kib": 4096, "1MiB": 1 << 20, "2GiB": 2 << 30,
		"4KB": 4000, "1MB": 1000000, "1GB": 1000000000, "1.5KiB": 1536, " 8 KiB ": 8192, "1TiB": 1 << 40,
	}
	for in, want := range good {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4X", "KiB", "-1", "1.3B", "1e3", "4 K", "99999999999TiB", "1..2KiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1: "1B", 4096: "4KiB", 1 << 20: "1MiB", 1536: "1536B", 3 << 30: "3GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseWeights(t *testing.T) {
	ws, err := ParseWeights("4KiB:70, 1MiB:30,2MiB:0", ParseSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Value != 4096 || ws[0].Weight != 70 || ws[1].Value != 1<<20 || ws[1].Weight != 30 {
		t.Fatalf("got %+v", ws)
	}
	id := func(s string) (string, error) { return s, nil }
	for _, bad := range []string{"", "a", "a:0,b:0", "a:-1", "a:x", "a:1,a:2", "a:1.5"} {
		if _, err := ParseWeights(bad, id); err == nil {
			t.Errorf("ParseWeights(%q): want an error", bad)
		}
	}
	if _, err := ParseWeights("4X:1", ParseSize); err == nil {
		t.Error("a bad size inside a distribution must fail")
	}
}

func TestChooserFollowsWeights(t *testing.T) {
	c := NewChooser([]Weighted[string]{{"a", 1}, {"b", 3}, {"z", 0}})
	counts := map[string]int{}
	for r := uint64(0); r < 4000; r++ {
		counts[c.Pick(r)]++
	}
	if counts["a"] != 1000 || counts["b"] != 3000 || counts["z"] != 0 {
		t.Fatalf("counts %v, want a:1000 b:3000", counts)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var s3env = env(map[string]string{EnvS3AccessKey: "ak", EnvS3SecretKey: "sk"})

func TestParseGood(t *testing.T) {
	c, err := Parse(strings.Fields("--endpoint http://127.0.0.1:8000/ --workload mixed --mix get:7,put:2,delete:1 "+
		"--size-dist 4KiB:70,1MiB:30 --range-size 1KiB --rate 100 --arrival poisson --duration 10s --buckets 3 --bucket-prefix cb-x-"), s3env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://127.0.0.1:8000" || !c.OpenLoop() || c.Arrival != "poisson" || c.Duration != 10*time.Second ||
		len(c.Mix) != 3 || c.MaxSize() != 1<<20 || c.RangeSize != 1024 || c.BucketName(2) != "cb-x-2" || !c.Prefill {
		t.Fatalf("unexpected config %+v", c)
	}
	if c.Creds.S3SecretKey != "sk" || strings.Contains(c.Creds.String(), "sk") {
		t.Fatal("credentials not read or not redacted")
	}
	if c.Raw["bucket-prefix"] != "cb-x-" {
		t.Fatalf("raw %v", c.Raw)
	}
	put, err := Parse(strings.Fields("--endpoint http://h:1 --workload put --ops 5"), s3env)
	if err != nil || put.Prefill || !strings.HasPrefix(put.BucketPrefix, "cephbench-loadgen-") {
		t.Fatalf("put defaults: %+v %v", put, err)
	}
}

func TestParseUsageErrors(t *testing.T) {
	base := "--endpoint http://127.0.0.1:8000 --workload get --duration 1s "
	cases := map[string]string{
		base + "--object-size 4X":                       "--object-size",
		base + "--size-dist 4KiB:0,1MiB:0":              "--size-dist",
		base + "--concurrency 0":                        "--concurrency",
		base + "--concurrency -3":                       "--concurrency",
		"--endpoint http://h:1 --workload get --rate 5": "--rate",
		"--endpoint http://h:1 --workload get":          "--duration",
		base + "--workload mixed --mix get:0,put:0":     "--mix",
		base + "--workload mixed --mix get:1,fly:2":     "--mix",
		base + "--workload fly":                         "--workload",
		base + "--protocol ftp":                         "--protocol",
		"--workload get --duration 1s":                  "--endpoint",
		base + "--endpoint ftp://h":                     "--endpoint",
		base + "--endpoint http://h:1/x":                "--endpoint",
		base + "--bogus 1":                              "-bogus",
		base + "--duration 5x":                          "--duration",
		base + "--ops 3":                                "--duration",
		base + "--use-existing":                         "--bucket-prefix",
		base + "--bucket-prefix UPPER-":                 "--bucket-prefix",
		base + "--range-size 0":                         "--range-size",
		base + "--max-error-ratio 2":                    "--max-error-ratio",
		base + "--arrival poisson":                      "--arrival",
		base + "--prefill maybe":                        "--prefill",
		base + "extra":                                  "extra",
		base + "--key-prefix a?b":                       "--key-prefix",
	}
	for args, flag := range cases {
		_, err := Parse(strings.Fields(args), s3env)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a UsageError", args, err)
			continue
		}
		msg := ue.Error()
		if ue.Flag != flag || ue.Hint == "" || strings.Contains(msg, "\n") || !strings.Contains(msg, "("+flag+"): ") {
			t.Errorf("%q: got %q (flag %q), want flag %q, one line with a hint", args, msg, ue.Flag, flag)
		}
	}
}

func TestCredentialsOnlyFromEnvironment(t *testing.T) {
	_, err := Parse(strings.Fields("--endpoint http://h:1 --workload get --duration 1s"), env(nil))
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Flag != EnvS3AccessKey {
		t.Fatalf("missing S3 keys: got %v", err)
	}
	_, err = Parse(strings.Fields("--protocol swift --endpoint http://h:1 --workload get --duration 1s"),
		env(map[string]string{EnvSwiftUser: "u:s"}))
	if !errors.As(err, &ue) || ue.Flag != EnvSwiftKey {
		t.Fatalf("missing Swift key: got %v", err)
	}
	if _, err := Parse(strings.Fields("--endpoint http://h:1 --workload get --duration 1s --secret-key x"), s3env); err == nil {
		t.Fatal("a secret flag must not exist")
	}
}
