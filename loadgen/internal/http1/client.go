// Package http1 is the HTTP/1.1 client of the load's object requests (PUT,
// GET, HEAD, DELETE of one object). net/http's Transport costs more CPU per
// small request than the kernel does: two goroutines per connection and
// channel handoffs between them, a Request, a Header map and a Response per
// request. Here the worker goroutine writes the request and reads the answer
// on a pooled keep-alive connection itself, into buffers the connection
// keeps, with no per-request allocation. On Linux, plain TCP connections
// are read and written with raw system calls (raw_linux.go), which do not
// wake the runtime's monitor thread when the client was idle waiting for a
// slow server. Bucket-level calls stay on net/http.
//
// It speaks what RGW speaks: responses with Content-Length, chunked
// responses (with trailers), bodies delimited by the connection's close,
// HEAD/204/304 without a body, 1xx answers skipped, Connection: close and
// HTTP/1.0 answers honoured. A request is bounded by the client's timeout
// (or the context's deadline, if earlier) and abandoned when its context is
// cancelled. Like net/http, a request that fails on a reused connection
// before any byte of an answer arrived (the server had closed it while it
// was idle) is sent once more on a new connection; nothing else is retried.
package http1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// idleTimeout drops connections unused this long rather than risk that
// the server closed them (RGW's beast frontend closes idle ones after 65 s).
const idleTimeout = 30 * time.Second

// maxIdle bounds the pool; more connections than this are closed after use.
const maxIdle = 4096

// smallBody: bodies up to this size are copied behind the head so that a
// request goes out in one write.
const smallBody = 64 << 10

// Client sends requests to one scheme://host:port. Safe for concurrent use.
type Client struct {
	addr    string // host:port to dial
	host    string // Host header, as in the URL
	tls     *tls.Config
	timeout time.Duration
	dialer  net.Dialer

	mu   sync.Mutex
	idle []*Conn // LIFO: the warmest connection first
}

// New returns a client for the scheme and host of base (its path is the
// caller's business); every request is bounded by timeout.
func New(base string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errors.New("http1: need an http:// or https:// URL with a host, got " + base)
	}
	c := &Client{host: u.Host, addr: u.Host, timeout: timeout,
		dialer: net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		c.addr = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Scheme == "https" {
		c.tls = &tls.Config{ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}}
	}
	return c, nil
}

// Host is the Host header value (what SigV4 signs as "host").
func (c *Client) Host() string { return c.host }

// Get takes a connection from the pool (or a new one, dialled when the
// first request is sent). Give it back with Release.
func (c *Client) Get() *Conn {
	c.mu.Lock()
	for n := len(c.idle); n > 0; n = len(c.idle) {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn
	}
	c.mu.Unlock()
	return &Conn{cl: c, head: make([]byte, 0, 1024)}
}

// CloseIdle closes every pooled connection.
func (c *Client) CloseIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cn := range idle {
		cn.closeNet()
		cn.unwatch()
	}
}

// Conn is one connection and the buffers of the request and answer in
// flight on it. Only one goroutine uses a Conn at a time.
type Conn struct {
	cl       *Client
	nc       net.Conn // nil until dialled, and after a failure
	br       *bufio.Reader
	head     []byte // request being sent: head, then a small body
	resp     Response
	lastUsed time.Time
	rio      rawIO // plain TCP on Linux: raw system calls (raw_linux.go)
	raw      bool  // rio serves this connection

	// Cancellation: an AfterFunc on the context last watched aborts the
	// request in flight, if it runs under that context, by setting a past
	// deadline. mu orders it against the start and end of a request.
	mu      sync.Mutex
	watched context.Context // the context the AfterFunc is on
	stop    func() bool
	cur     context.Context // the request in flight's; nil when idle
	aborted bool
}

// Buf returns the connection's request buffer, emptied, for the caller to
// append a request head to (AppendRequestLine, AppendHeader, AppendEnd).
func (cn *Conn) Buf() []byte { return cn.head[:0] }

// Release gives the connection back to the pool. The answer must have been
// read to the end (Discard, ReadAll); otherwise the network connection is
// closed, since its state is unknown.
func (cn *Conn) Release() {
	// Bytes beyond the answer (a server that sent a body with a HEAD answer)
	// would be taken for the next one.
	if cn.resp.remaining != 0 || cn.resp.chunked != nil || cn.resp.closeAfter || (cn.br != nil && cn.br.Buffered() > 0) {
		cn.closeNet()
	}
	cn.resp = Response{}
	if cap(cn.head) > 4*smallBody {
		cn.head = make([]byte, 0, 1024) // do not pin a large body's copy
	}
	c := cn.cl
	c.mu.Lock()
	if len(c.idle) < maxIdle {
		c.idle = append(c.idle, cn)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	cn.closeNet()
	cn.unwatch()
}

func (cn *Conn) closeNet() {
	if cn.nc != nil {
		cn.nc.Close()
		cn.nc = nil
		cn.br.Reset(nil) // drops what was buffered; the buffer serves the next connection
	}
}

func (cn *Conn) unwatch() {
	if cn.stop != nil {
		cn.stop()
		cn.stop, cn.watched = nil, nil
	}
}

var aLongTimeAgo = time.Unix(1, 0)

// begin marks the request in flight, arranges for ctx to abort it and sets
// its deadline. It fails if ctx is already done.
func (cn *Conn) begin(ctx context.Context, now time.Time) (time.Time, error) {
	if done := ctx.Done(); done != nil && cn.watched != ctx {
		cn.unwatch()
		cn.watched = ctx
		cn.stop = context.AfterFunc(ctx, func() { cn.abort(ctx) })
	}
	if cn.nc != nil && now.Sub(cn.lastUsed) > idleTimeout {
		cn.closeNet()
	}
	deadline := now.Add(cn.cl.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return deadline, err
	}
	cn.cur, cn.aborted = ctx, false
	if cn.nc != nil {
		if err := cn.nc.SetDeadline(deadline); err != nil {
			cn.closeNet()
		}
	}
	return deadline, nil
}

func (cn *Conn) abort(ctx context.Context) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.cur == ctx {
		cn.aborted = true
		if cn.nc != nil {
			_ = cn.nc.SetDeadline(aLongTimeAgo)
		}
	}
}

// end marks the request finished; err is what it failed with, replaced by
// the context's error when the context aborted it.
func (cn *Conn) end(ctx context.Context, err error) error {
	cn.mu.Lock()
	cn.cur = nil
	aborted := cn.aborted
	cn.mu.Unlock()
	if aborted {
		cn.closeNet()
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
	}
	if err != nil {
		cn.closeNet()
	}
	return err
}

func (cn *Conn) dial(ctx context.Context, deadline time.Time) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.aborted {
		return context.Canceled // replaced by ctx's error in end
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	nc, err := cn.cl.dialer.DialContext(dctx, "tcp", cn.cl.addr)
	if err != nil {
		return err
	}
	if cn.cl.tls != nil {
		tc := tls.Client(nc, cn.cl.tls)
		if err := tc.HandshakeContext(dctx); err != nil {
			nc.Close()
			return err
		}
		nc = tc
	}
	if err := nc.SetDeadline(deadline); err != nil {
		nc.Close()
		return err
	}
	cn.nc = nc
	var src io.Reader = nc
	if cn.raw = cn.cl.tls == nil && cn.rio.init(nc); cn.raw {
		src = &cn.rio
	}
	if cn.br == nil {
		cn.br = bufio.NewReaderSize(src, 64<<10)
	} else {
		cn.br.Reset(src)
	}
	return nil
}

// Send sends the request head (from Buf, ended with AppendEnd) and size
// bytes of body, then reads the answer's status line and headers. The body
// of the answer is read with the Response's methods before Release.
// headOnly says the request is a HEAD (its answer has no body whatever
// Content-Length says). now is the time of sending, from which the timeout
// counts (the caller has read the clock already to sign the request).
func (cn *Conn) Send(ctx context.Context, now time.Time, head []byte, body io.Reader, size int64, headOnly bool) (*Response, error) {
	cn.head = head
	deadline, err := cn.begin(ctx, now)
	if err != nil {
		return nil, err
	}
	n := len(head)
	inline := body != nil && size > 0 && size <= smallBody
	if inline {
		if cap(cn.head) < n+int(size) {
			cn.head = append(cn.head, make([]byte, size)...)
		}
		cn.head = cn.head[:n+int(size)] // overwritten next, so not cleared
		if _, err := io.ReadFull(body, cn.head[n:]); err != nil {
			return nil, cn.end(ctx, err)
		}
	}
	for attempt := 0; ; attempt++ {
		fresh := cn.nc == nil // else pooled: it has carried a whole exchange, and the server may have closed it since
		if fresh {
			if err := cn.dial(ctx, deadline); err != nil {
				return nil, cn.end(ctx, err)
			}
		}
		err := cn.exchange(body, size, inline, headOnly)
		if err == nil {
			cn.lastUsed = cn.resp.HeadersAt
			return &cn.resp, cn.end(ctx, nil)
		}
		if fresh || attempt > 0 || !staleConn(err) || !cn.rewind(body, inline) {
			return nil, cn.end(ctx, err)
		}
		// The server had closed the idle connection: send once more on a new one.
		cn.mu.Lock()
		cn.closeNet()
		cn.mu.Unlock()
	}
}

// staleConn reports the errors of a request that met a connection the
// server had already closed, before any byte of an answer came back.
func staleConn(err error) bool {
	return errors.Is(err, errNoAnswer) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// errNoAnswer is an io.EOF (error kind "eof") that says no byte came.
var errNoAnswer = fmt.Errorf("connection closed before any answer: %w", io.EOF)

func (cn *Conn) rewind(body io.Reader, inline bool) bool {
	if body == nil || inline {
		return true
	}
	s, ok := body.(io.Seeker)
	if !ok {
		return false
	}
	_, err := s.Seek(0, io.SeekStart)
	return err == nil
}

func (cn *Conn) exchange(body io.Reader, size int64, inline, headOnly bool) error {
	streamed := body != nil && size > 0 && !inline
	if cn.raw {
		if err := cn.rio.Write(cn.head); err != nil {
			return err
		}
	} else if _, err := cn.nc.Write(cn.head); err != nil {
		return err
	}
	if streamed {
		if n, err := io.Copy(cn.nc, io.LimitReader(body, size)); err != nil {
			return err
		} else if n != size {
			return io.ErrUnexpectedEOF
		}
	}
	return cn.resp.read(cn.br, headOnly)
}
