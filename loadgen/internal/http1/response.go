package http1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
	"strconv"
	"time"
)

// Response is the answer in flight on a Conn; it is valid until Release.
type Response struct {
	Status int
	// HeadersAt is when the status line and headers had been read.
	HeadersAt time.Time
	// ContentLength is the body length, -1 when unknown (chunked, or until
	// the connection closes).
	ContentLength int64

	br         *bufio.Reader
	remaining  int64     // body bytes still to read; -1: until close
	chunked    io.Reader // set while a chunked body is unread
	closeAfter bool      // the connection cannot carry another request
}

// ErrMalformed is wrapped by errors about answers that are not HTTP/1.x.
var ErrMalformed = errors.New("malformed HTTP answer")

func malformed(what string, line []byte) error {
	if len(line) > 64 {
		line = line[:64]
	}
	return fmt.Errorf("%w: %s %q", ErrMalformed, what, line)
}

// line reads one header line without its CRLF; first says that it is the
// first read of the answer (an EOF there means no answer came).
func line(br *bufio.Reader, first bool) ([]byte, error) {
	l, err := br.ReadSlice('\n')
	if err != nil {
		if first && len(l) == 0 && errors.Is(err, io.EOF) {
			return nil, errNoAnswer
		}
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, malformed("header line longer than 64 KiB", l)
		}
		return nil, err
	}
	return bytes.TrimRight(l, "\r\n"), nil
}

// read reads the status line and headers (skipping 1xx answers).
func (r *Response) read(br *bufio.Reader, headOnly bool) error {
	*r = Response{br: br}
	first := true
	for {
		l, err := line(br, first)
		if err != nil {
			return err
		}
		first = false
		// "HTTP/1.1 200 OK"
		if len(l) < 12 || !bytes.HasPrefix(l, []byte("HTTP/1.")) || l[8] != ' ' || (len(l) > 12 && l[12] != ' ') {
			return malformed("status line", l)
		}
		status, err := strconv.Atoi(string(l[9:12]))
		if err != nil || status < 100 {
			return malformed("status line", l)
		}
		http10 := l[7] == '0'
		r.Status = status
		length, chunked, keepAlive, closing := int64(-1), false, false, false
		for {
			h, err := line(br, false)
			if err != nil {
				return err
			}
			if len(h) == 0 {
				break
			}
			name, value, ok := bytes.Cut(h, []byte{':'})
			if !ok {
				return malformed("header line", h)
			}
			value = bytes.TrimSpace(value)
			switch {
			case equalFold(name, "Content-Length"):
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || n < 0 {
					return malformed("Content-Length", h)
				}
				length = n
			case equalFold(name, "Transfer-Encoding"):
				chunked = bytes.EqualFold(value, []byte("chunked"))
				if !chunked {
					return malformed("Transfer-Encoding", h)
				}
			case equalFold(name, "Connection"):
				closing = closing || containsToken(value, "close")
				keepAlive = keepAlive || containsToken(value, "keep-alive")
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // 100 Continue and friends: the real answer follows
		}
		r.HeadersAt = time.Now()
		r.closeAfter = closing || (http10 && !keepAlive)
		switch {
		case headOnly || status == 204 || status == 304 || status == 101:
			r.ContentLength, r.remaining = max(length, 0), 0
		case chunked:
			r.ContentLength, r.remaining = -1, 0
			r.chunked = httputil.NewChunkedReader(br)
		case length >= 0:
			r.ContentLength, r.remaining = length, length
		default:
			r.ContentLength, r.remaining, r.closeAfter = -1, -1, true
		}
		if headOnly {
			r.ContentLength = max(length, 0)
		}
		return nil
	}
}

// equalFold compares an ASCII header name.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c, d := b[i], s[i]
		if c|0x20 != d|0x20 {
			return false
		}
	}
	return true
}

func containsToken(v []byte, tok string) bool {
	for part := range bytes.SplitSeq(v, []byte{','}) {
		if equalFold(bytes.TrimSpace(part), tok) {
			return true
		}
	}
	return false
}

// Discard reads the body to its end and returns its length.
func (r *Response) Discard() (int64, error) {
	return r.copyTo(io.Discard, -1)
}

// ReadAll returns up to limit bytes of the body and discards the rest.
func (r *Response) ReadAll(limit int64) ([]byte, error) {
	var b bytes.Buffer
	if _, err := r.copyTo(&b, limit); err != nil {
		return b.Bytes(), err
	}
	return b.Bytes(), nil
}

// copyTo copies the body to w (at most limit bytes when limit >= 0, the
// rest discarded) and returns the body's length.
func (r *Response) copyTo(w io.Writer, limit int64) (int64, error) {
	var n int64
	switch {
	case r.chunked != nil:
		if limit >= 0 {
			k, err := io.Copy(w, io.LimitReader(r.chunked, limit))
			if n += k; err != nil {
				return n, err
			}
		}
		k, err := io.Copy(io.Discard, r.chunked)
		if n += k; err != nil {
			return n, err
		}
		r.chunked = nil
		return n, r.trailers()
	case r.remaining < 0: // until the connection closes
		if limit >= 0 {
			k, err := io.Copy(w, io.LimitReader(r.br, limit))
			if n += k; err != nil {
				return n, err
			}
		}
		k, err := discard(r.br, -1)
		r.remaining = 0
		return n + k, err
	}
	if limit >= 0 {
		k, err := io.Copy(w, io.LimitReader(r.br, min(limit, r.remaining)))
		n += k
		r.remaining -= k
		if err != nil {
			return n, err
		}
	}
	k, err := discard(r.br, r.remaining)
	r.remaining -= k
	return n + k, err
}

// discard skips n bytes of br (all until EOF when n < 0) without copying
// them out of its buffer.
func discard(br *bufio.Reader, n int64) (int64, error) {
	var done int64
	for n < 0 || done < n {
		want := br.Buffered()
		if want == 0 {
			if _, err := br.Peek(1); err != nil {
				if n < 0 && errors.Is(err, io.EOF) {
					return done, nil
				}
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return done, err
			}
			continue
		}
		if n >= 0 {
			want = int(min(int64(want), n-done))
		}
		d, _ := br.Discard(want)
		done += int64(d)
	}
	return done, nil
}

// trailers reads the lines after a chunked body's last chunk.
func (r *Response) trailers() error {
	for {
		l, err := line(r.br, false)
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return nil
		}
	}
}
