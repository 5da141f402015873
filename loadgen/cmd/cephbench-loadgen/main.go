// Command cephbench-loadgen is an S3 and Swift load generator for Ceph RGW.
package main

import (
	"os"
	"os/signal"

	"github.com/cephbench/cephbench/loadgen/internal/cli"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, cli.Signals...)
	os.Exit(cli.Main(os.Args[1:], cli.Env{
		Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Signals: sigs, Exit: os.Exit,
	}))
}
