package backend

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
)

// StatusError is an HTTP error answer. Code is the S3 error code when known
// (e.g. "SlowDown"), empty otherwise.
type StatusError struct {
	Op     string
	Status int
	Code   string
}

func (e *StatusError) Error() string {
	s := e.Op + ": HTTP " + strconv.Itoa(e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	return s
}

// IsNotFound reports an HTTP 404.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == 404
}

// Kind classifies an error for errors_by_kind: "503 SlowDown", "404",
// "timeout", "connection-refused", "connection-reset", "eof", "other". nil
// gives "".
func Kind(err error) string {
	if err == nil {
		return ""
	}
	var se *StatusError
	if errors.As(err, &se) {
		if se.Code != "" {
			return strconv.Itoa(se.Status) + " " + se.Code
		}
		return strconv.Itoa(se.Status)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection-refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection-reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken-pipe"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "dns"
	}
	return "other"
}
