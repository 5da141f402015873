// Package at runs one command at a given wall-clock instant: the start barrier
// cephbench uses to start a tool on many client hosts together.
//
// The controller starts `cephbench-loadgen at -- CMD ARGS...` on every host
// (through ssh, stdin a pipe it keeps open), waits for every "ready" line,
// then writes "go <unix_ns>" to each. Every line `at` prints itself starts
// with "@cephbench ", in the same stream as the command's own output, so the
// controller strips them and hands the tool's output to its parser unchanged.
//
// After starting CMD, `at` prints "@cephbench pid=<CMD's pid>"; when CMD ends,
// "@cephbench end_ns=<unix_ns> rc=<code> cpu_ns=<CMD's user + system time>".
//
// Before "go", lines "env NAME=VALUE" add to CMD's environment: secrets (S3
// keys) reach CMD without ever being on a command line (ps, ssh's logs).
//
// After "go", "measure <unix_ns>" sends CMD SIGUSR1 at that instant: the
// release of `cephbench-loadgen run --hold`, which prints "@cephbench
// held_ns=<unix_ns>" once set up and waits for it, so that the measured
// phases on all hosts start together whatever each one's prefill took.
//
// The command runs in its own process group, so that stopping it reaches the
// processes it started. Stdin EOF means the controller (or its ssh) is gone:
// the command is stopped, never left running on a client nobody watches.
package at

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Exit codes of `at` itself; once CMD ran, `at` exits with CMD's code.
const (
	ExitUsage    = 2
	ExitNoGo     = 3   // stdin ended (or "stop") before "go": CMD never started
	ExitNotFound = 127 // CMD could not be started, as a shell says it
)

// Marker is the prefix of every line `at` prints.
const Marker = "@cephbench "

// spin is how long before the instant `at` stops sleeping and polls the clock:
// a sleep may overshoot by a scheduler tick, polling does not.
const spin = 2 * time.Millisecond

// Env is what `at` sees of its process; tests replace all of it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Signals        <-chan os.Signal // SIGINT/SIGTERM/SIGHUP to `at`: stop CMD; others are ignored
	Now            func() time.Time // the host's own clock
}

// Usage is the one line `at --help` prints.
const Usage = "usage: cephbench-loadgen at [--label L] [--grace 5s] -- CMD ARGS..."

type options struct {
	label string
	grace time.Duration
	argv  []string
}

func parse(args []string) (*options, error) {
	fs := flag.NewFlagSet("at", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &options{}
	fs.StringVar(&o.label, "label", "", "a name for this host in messages")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "after SIGINT, how long CMD gets before SIGKILL")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.argv = fs.Args()
	if len(o.argv) == 0 {
		return nil, errors.New("no command given (CMD): " + Usage)
	}
	if o.grace < 0 {
		return nil, fmt.Errorf("--grace %s is negative: give a duration such as 5s", o.grace)
	}
	return o, nil
}

// writer serialises marker lines: the stdin reader and the main loop both print.
type writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *writer) marker(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.w, Marker+format+"\n", a...)
	if f, ok := w.w.(interface{ Sync() error }); ok {
		_ = f.Sync() // a pipe or a file: reaches the controller before CMD writes
	}
}

// Main runs `at` with the arguments after "at" and returns the exit code.
func Main(args []string, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	o, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(env.Stdout, Usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "cephbench-loadgen at: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return ExitUsage
	}
	out := &writer{w: env.Stdout}
	out.marker("ready pid=%d clock_ns=%d", os.Getpid(), env.Now().UnixNano())

	lines := make(chan string)
	go readLines(env.Stdin, lines)

	goNs, extra, code, ok := waitForGo(lines, env.Signals, env.Stderr, o)
	if !ok {
		return code
	}
	return runAt(o, env, out, lines, goNs, extra)
}

// readLines sends stdin's lines, then closes: EOF is "the controller is gone".
func readLines(r io.Reader, lines chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines <- strings.TrimSpace(sc.Text())
	}
	close(lines)
}

// waitForGo reads stdin until "go": the instant, and the "env" lines before it.
func waitForGo(lines <-chan string, sigs <-chan os.Signal, stderr io.Writer, o *options) (int64, []string, int, bool) {
	var extra []string
	for {
		select {
		case line, open := <-lines:
			if !open || line == "stop" {
				return 0, nil, ExitNoGo, false
			}
			if rest, found := strings.CutPrefix(line, "go "); found {
				ns, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
				if err == nil {
					return ns, extra, 0, true
				}
			}
			if rest, found := strings.CutPrefix(line, "env "); found && strings.Index(rest, "=") > 0 {
				extra = append(extra, rest)
				continue
			}
			fmt.Fprintf(stderr, "cephbench-loadgen at%s: ignoring stdin line %q (expected 'env NAME=VALUE', 'go <unix_ns>' or 'stop')\n",
				labelled(o.label), line)
		case s := <-sigs:
			if n, stops := stopSignal(s); stops {
				return 0, nil, 128 + n, false
			}
		}
	}
}

func labelled(label string) string {
	if label == "" {
		return ""
	}
	return " (" + label + ")"
}

// stopSignal says whether s asks `at` to stop, and its number (for 128+N).
func stopSignal(s os.Signal) (int, bool) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return 0, false
	}
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
		return int(sig), true
	}
	return int(sig), false // SIGPIPE: the controller's stream broke; stdin EOF says the rest
}

// sleepUntil returns at the instant ns of now's clock: sleep, then poll the last moment.
func sleepUntil(ns int64, now func() time.Time) {
	if d := time.Duration(ns-now().UnixNano()) - spin; d > 0 {
		time.Sleep(d)
	}
	for now().UnixNano() < ns {
	}
}

func runAt(o *options, env Env, out *writer, lines <-chan string, goNs int64, extraEnv []string) int {
	sleepUntil(goNs, env.Now)
	cmd := exec.Command(o.argv[0], o.argv[1:]...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = env.Stdout, env.Stderr // *os.File in real use: CMD writes to them itself
	// Pdeathsig: should `at` itself be killed (SIGKILL, OOM), CMD goes with it rather than run on unwatched.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out.marker("start_ns=%d", env.Now().UnixNano())
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "cephbench-loadgen at%s: cannot start %s: %v\n", labelled(o.label), o.argv[0], err)
		out.marker("end_ns=%d rc=%d", env.Now().UnixNano(), ExitNotFound)
		return ExitNotFound
	}
	pgid := cmd.Process.Pid
	// CMD's pid (and process group): the controller kills a local group itself on Ctrl-C, and a test can kill
	// the tool on its host. A line CMD has half written stays whole: the controller keeps the text before a marker.
	out.marker("pid=%d", pgid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	released := make(chan struct{}, 1)

	var kill <-chan time.Time // armed once CMD was asked to stop
	stop := func() {
		if kill == nil {
			_ = syscall.Kill(-pgid, syscall.SIGINT)
			kill = time.After(o.grace)
		}
	}
	for {
		select {
		case err := <-done:
			// what CMD left in its group (a shell's children) goes with it
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			rc := exitCode(cmd, err)
			out.marker("end_ns=%d rc=%d cpu_ns=%d", env.Now().UnixNano(), rc, cpuNs(cmd))
			return rc
		case line, open := <-lines:
			if !open {
				lines = nil // EOF: the controller is gone
				stop()
			} else if line == "stop" {
				stop()
			} else if rest, found := strings.CutPrefix(line, "measure "); found {
				if ns, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
					go func() { sleepUntil(ns, env.Now); released <- struct{}{} }()
				}
			}
		case <-released:
			// CMD (run with --hold) set up and waits: it starts measuring now. CMD alone, not its group: the
			// children of a command that does not catch the signal would die of it. Here, not in the sleeper,
			// so that no signal reaches a pid CMD no longer has.
			_ = cmd.Process.Signal(syscall.SIGUSR1)
		case s := <-env.Signals:
			if _, stops := stopSignal(s); stops {
				stop()
			}
		case <-kill:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}

// cpuNs is the CPU time (user + system) CMD used, with that of the descendants it waited for: what wait4's rusage
// counts, as `time` reports it. The controller divides it by the ops the cluster served (the client's CPU per op).
func cpuNs(cmd *exec.Cmd) int64 {
	if cmd.ProcessState == nil {
		return 0
	}
	return int64(cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime())
}

// exitCode is CMD's code as a shell reports it: 128+N when signal N ended it.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		if err != nil {
			return 1
		}
		return 0
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return 128 + int(st.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
