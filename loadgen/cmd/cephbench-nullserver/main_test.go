package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/cephbench/cephbench/loadgen/internal/cli"
)

// A full loadgen run (check, create, prefill, load, cleanup) works against
// the null server over both protocols, and net/http reads its answers.
func TestLoadgenRunsAgainstNullServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
	env := map[string]string{"CEPHBENCH_S3_ACCESS_KEY": "a", "CEPHBENCH_S3_SECRET_KEY": "b",
		"CEPHBENCH_SWIFT_USER": "u:s", "CEPHBENCH_SWIFT_KEY": "k"}
	for _, proto := range []string{"s3", "swift"} {
		for _, wl := range []string{"put", "get", "stat", "list", "delete"} {
			out := filepath.Join(t.TempDir(), "r.json")
			var stderr bytes.Buffer
			code := cli.Main([]string{"run", "--protocol", proto, "--endpoint", "http://" + ln.Addr().String(),
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
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/b/k", nil)
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != 4096 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
}
