//go:build !linux

package http1

import "net"

// rawIO is Linux only (raw_linux.go); elsewhere connections use net.Conn's
// Read and Write.
type rawIO struct{}

func (r *rawIO) init(net.Conn) bool         { return false }
func (r *rawIO) Read(p []byte) (int, error) { panic("http1: rawIO outside Linux") }
func (r *rawIO) Write(b []byte) error       { panic("http1: rawIO outside Linux") }
