// Command cephbench-loadgen is an S3 and Swift load generator for Ceph RGW.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"

	"github.com/cephbench/cephbench/loadgen/internal/cli"
)

func main() {
	// CEPHBENCH_LOADGEN_CPUPROFILE=file writes a CPU profile of the whole run
	// (for making the client cheaper; see docs/loadgen.md).
	if path := os.Getenv("CEPHBENCH_LOADGEN_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, cli.Signals...)
	// caught from the start: a release that came early must not kill the process (SIGUSR1's default)
	release := make(chan os.Signal, 1)
	signal.Notify(release, cli.ReleaseSignal)
	code := cli.Main(os.Args[1:], cli.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Signals: sigs, Exit: os.Exit, Release: release,
	})
	pprof.StopCPUProfile()
	// CEPHBENCH_LOADGEN_MEMSTATS=1 prints the run's heap allocations on
	// stderr (benchmarks/bench_loadgen.py divides them by the requests sent).
	if os.Getenv("CEPHBENCH_LOADGEN_MEMSTATS") != "" {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "cephbench-loadgen: memstats mallocs=%d alloc_bytes=%d gc_cycles=%d\n", ms.Mallocs, ms.TotalAlloc, ms.NumGC)
	}
	os.Exit(code)
}
