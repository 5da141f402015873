package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/config"
	"github.com/cephbench/cephbench/loadgen/internal/fakestore"
)

type outcome struct {
	code           int
	stdout, stderr string
	doc            *Document
}

// runCLI runs "run" against store with the fake's credentials; sig, if
// not nil, delivers signals.
func runCLI(t *testing.T, store *fakestore.Store, sig chan os.Signal, args ...string) outcome {
	t.Helper()
	envs := map[string]string{
		config.EnvS3AccessKey: store.AccessKey, config.EnvS3SecretKey: "fake-secret-never-printed",
		config.EnvSwiftUser: store.SwiftUser, config.EnvSwiftKey: store.SwiftKey,
	}
	return runWithEnv(t, envs, sig, append([]string{"--endpoint", store.URL()}, args...)...)
}

func runWithEnv(t *testing.T, envs map[string]string, sig chan os.Signal, args ...string) outcome {
	t.Helper()
	return runReleased(t, envs, sig, nil, args...)
}

// runReleased is runWithEnv with release as the --hold release (SIGUSR1's stand-in).
func runReleased(t *testing.T, envs map[string]string, sig, release chan os.Signal, args ...string) outcome {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	var stdout, stderr bytes.Buffer
	if sig == nil {
		sig = make(chan os.Signal)
	}
	code := Main(append([]string{"run", "--output", out}, args...), Env{
		Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return envs[k] },
		Signals: sig, Exit: func(int) {}, Release: release,
	})
	o := outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if raw, err := os.ReadFile(out); err == nil {
		o.doc = &Document{}
		if err := json.Unmarshal(raw, o.doc); err != nil {
			t.Fatalf("result is not JSON: %v", err)
		}
		if bytes.Contains(raw, []byte("fake-secret-never-printed")) || bytes.Contains(raw, []byte(store0Key)) {
			t.Fatal("a secret reached the result file")
		}
	}
	if strings.Contains(o.stderr+o.stdout, "fake-secret-never-printed") || strings.Contains(o.stderr+o.stdout, store0Key) {
		t.Fatal("a secret was printed")
	}
	return o
}

const store0Key = "fake-swift-key"

func (o outcome) mustCode(t *testing.T, code int) {
	t.Helper()
	if o.code != code {
		t.Fatalf("exit %d, want %d; stderr:\n%s", o.code, code, o.stderr)
	}
}

// oneUsageLine checks the usage error format and returns the line.
func (o outcome) oneUsageLine(t *testing.T, flag string) string {
	t.Helper()
	o.mustCode(t, ExitUsage)
	line := strings.TrimSuffix(o.stderr, "\n")
	if strings.Count(o.stderr, "\n") != 1 || !strings.HasPrefix(line, "cephbench-loadgen: ") ||
		!strings.Contains(line, "("+flag+"): ") || o.doc != nil {
		t.Fatalf("want exactly one line naming %s and no result, got stderr %q", flag, o.stderr)
	}
	return line
}

func TestS3EndToEndCleansOnlyWhatItCreated(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	store.AddBucket("other", map[string]int64{"x": 1})
	store.AddBucket("pre-0", map[string]int64{"keepme": 5})
	before := store.Snapshot()

	o := runCLI(t, store, nil, "--workload", "mixed", "--mix", "get:5,put:3,delete:1,stat:1,list:1",
		"--bucket-prefix", "run1-", "--buckets", "2", "--objects", "50", "--ops", "400", "--concurrency", "4",
		"--size-dist", "1KiB:1,8KiB:1")
	o.mustCode(t, ExitOK)
	d := o.doc
	if d.Schema != Schema || d.StoppedReason != nil || d.Total.Ops != 400 || d.Total.Errors != 0 {
		t.Fatalf("doc: schema %q stopped %v total %+v", d.Schema, d.StoppedReason, d.Total)
	}
	for _, op := range []string{"get", "put", "delete", "stat", "list"} {
		if d.Operations[op].Ops == 0 || d.Operations[op].LatNs == nil || d.Operations[op].HdrLat == "" {
			t.Fatalf("%s missing from %v", op, d.Operations)
		}
	}
	if d.Operations["get"].TTFBNs == nil || d.Operations["get"].Bytes == 0 || d.Operations["put"].Bytes == 0 {
		t.Fatal("get ttfb/bytes or put bytes missing")
	}
	if d.Prefill == nil || d.Prefill.Objects != 50 || d.Params.Mix["get"] != 5 || len(d.Params.Sizes) != 2 {
		t.Fatalf("prefill %+v params %+v", d.Prefill, d.Params)
	}
	if !equalSnap(store.Snapshot(), before) {
		t.Fatalf("after cleanup the store is %v, want %v", store.Snapshot(), before)
	}
	if store.Count("PUT bucket") != 2 || store.Count("DELETE bucket") != 2 || len(d.Cleanup.BucketsDeleted) != 2 {
		t.Fatalf("bucket create/delete: %d/%d %+v", store.Count("PUT bucket"), store.Count("DELETE bucket"), d.Cleanup)
	}

	// An existing bucket is used with --use-existing and never deleted; only the run's objects go.
	o = runCLI(t, store, nil, "--workload", "get", "--use-existing", "--bucket-prefix", "pre-",
		"--objects", "20", "--ops", "100", "--concurrency", "3")
	o.mustCode(t, ExitOK)
	if o.doc.Operations["get"].Ops != 100 || o.doc.Cleanup.ObjectsDeleted != 20 || len(o.doc.Cleanup.BucketsDeleted) != 0 {
		t.Fatalf("use-existing run: %+v %+v", o.doc.Operations, o.doc.Cleanup)
	}
	if !equalSnap(store.Snapshot(), before) {
		t.Fatalf("after --use-existing the store is %v, want %v", store.Snapshot(), before)
	}

	// Without --use-existing an existing bucket is refused before anything is written.
	puts := store.Count("PUT object")
	line := runCLI(t, store, nil, "--workload", "put", "--bucket-prefix", "pre-", "--ops", "10").oneUsageLine(t, "--bucket-prefix")
	if !strings.Contains(line, `"pre-0" already exists`) || store.Count("PUT object") != puts || store.Count("PUT bucket") != 2 {
		t.Fatalf("%q; %d object PUTs sent", line, store.Count("PUT object")-puts)
	}
	runCLI(t, store, nil, "--workload", "get", "--use-existing", "--bucket-prefix", "missing-", "--ops", "10").oneUsageLine(t, "--use-existing")

	// --keep leaves the run's bucket and objects.
	o = runCLI(t, store, nil, "--workload", "put", "--keep", "--bucket-prefix", "keep-", "--objects", "10", "--ops", "50")
	o.mustCode(t, ExitOK)
	if snap := store.Snapshot(); len(snap["keep-0"]) != 10 || !o.doc.Cleanup.Kept || o.doc.Cleanup.ObjectsLeft != 10 {
		t.Fatalf("keep: %v %+v", snap["keep-0"], o.doc.Cleanup)
	}
}

func equalSnap(a, b map[string][]string) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestSwiftEndToEnd(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	store.AddBucket("other", map[string]int64{"x": 1})
	before := store.Snapshot()
	o := runCLI(t, store, nil, "--protocol", "swift", "--workload", "mixed", "--mix", "get:4,put:2,delete:1,stat:1,list:1",
		"--bucket-prefix", "sw-", "--buckets", "3", "--objects", "30", "--ops", "300", "--concurrency", "4",
		"--object-size", "64KiB", "--range-size", "4KiB")
	o.mustCode(t, ExitOK)
	d := o.doc
	if d.Protocol != "swift" || d.Total.Ops != 300 || d.Total.Errors != 0 || d.Params.SwiftAuthURL == nil {
		t.Fatalf("swift doc %+v", d.Total)
	}
	get := d.Operations["get"]
	if get.Ops == 0 || get.Bytes != get.Ops*4096 {
		t.Fatalf("ranged GETs read %d bytes in %d ops, want 4 KiB each", get.Bytes, get.Ops)
	}
	if !equalSnap(store.Snapshot(), before) || store.Count("GET auth") != 1 {
		t.Fatalf("store after swift run %v (auth calls %d)", store.Snapshot(), store.Count("GET auth"))
	}
}

// Objects above the 1 MiB payload block take the repeating-body path.
func TestLargeObjectsBothProtocols(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	for _, proto := range []string{"s3", "swift"} {
		o := runCLI(t, store, nil, "--protocol", proto, "--workload", "mixed", "--mix", "put:1,get:1",
			"--bucket-prefix", "big-"+proto+"-", "--objects", "4", "--ops", "12", "--concurrency", "2", "--object-size", "3MiB")
		o.mustCode(t, ExitOK)
		put, get := o.doc.Operations["put"], o.doc.Operations["get"]
		if put.Bytes != put.Ops*3<<20 || get.Bytes != get.Ops*3<<20 || o.doc.Prefill.Bytes != 4*3<<20 || o.doc.Total.Errors != 0 {
			t.Fatalf("%s: put %+v get %+v prefill %+v", proto, put, get, o.doc.Prefill)
		}
	}
	if len(store.Snapshot()) != 0 {
		t.Fatalf("left %v", store.Snapshot())
	}
}

func TestDeleteWorkloadEndsWhenKeysRunOut(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	o := runCLI(t, store, nil, "--workload", "delete", "--bucket-prefix", "del-", "--objects", "100", "--duration", "60s")
	o.mustCode(t, ExitOK)
	if o.doc.Operations["delete"].Ops != 100 || *o.doc.StoppedReason != "keys-exhausted" || len(store.Snapshot()) != 0 {
		t.Fatalf("delete: %+v %v", o.doc.Operations["delete"], store.Snapshot())
	}
}

// A server that stalls for 1 s must show in the tail in open loop, where
// latency counts from the intended send time, while a closed loop hides it
// (only the few ops in flight during the stall see it).
func TestOpenLoopCorrectsCoordinatedOmission(t *testing.T) {
	run := func(args ...string) *Document {
		store := fakestore.New()
		defer store.Close()
		store.StallOnGet, store.StallFor = 50, time.Second
		o := runCLI(t, store, nil, append([]string{"--workload", "get", "--bucket-prefix", "co-", "--objects", "20", "--concurrency", "2"}, args...)...)
		o.mustCode(t, ExitOK)
		return o.doc
	}
	open := run("--rate", "100", "--ops", "300")
	q := open.Operations["get"].LatNs
	if open.Operations["get"].Ops != 300 || q.Max < int64(time.Second) || q.P99 < int64(500*time.Millisecond) || q.P90 < int64(100*time.Millisecond) {
		t.Fatalf("open loop did not show the stall: %+v", q)
	}
	if open.Params.Loop != "open" || *open.Params.Arrival != "constant" {
		t.Fatalf("params %+v", open.Params)
	}
	closed := run("--ops", "3000")
	q = closed.Operations["get"].LatNs
	if q.Max < int64(time.Second) || q.P99 > int64(500*time.Millisecond) {
		t.Fatalf("closed loop: want the stall only in max, got %+v", q)
	}
}

// When the server cannot keep up with --rate, the window still ends on
// time and the ops never sent are reported, not silently dropped.
func TestOpenLoopReportsUnsentOps(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	store.StallOnGet, store.StallFor = 20, 3*time.Second
	start := time.Now()
	o := runCLI(t, store, nil, "--workload", "get", "--bucket-prefix", "us-", "--objects", "10", "--concurrency", "1",
		"--rate", "200", "--duration", "1s")
	o.mustCode(t, ExitOK)
	if o.doc.UnsentOps < 50 || !strings.Contains(o.stderr, "did not keep up with --rate") || time.Since(start) > 20*time.Second {
		t.Fatalf("unsent %d, stderr %q", o.doc.UnsentOps, o.stderr)
	}
	if ops := o.doc.Operations["get"].Ops; ops+o.doc.UnsentOps < 150 || ops+o.doc.UnsentOps > 250 {
		t.Fatalf("sent %d + unsent %d, want about 200", ops, o.doc.UnsentOps)
	}
}

func TestErrorRatioStops(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	var n atomic.Int64
	store.Fault = func(r *http.Request) (int, string) {
		if r.Method == http.MethodPut && n.Add(1)%10 == 0 {
			return 503, "SlowDown"
		}
		return 0, ""
	}
	o := runCLI(t, store, nil, "--workload", "put", "--bucket-prefix", "er-", "--ops", "5000", "--concurrency", "4")
	o.mustCode(t, ExitFailed)
	d := o.doc
	if d.StoppedReason == nil || *d.StoppedReason != "error-ratio" || d.Total.ErrorsByKind["503 SlowDown"] == 0 ||
		d.Total.Ops+d.Total.Errors > 1000 || !strings.Contains(o.stderr, "error ratio above 0.01") {
		t.Fatalf("stopped %v total %+v stderr %q", d.StoppedReason, d.Total, o.stderr)
	}
	if len(store.Snapshot()) != 0 {
		t.Fatalf("cleanup after the stop left %v", store.Snapshot())
	}
	// The same faults under a tolerant ratio run to the end.
	o = runCLI(t, store, nil, "--workload", "put", "--bucket-prefix", "er-", "--ops", "1000", "--concurrency", "4", "--max-error-ratio", "0.5")
	o.mustCode(t, ExitOK)
	if o.doc.StoppedReason != nil || o.doc.Total.Ops+o.doc.Total.Errors != 1000 || o.doc.Total.Errors < 50 {
		t.Fatalf("tolerant run: %+v", o.doc.Total)
	}
}

func TestUsageErrorsComeBeforeLoad(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	bad := map[string]string{config.EnvS3AccessKey: "wrong", config.EnvS3SecretKey: "fake-secret-never-printed"}
	line := runWithEnv(t, bad, nil, "--endpoint", store.URL(), "--workload", "put", "--ops", "10").
		oneUsageLine(t, config.EnvS3AccessKey+"/"+config.EnvS3SecretKey)
	if !strings.Contains(line, "credentials rejected") || !strings.Contains(line, "InvalidAccessKeyId") {
		t.Fatal(line)
	}
	badSwift := map[string]string{config.EnvSwiftUser: "test:swift", config.EnvSwiftKey: "wrong-key"}
	runWithEnv(t, badSwift, nil, "--protocol", "swift", "--endpoint", store.URL(), "--workload", "put", "--ops", "10").
		oneUsageLine(t, config.EnvSwiftUser+"/"+config.EnvSwiftKey)
	if store.Count("PUT object")+store.Count("PUT bucket") != 0 {
		t.Fatal("load was sent with bad keys")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	line = runCLI(t, store, nil, "--endpoint", closed, "--workload", "put", "--ops", "10").oneUsageLine(t, "--endpoint")
	if !strings.Contains(line, "connection refused") {
		t.Fatal(line)
	}
	runCLI(t, store, nil, "--workload", "put", "--ops", "10", "--object-size", "4X").oneUsageLine(t, "--object-size")
	runCLI(t, store, nil, "--workload", "put", "--rate", "10").oneUsageLine(t, "--rate")
	runCLI(t, store, nil, "--workload", "put", "--ops", "1", "--concurrency", "0").oneUsageLine(t, "--concurrency")
	runCLI(t, store, nil, "--workload", "mixed", "--mix", "get:0", "--ops", "1").oneUsageLine(t, "--mix")
	runCLI(t, store, nil, "--workload", "put", "--ops", "1", "--output", "/nonexistent/dir/x.json").oneUsageLine(t, "--output")
}

func TestInterruptCleansUpAndWritesPartialResult(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	sig := make(chan os.Signal, 1)
	go func() {
		for store.Count("GET object") < 200 {
			time.Sleep(5 * time.Millisecond)
		}
		sig <- os.Interrupt
	}()
	start := time.Now()
	o := runCLI(t, store, sig, "--workload", "get", "--bucket-prefix", "int-", "--objects", "50", "--duration", "60s")
	o.mustCode(t, ExitInterrupted)
	if time.Since(start) > 30*time.Second || o.doc.StoppedReason == nil || *o.doc.StoppedReason != "interrupted" ||
		o.doc.Operations["get"].Ops == 0 || len(store.Snapshot()) != 0 || !strings.Contains(o.stderr, "interrupted") {
		t.Fatalf("stopped %v ops %d store %v stderr %q", o.doc.StoppedReason, o.doc.Operations["get"].Ops, store.Snapshot(), o.stderr)
	}
}

func TestSecondSignalExitsAtOnceSayingWhatIsLeft(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	store.StallOnGet, store.StallFor = 300, 2*time.Second // keeps requests in flight when the signals come
	sig := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	envs := map[string]string{config.EnvS3AccessKey: store.AccessKey, config.EnvS3SecretKey: "x"}
	go func() {
		for store.Count("GET object") < 300 {
			time.Sleep(5 * time.Millisecond)
		}
		sig <- os.Interrupt
		sig <- os.Interrupt
	}()
	done := make(chan int)
	go func() {
		done <- Main([]string{"run", "--endpoint", store.URL(), "--workload", "get", "--bucket-prefix", "sig-",
			"--objects", "50", "--duration", "60s", "--output", filepath.Join(t.TempDir(), "r.json")},
			Env{Stdout: io.Discard, Stderr: &stderr /* run serializes its writes */, Getenv: func(k string) string { return envs[k] },
				Signals: sig, Exit: func(code int) { exited <- code }})
	}()
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Fatalf("exit %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("second signal did not exit")
	}
	<-done
	if !strings.Contains(stderr.String(), "second signal: exiting without cleanup; left behind: up to") ||
		!strings.Contains(stderr.String(), "sig-0") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func TestVersionAndUnknownCommand(t *testing.T) {
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if Main([]string{"version"}, env) != ExitOK || !strings.HasPrefix(out.String(), "cephbench-loadgen ") {
		t.Fatalf("version: %q", out.String())
	}
	if Main([]string{"fly"}, env) != ExitUsage || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("unknown command: %q", errb.String())
	}
}

// While the measured phase runs, loadgen prints what each second achieved,
// so that cephbench can show live figures.
func TestProgressLinesEverySecond(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	o := runCLI(t, store, nil, "--workload", "put", "--bucket-prefix", "pg-", "--objects", "50", "--concurrency", "2",
		"--object-size", "4KiB", "--duration", "2500ms")
	o.mustCode(t, ExitOK)
	var lines []string
	for _, ln := range strings.Split(o.stderr, "\n") {
		if strings.HasPrefix(ln, "cephbench-loadgen: progress t=") {
			lines = append(lines, ln)
		}
	}
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("want 2 progress lines in 2.5 s, got %q", o.stderr)
	}
	var sec int
	var ops, bps float64
	if _, err := fmt.Sscanf(lines[0], "cephbench-loadgen: progress t=%ds ops_per_s=%g bytes_per_s=%g", &sec, &ops, &bps); err != nil {
		t.Fatalf("%q: %v", lines[0], err)
	}
	if sec != 1 || ops <= 0 || math.Abs(bps-ops*4096) > 0.1*4096 { // ops/s is printed to 0.1
		t.Fatalf("first line %q: t=%d ops/s=%g bytes/s=%g", lines[0], sec, ops, bps)
	}
}

// runHeld runs "run --hold" against store, released by release.
func runHeld(t *testing.T, store *fakestore.Store, release, sig chan os.Signal, args ...string) outcome {
	t.Helper()
	envs := map[string]string{config.EnvS3AccessKey: store.AccessKey, config.EnvS3SecretKey: "fake-secret"}
	return runReleased(t, envs, sig, release, append([]string{"--hold", "--endpoint", store.URL()}, args...)...)
}

func TestHoldWaitsAfterPrefillForTheRelease(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	release := make(chan os.Signal, 1)
	var releasedAt time.Time
	var getsBefore int64
	go func() {
		for store.Count("PUT object") < 40 { // the prefill is done
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		getsBefore = store.Count("GET object")
		releasedAt = time.Now()
		release <- syscall.SIGUSR1
	}()
	o := runHeld(t, store, release, nil, "--workload", "get", "--bucket-prefix", "held-", "--objects", "40",
		"--duration", "300ms")
	o.mustCode(t, ExitOK)
	held := strings.Index(o.stderr, "@cephbench held_ns=")
	if held < 0 || held < strings.Index(o.stderr, "prefill") || !strings.Contains(o.stderr[held:], "\n") {
		t.Fatalf("no held marker line after the prefill's:\n%s", o.stderr)
	}
	if getsBefore != 0 || o.doc.StartUnixNs < releasedAt.UnixNano() || o.doc.Operations["get"].Ops == 0 {
		t.Fatalf("gets before the release %d, measured from %d, released at %d, ops %d", getsBefore,
			o.doc.StartUnixNs, releasedAt.UnixNano(), o.doc.Operations["get"].Ops)
	}
	if len(store.Snapshot()) != 0 {
		t.Fatalf("left behind: %v", store.Snapshot())
	}
}

func TestInterruptWhileHeldCleansUp(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	sig := make(chan os.Signal, 1)
	go func() {
		for store.Count("PUT object") < 20 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		sig <- os.Interrupt
	}()
	o := runHeld(t, store, make(chan os.Signal), sig, "--workload", "get", "--bucket-prefix", "heldint-",
		"--objects", "20", "--duration", "60s")
	o.mustCode(t, ExitInterrupted)
	if o.doc == nil || o.doc.StoppedReason == nil || *o.doc.StoppedReason != "interrupted" || len(store.Snapshot()) != 0 {
		t.Fatalf("doc %+v, left %v, stderr %q", o.doc, store.Snapshot(), o.stderr)
	}
}

func TestHoldWithoutAReleaseIsAUsageError(t *testing.T) {
	store := fakestore.New()
	defer store.Close()
	o := runCLI(t, store, nil, "--hold", "--workload", "put", "--duration", "1s")
	o.oneUsageLine(t, "--hold")
}
