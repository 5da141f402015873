package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/cephbench/cephbench/loadgen/internal/at"
)

// runAt is `cephbench-loadgen at`: the start barrier of a fan-out (package at).
// Besides main's SIGINT/SIGTERM it takes SIGHUP (a session's hang-up stops CMD
// too) and SIGPIPE (a broken stdout must not kill `at` before it stops CMD).
func runAt(args []string, env Env) int {
	extra := make(chan os.Signal, 4)
	signal.Notify(extra, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(extra)
	sigs := make(chan os.Signal, 4)
	go func() {
		for {
			select {
			case s := <-env.Signals:
				sigs <- s
			case s := <-extra:
				sigs <- s
			}
		}
	}()
	return at.Main(args, at.Env{Stdin: os.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Signals: sigs})
}
