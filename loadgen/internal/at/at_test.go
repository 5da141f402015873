package at

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// session is one `at` run in this process: stdin a pipe the test writes, stdout
// and stderr a real file (CMD writes to it itself, as it does to ssh's pipe).
type session struct {
	t      *testing.T
	stdin  *io.PipeWriter
	out    *os.File
	sigs   chan os.Signal
	done   chan int
	closed bool
}

func start(t *testing.T, args ...string) *session {
	t.Helper()
	r, w := io.Pipe()
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, stdin: w, out: out, sigs: make(chan os.Signal, 2), done: make(chan int, 1)}
	go func() { s.done <- Main(args, Env{Stdin: r, Stdout: out, Stderr: out, Signals: s.sigs}) }()
	t.Cleanup(func() {
		if !s.closed {
			_ = w.Close()
		}
		_ = out.Close()
	})
	s.waitFor(`(?m)^@cephbench ready pid=\d+ clock_ns=\d+$`)
	return s
}

func (s *session) text() string {
	b, err := os.ReadFile(s.out.Name())
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// waitFor returns the first match of re in the output, waiting up to 5 s for it.
func (s *session) waitFor(re string) []string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if m := rx.FindStringSubmatch(s.text()); m != nil {
			return m
		}
	}
	s.t.Fatalf("no %q in output:\n%s", re, s.text())
	return nil
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) goIn(d time.Duration) int64 {
	ns := time.Now().Add(d).UnixNano()
	s.send("go " + strconv.FormatInt(ns, 10))
	return ns
}

func (s *session) eof() {
	s.closed = true
	_ = s.stdin.Close()
}

func (s *session) exit() int {
	s.t.Helper()
	select {
	case code := <-s.done:
		return code
	case <-time.After(10 * time.Second):
		s.t.Fatalf("at did not exit; output:\n%s", s.text())
		return -1
	}
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStartsAtTheInstantAndReportsExitCode(t *testing.T) {
	s := start(t, "--label", "c1", "--", "sh", "-c", "echo tool-output; echo tool-error >&2; exit 7")
	goNs := s.goIn(150 * time.Millisecond)
	code := s.exit()
	if code != 7 {
		t.Fatalf("exit code %d, want CMD's 7", code)
	}
	text := s.text()
	startNs := atoi(t, s.waitFor(`(?m)^@cephbench start_ns=(\d+)$`)[1])
	if startNs < goNs || startNs-goNs > int64(20*time.Millisecond) {
		t.Errorf("started %d ns after the go instant, want 0..20 ms", startNs-goNs)
	}
	end := s.waitFor(`(?m)^@cephbench end_ns=(\d+) rc=(\d+) cpu_ns=\d+$`)
	if atoi(t, end[1]) < startNs || end[2] != "7" {
		t.Errorf("end marker %q after start %d", end[0], startNs)
	}
	for _, want := range []string{"tool-output\n", "tool-error\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("CMD's output %q missing:\n%s", want, text)
		}
	}
	s.waitFor(`(?m)^@cephbench pid=\d+$`)
	if strings.Index(text, "@cephbench start_ns") > strings.Index(text, "tool-output") {
		t.Errorf("start marker after CMD's output:\n%s", text)
	}
}

func TestTheEndMarkerCarriesTheCPUOfCMDAndOfWhatItWaitedFor(t *testing.T) {
	// a shell that waits for a child counting to 200000 (~0.2 s of CPU, however loaded the machine), then prints
	// its own and its children's CPU with `times`: CMD's rusage is their sum, the child's included
	s := start(t, "--", "sh", "-c", `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; times`)
	s.goIn(50 * time.Millisecond)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	end := s.waitFor(`(?m)^@cephbench end_ns=\d+ rc=0 cpu_ns=(\d+)$`)
	cpu := atoi(t, end[1])
	times := s.waitFor(`(?m)^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s$`)
	var said float64 // seconds: the shell's user and system, then its children's
	for i := 1; i < len(times); i += 2 {
		min, _ := strconv.ParseFloat(times[i], 64)
		sec, _ := strconv.ParseFloat(times[i+1], 64)
		said += min*60 + sec
	}
	// `times` counts in clock ticks (10 ms); rusage is finer, and counts the shell's last instants too
	if got := float64(cpu) / 1e9; got < 0.05 || got < said-0.02 || got > said+0.05 {
		t.Errorf("cpu_ns %d, while the shell's times said %.3f s", cpu, said)
	}
}

func TestEOFBeforeGoNeverStartsCMD(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "ran")
	s := start(t, "--", "touch", flag)
	s.eof()
	if code := s.exit(); code != ExitNoGo {
		t.Fatalf("exit code %d, want %d", code, ExitNoGo)
	}
	if _, err := os.Stat(flag); err == nil {
		t.Fatal("CMD ran although no go came")
	}
}

func TestStopBeforeGoNeverStartsCMD(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "ran")
	s := start(t, "--", "touch", flag)
	s.send("stop")
	if code := s.exit(); code != ExitNoGo {
		t.Fatalf("exit code %d, want %d", code, ExitNoGo)
	}
	if _, err := os.Stat(flag); err == nil {
		t.Fatal("CMD ran although stopped before go")
	}
}

func TestSignalBeforeGo(t *testing.T) {
	s := start(t, "--", "true")
	s.sigs <- syscall.SIGTERM
	if code := s.exit(); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit code %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if strings.Contains(s.text(), "start_ns") {
		t.Fatal("CMD started after a signal")
	}
}

// pidAlive says whether pid still exists (a zombie of this process counts as gone).
func pidAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// A shell that starts a background child, prints its pid and waits: stopping
// it must reach the child too (CMD's process group).
const withChild = `sleep 30 & echo child=$!; wait`

func stopsWholeGroup(t *testing.T, s *session, how func()) {
	t.Helper()
	s.goIn(10 * time.Millisecond)
	child := int(atoi(t, s.waitFor(`child=(\d+)`)[1]))
	how()
	if code := s.exit(); code != 130 {
		t.Fatalf("exit code %d, want 130 (CMD ended by SIGINT)", code)
	}
	s.waitFor(`(?m)^@cephbench end_ns=\d+ rc=130 cpu_ns=\d+$`)
	for end := time.Now().Add(2 * time.Second); pidAlive(child) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if pidAlive(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("CMD's child %d outlived the stop", child)
	}
}

func TestStopLine(t *testing.T) {
	s := start(t, "--", "sh", "-c", withChild)
	stopsWholeGroup(t, s, func() { s.send("stop") })
}

func TestEOFAfterGoStops(t *testing.T) {
	s := start(t, "--", "sh", "-c", withChild)
	stopsWholeGroup(t, s, s.eof)
}

func TestSignalAfterGoStops(t *testing.T) {
	s := start(t, "--", "sh", "-c", withChild)
	stopsWholeGroup(t, s, func() { s.sigs <- syscall.SIGHUP })
}

func TestKillAfterGrace(t *testing.T) {
	s := start(t, "--grace", "200ms", "--", "sh", "-c", `trap "" INT; echo armed; sleep 30`)
	s.goIn(10 * time.Millisecond)
	s.waitFor("armed")
	t0 := time.Now()
	s.send("stop")
	if code := s.exit(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit code %d, want %d (SIGKILL after the grace)", code, 128+int(syscall.SIGKILL))
	}
	if waited := time.Since(t0); waited < 200*time.Millisecond || waited > 3*time.Second {
		t.Errorf("killed after %s, want about the 200ms grace", waited)
	}
}

func TestCommandNotFound(t *testing.T) {
	s := start(t, "--", "/nonexistent/cephbench-tool")
	s.goIn(10 * time.Millisecond)
	if code := s.exit(); code != ExitNotFound {
		t.Fatalf("exit code %d, want %d", code, ExitNotFound)
	}
	s.waitFor(`(?m)^@cephbench end_ns=\d+ rc=127$`)
	s.waitFor(`cannot start /nonexistent/cephbench-tool`)
}

func TestEnvLinesReachCMD(t *testing.T) {
	s := start(t, "--", "sh", "-c", `echo "secret=$CEPHBENCH_AT_TEST_SECRET"`)
	s.send("env CEPHBENCH_AT_TEST_SECRET=a=b c")
	s.goIn(10 * time.Millisecond)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	s.waitFor(`(?m)^secret=a=b c$`)
}

func TestBadLinesAreIgnored(t *testing.T) {
	s := start(t, "--", "true")
	s.send("go soon")
	s.goIn(10 * time.Millisecond)
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	s.waitFor(`ignoring stdin line "go soon"`)
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--"}, {"--grace", "-1s", "--", "true"}, {"--nope", "--", "true"}} {
		var out strings.Builder
		code := Main(args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out})
		if code != ExitUsage || strings.Count(out.String(), "\n") != 1 || strings.Contains(out.String(), Marker) {
			t.Errorf("at %q: exit %d, output %q; want exit 2 and one line", args, code, out.String())
		}
	}
}

func TestMeasureReleasesCMDAtTheInstant(t *testing.T) {
	// CMD stands for `cephbench-loadgen run --hold`: it says it is held, then waits for SIGUSR1
	s := start(t, "--", "sh", "-c", `trap 'echo released_ns=$(date +%s%N); exit 0' USR1; echo held; while :; do sleep 0.005; done`)
	s.goIn(10 * time.Millisecond)
	s.waitFor(`(?m)^held$`)
	at := time.Now().Add(150 * time.Millisecond).UnixNano()
	s.send("measure " + strconv.FormatInt(at, 10))
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d, want 0:\n%s", code, s.text())
	}
	got := atoi(t, s.waitFor(`(?m)^released_ns=(\d+)$`)[1])
	if got < at || got-at > int64(100*time.Millisecond) {
		t.Errorf("released %d ns after the measure instant, want 0..100 ms", got-at)
	}
}

func TestMeasureAfterCMDEndedSignalsNothing(t *testing.T) {
	s := start(t, "--", "true")
	s.goIn(10 * time.Millisecond)
	s.waitFor(`(?m)^@cephbench end_ns=\d+ rc=0`)
	s.send("measure " + strconv.FormatInt(time.Now().UnixNano(), 10))
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}
