package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/cli"
	"github.com/cephbench/cephbench/loadgen/internal/s3"
)

// startServer runs the null server on a free port until the test ends.
func startServer(t testing.TB) (*server, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &server{buckets: map[string]bool{}, body: make([]byte, 4096), storage: "http://" + ln.Addr().String() + swiftPrefix}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s, ln.Addr().String()
}

// BenchmarkS3Object: one 4 KiB object request after another through the
// S3 backend (the load's path: head, signature, http1) against the null
// server in this process. ns/op counts both sides; allocs/op is the client's
// (the server allocates one string per request).
//
//	go test ./cmd/cephbench-nullserver -run XXX -bench S3Object -benchmem
func BenchmarkS3Object(b *testing.B) {
	_, addr := startServer(b)
	c, err := s3.New(s3.Options{Endpoint: "http://" + addr, Region: "us-east-1", AccessKey: "a", SecretKey: "b",
		Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 4096)
	ctx := context.Background()
	b.Run("put", func(b *testing.B) {
		b.ReportAllocs()
		r := bytes.NewReader(body)
		for b.Loop() {
			r.Reset(body)
			if err := c.Put(ctx, "b", "obj-00000001", r, 4096); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, _, err := c.Get(ctx, "b", "obj-00000001", 0, 0); err != nil || n != 4096 {
				b.Fatal(n, err)
			}
		}
	})
}

// A full loadgen run (check, create, prefill, load, cleanup) works against
// the null server over both protocols, and net/http reads its answers.
func TestLoadgenRunsAgainstNullServer(t *testing.T) {
	s, addr := startServer(t)
	env := map[string]string{"CEPHBENCH_S3_ACCESS_KEY": "a", "CEPHBENCH_S3_SECRET_KEY": "b",
		"CEPHBENCH_SWIFT_USER": "u:s", "CEPHBENCH_SWIFT_KEY": "k"}
	for _, proto := range []string{"s3", "swift"} {
		for _, wl := range []string{"put", "get", "stat", "list", "delete"} {
			out := filepath.Join(t.TempDir(), "r.json")
			var stderr bytes.Buffer
			code := cli.Main([]string{"run", "--protocol", proto, "--endpoint", "http://" + addr,
				"--workload", wl, "--ops", "200", "--objects", "50", "--concurrency", "4", "--bucket-prefix", "ns-", "--output", out},
				cli.Env{Stdout: &stderr, Stderr: &stderr, Getenv: func(k string) string { return env[k] }, Signals: make(chan os.Signal), Exit: func(int) {}})
			raw, _ := os.ReadFile(out)
			var doc cli.Document
			_ = json.Unmarshal(raw, &doc)
			want := int64(200)
			if wl == "delete" {
				want = 50
			}
			if code != 0 || doc.Total.Ops != want || doc.Total.Errors != 0 {
				t.Fatalf("%s %s: exit %d, total %+v, stderr %s", proto, wl, code, doc.Total, stderr.String())
			}
			if wl == "get" && doc.Total.Bytes != 200*4096 {
				t.Fatalf("%s get read %d bytes", proto, doc.Total.Bytes)
			}
		}
	}
	if len(s.buckets) != 0 {
		t.Fatalf("buckets left %v", s.buckets)
	}
	// Connection: close is honoured.
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/b/k", nil)
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != 4096 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
}
