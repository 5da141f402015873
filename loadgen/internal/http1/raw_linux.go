//go:build linux

package http1

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a plain TCP connection with raw system calls
// (syscall.RawSyscall), waiting through the runtime's poller
// (syscall.RawConn) only when the socket is not ready. The socket is
// non-blocking, so no call can hold the thread.
//
// Why: a system call made the usual way (net.Conn's Read and Write) enters
// and leaves the scheduler's syscall state, and the first one after the
// process was idle wakes the runtime's monitor thread (sysmon), which then
// polls every 20 µs until the process is idle again. Against a real RGW,
// whose answers take a millisecond or more, the client is idle between
// most requests: with one request in flight, strace counted three
// nanosleeps and two futex calls a request beside its one write and two
// reads, and perf put a quarter of the client's CPU in sysmon. Raw calls
// do not wake it.
type rawIO struct {
	rc      syscall.RawConn
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool

	p     []byte // to read into, or still to write
	n     int
	errno syscall.Errno
}

// init prepares r for nc; false when nc is not a plain TCP connection.
func (r *rawIO) init(nc net.Conn) bool {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	if r.readFn == nil { // method values made once, not per call
		r.readFn, r.writeFn = r.readCB, r.writeCB
	}
	r.rc, r.p = rc, nil
	return true
}

func (r *rawIO) readCB(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait for readability
		}
		r.n, r.errno = int(n), e
		return true
	}
}

func (r *rawIO) writeCB(fd uintptr) bool {
	for len(r.p) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.p = r.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // wait for room in the socket buffer
		default:
			r.errno = e
			return true
		}
	}
	return true
}

// Read is net.Conn's Read: the errors are *net.OpError around the errno or
// the poller's error (a deadline gives os.ErrDeadlineExceeded), io.EOF
// when the peer closed.
func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.readFn)
	r.p = nil
	switch {
	case err != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
	case r.errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", r.errno)}
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// Write writes all of b, as net.Conn's Write does.
func (r *rawIO) Write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	r.p, r.errno = b, 0
	err := r.rc.Write(r.writeFn)
	r.p = nil
	switch {
	case err != nil:
		return &net.OpError{Op: "write", Net: "tcp", Err: err}
	case r.errno != 0:
		return &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", r.errno)}
	}
	return nil
}
