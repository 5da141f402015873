// Package cli is the command line: parse, check, run, clean up, write JSON.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/config"
	"github.com/cephbench/cephbench/loadgen/internal/s3"
	"github.com/cephbench/cephbench/loadgen/internal/stats"
	"github.com/cephbench/cephbench/loadgen/internal/swift"
	"github.com/cephbench/cephbench/loadgen/internal/version"
	"github.com/cephbench/cephbench/loadgen/internal/workload"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailed      = 1 // error-ratio stop, runtime failure, cleanup left something
	ExitUsage       = 2 // the user can fix it; nothing was sent as load
	ExitInterrupted = 130
)

const prog = "cephbench-loadgen"

// Env is what the command sees of its process; tests replace all of it.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Signals        <-chan os.Signal // SIGINT/SIGTERM
	Exit           func(code int)   // immediate exit on a second signal
	Release        <-chan os.Signal // --hold: the release (SIGUSR1, which main must catch from the start)
	Now            func() time.Time // the held marker's clock; nil: time.Now
}

// ReleaseSignal ends --hold's wait: `cephbench-loadgen at` sends it at the instant cephbench gave.
var ReleaseSignal os.Signal = syscall.SIGUSR1

// Main runs the command and returns the exit code.
func Main(args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "%s: no command (command): use '%s run [flags]' or '%s version'\n", prog, prog, prog)
		return ExitUsage
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(env.Stdout, version.Long())
		return ExitOK
	case "run":
		return run(args[1:], env)
	case "at":
		return runAt(args[1:], env)
	case "help", "-h", "--help":
		config.Usage(env.Stdout)
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "%s: unknown command %q (command): use '%s run [flags]' or '%s version'\n", prog, args[0], prog, prog)
	return ExitUsage
}

// hold says the run is set up and waits for the release: the marker line, alone on stderr, is what cephbench
// waits for on every client before it releases them all at one instant.
func hold(ctx context.Context, env Env) bool {
	now := env.Now
	if now == nil {
		now = time.Now
	}
	fmt.Fprintf(env.Stderr, "@cephbench held_ns=%d\n", now().UnixNano())
	select {
	case <-env.Release:
		return true
	case <-ctx.Done():
		return false
	}
}

func usageExit(env Env, err error) int {
	fmt.Fprintf(env.Stderr, "%s: %s\n", prog, oneLine(err.Error()))
	return ExitUsage
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newBackend(cfg *config.Config) (backend.Client, error) {
	tr := backend.NewTransport(cfg.Concurrency, cfg.Timeout)
	if cfg.Protocol == "swift" {
		return swift.New(cfg.SwiftAuthURL, cfg.Creds.SwiftUser, cfg.Creds.SwiftKey, tr, cfg.Timeout), nil
	}
	return s3.New(s3.Options{Endpoint: cfg.Endpoint, Region: cfg.Region,
		AccessKey: cfg.Creds.S3AccessKey, SecretKey: cfg.Creds.S3SecretKey, Transport: tr, Timeout: cfg.Timeout})
}

// checkError turns a failed first call into advice.
func checkError(cfg *config.Config, err error) error {
	target, flag := cfg.Endpoint, "--endpoint"
	creds := config.EnvS3AccessKey + "/" + config.EnvS3SecretKey
	if cfg.Protocol == "swift" {
		target, flag = cfg.SwiftAuthURL, "--swift-auth-url"
		creds = config.EnvSwiftUser + "/" + config.EnvSwiftKey
		if cfg.SwiftAuthURL == cfg.Endpoint+"/auth/v1.0" {
			flag = "--endpoint"
		}
	}
	var se *backend.StatusError
	if errors.As(err, &se) {
		switch se.Status {
		case 401, 403:
			return config.Usagef(creds, "check the keys of the RGW user (radosgw-admin user info --uid ...)",
				"credentials rejected by %s (%s)", target, strings.TrimPrefix(se.Error(), se.Op+": "))
		default:
			return config.Usagef(flag, "check that the URL points at RGW",
				"unexpected answer from %s (%s)", target, strings.TrimPrefix(se.Error(), se.Op+": "))
		}
	}
	switch backend.Kind(err) {
	case "connection-refused":
		return config.Usagef(flag, "is RGW running and listening on that address and port?", "cannot connect to %s: connection refused", target)
	case "timeout":
		return config.Usagef(flag, "check the address, firewall and RGW health, or raise --timeout", "no answer from %s within %v", target, min(cfg.Timeout, checkTimeout))
	case "dns":
		return config.Usagef(flag, "check the host name", "cannot resolve the host of %s", target)
	}
	return config.Usagef(flag, "check that the URL points at a running RGW", "cannot talk to %s: %v", target, err)
}

const checkTimeout = 15 * time.Second

// syncWriter serializes writes: the signal handler and the progress lines
// write to stderr from their own goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func run(args []string, env Env) int {
	env.Stderr = &syncWriter{w: env.Stderr}
	// The client's own garbage is small and short-lived; collecting less
	// often leaves more CPU to RGW and the OSDs on the same host.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	cfg, err := config.Parse(args, env.Getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(env.Stdout)
		return ExitOK
	}
	if err != nil {
		return usageExit(env, err)
	}
	if cfg.Hold && env.Release == nil {
		return usageExit(env, config.Usagef("--hold", "drop --hold: this build cannot be released", "no release signal is caught"))
	}
	if cfg.Output != "-" {
		if st, err := os.Stat(filepath.Dir(cfg.Output)); err != nil || !st.IsDir() {
			return usageExit(env, config.Usagef("--output", "give a file in an existing directory", "cannot write %q", cfg.Output))
		}
	}
	be, err := newBackend(cfg)
	if err != nil {
		return usageExit(env, config.Usagef("--endpoint", "give a URL like http://127.0.0.1:8000", "%v", err))
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var wlp atomic.Pointer[workload.Common]
	go func() {
		n := 0
		for range env.Signals {
			n++
			if n == 1 {
				fmt.Fprintf(env.Stderr, "%s: interrupted: stopping load and cleaning up (signal again to exit at once)\n", prog)
				cancel(workload.ErrInterrupted)
				continue
			}
			left := "nothing created yet"
			if wl := wlp.Load(); wl != nil {
				left = wl.Leftover()
			}
			fmt.Fprintf(env.Stderr, "%s: second signal: exiting without cleanup; %s\n", prog, left)
			env.Exit(ExitInterrupted)
			return
		}
	}()

	cctx, ccancel := context.WithTimeout(ctx, min(cfg.Timeout, checkTimeout))
	err = be.Check(cctx)
	ccancel()
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	if err != nil {
		return usageExit(env, checkError(cfg, err))
	}

	wl := workload.New(cfg, be, env.Stderr)
	if cfg.Hold {
		wl.Hold = func(ctx context.Context) bool { return hold(ctx, env) }
	}
	wlp.Store(wl)
	if err := wl.Prepare(ctx); err != nil {
		info := wl.Cleanup(context.Background())
		if ctx.Err() != nil {
			return ExitInterrupted
		}
		var ue *config.UsageError
		if errors.As(err, &ue) {
			return usageExit(env, err)
		}
		fmt.Fprintf(env.Stderr, "%s: setup failed: %s\n", prog, oneLine(err.Error()))
		reportLeft(env, info)
		return ExitFailed
	}

	out, runErr := wl.Run(ctx)
	var info workload.CleanupInfo
	if cfg.Keep {
		info = wl.KeepInfo()
	} else {
		// Cleanup must not be cut short by the first signal; a second one exits.
		info = wl.Cleanup(context.Background())
	}

	doc := Document{
		Schema: Schema, Version: version.Get(), Protocol: cfg.Protocol, Endpoint: cfg.Endpoint,
		Workload: cfg.Workload, Params: paramsOf(cfg),
		StartUnixNs: out.StartUnixNs, DurationS: out.DurationS,
		Operations: out.Summary.Operations, Total: out.Summary.Total, Timeseries: out.Summary.Timeseries,
		WarmupOps: out.WarmupOps, UnsentOps: out.UnsentOps, Prefill: out.Prefill, Cleanup: info,
		Histogram: HistogramInfo{Encoding: "HdrHistogram V2 compressed, base64", Unit: "ns",
			LowestNs: stats.HistLowestNs, HighestNs: stats.HistHighestNs, SigFigs: stats.HistSigFigs},
	}
	if doc.Timeseries == nil {
		doc.Timeseries = []stats.Point{}
	}
	code := ExitOK
	if out.StoppedReason != "" {
		r := out.StoppedReason
		doc.StoppedReason = &r
		switch r {
		case workload.StopErrorRatio:
			fmt.Fprintf(env.Stderr, "%s: stopped: error ratio above %v (%d errors of %d ops measured; by kind: %s)\n",
				prog, cfg.MaxErrorRatio, doc.Total.Errors, doc.Total.Ops+doc.Total.Errors, kinds(doc.Total.ErrorsByKind, out.Prefill))
			code = ExitFailed
		case workload.StopInterrupted:
			code = ExitInterrupted
		case workload.StopKeysExhausted:
			fmt.Fprintf(env.Stderr, "%s: note: every object of the key space was deleted before the end; raise --objects for a longer delete run\n", prog)
		}
	}
	if out.UnsentOps > 0 {
		fmt.Fprintf(env.Stderr, "%s: warning: the server did not keep up with --rate %v: %d scheduled ops were never sent "+
			"(unsent_ops); the latency figures cover only the ops sent\n", prog, cfg.Rate, out.UnsentOps)
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", prog, oneLine(runErr.Error()))
		code = ExitFailed
	}
	if reportLeft(env, info) && code == ExitOK {
		code = ExitFailed
	}
	if err := writeDocument(cfg.Output, env.Stdout, &doc); err != nil {
		fmt.Fprintf(env.Stderr, "%s: writing result: %s\n", prog, oneLine(err.Error()))
		return ExitFailed
	}
	return code
}

func kinds(m map[string]int64, pf *workload.PrefillInfo) string {
	if len(m) == 0 {
		if pf != nil && pf.Errors > 0 {
			return fmt.Sprintf("%d prefill errors", pf.Errors)
		}
		return "none measured"
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// reportLeft prints what cleanup could not remove; true if anything is left.
func reportLeft(env Env, info workload.CleanupInfo) bool {
	if info.Kept || (info.ObjectsLeft == 0 && len(info.BucketsLeft) == 0) {
		return false
	}
	fmt.Fprintf(env.Stderr, "%s: cleanup incomplete: %d object(s) and bucket(s) %v left (%s)\n",
		prog, info.ObjectsLeft, info.BucketsLeft, strings.Join(info.Errors, "; "))
	return true
}

func writeDocument(path string, stdout io.Writer, doc *Document) error {
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Signals to treat as interrupts.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}
