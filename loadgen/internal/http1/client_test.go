package http1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
)

// send makes one request with c and returns status, body and error.
func send(t *testing.T, ctx context.Context, c *Client, method, target string, body []byte) (int, []byte, error) {
	t.Helper()
	cn := c.Get()
	defer cn.Release()
	h := c.AppendRequestLine(cn.Buf(), method, target)
	var r io.Reader
	if method == http.MethodPut || method == http.MethodPost {
		h = AppendContentLength(h, int64(len(body)))
		r = bytes.NewReader(body)
	}
	resp, err := cn.Send(ctx, time.Now(), AppendEnd(h), r, int64(len(body)), method == http.MethodHead)
	if err != nil {
		return 0, nil, err
	}
	b, err := resp.ReadAll(1 << 30)
	return resp.Status, b, err
}

func newClient(t *testing.T, url string, timeout time.Duration) *Client {
	t.Helper()
	c, err := New(url, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

// Against net/http's server: bodies by length and chunked (with trailers),
// HEAD and 204 without a body, keep-alive over one connection, and
// Connection: close honoured.
func TestAnswersFromNetHTTP(t *testing.T) {
	var conns atomic.Int64
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 000 bytes: past one read buffer
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/len":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			for i := range 3 {
				io.WriteString(w, strings.Repeat(strconv.Itoa(i), 1000))
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Sum", "3000")
		case "/big":
			w.Write(big)
		case "/nobody":
			w.WriteHeader(http.StatusNoContent)
		case "/head":
			w.Header().Set("Content-Length", "4096")
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "/put":
			b, _ := io.ReadAll(r.Body)
			if int64(len(b)) != r.ContentLength {
				w.WriteHeader(400)
			}
			io.WriteString(w, strconv.Itoa(len(b)))
		case "/missing":
			w.WriteHeader(404)
			io.WriteString(w, "<Error><Code>NoSuchKey</Code></Error>")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(t, srv.URL, 5*time.Second)
	ctx := context.Background()
	check := func(method, target string, body []byte, wantStatus int, want string) {
		t.Helper()
		st, b, err := send(t, ctx, c, method, target, body)
		if err != nil || st != wantStatus || string(b) != want {
			t.Fatalf("%s %s: status %d body %.40q err %v; want %d %.40q", method, target, st, b, err, wantStatus, want)
		}
	}
	for range 3 {
		check("GET", "/len", nil, 200, "hello")
		check("GET", "/chunked", nil, 200, strings.Repeat("0", 1000)+strings.Repeat("1", 1000)+strings.Repeat("2", 1000))
		check("GET", "/big", nil, 200, string(big))
		check("DELETE", "/nobody", nil, 204, "")
		check("HEAD", "/head", nil, 200, "")
		check("PUT", "/put", make([]byte, 4096), 200, "4096")
		check("PUT", "/put", big, 200, strconv.Itoa(len(big))) // past smallBody: head and body written apart
		check("PUT", "/put", nil, 200, "0")
		check("GET", "/missing", nil, 404, "<Error><Code>NoSuchKey</Code></Error>")
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for sequential requests, want 1 (keep-alive)", n)
	}
	check("GET", "/close", nil, 200, "bye")
	check("GET", "/len", nil, 200, "hello")
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2: the server's Connection: close must end the first", n)
	}
}

// rawServer answers each connection with handle, which reads the requests
// itself.
func rawServer(t *testing.T, handle func(c net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				handle(c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

// readRequest reads one request (head and Content-Length body).
func readRequest(br *bufio.Reader) error {
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err
}

// A server that closes each connection after one answer, without saying
// so: the next request on the pooled connection meets a closed connection
// and is sent again on a new one, for every method, without an error.
func TestStaleConnectionIsRedialled(t *testing.T) {
	url, conns := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if req.Method == http.MethodHead {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
		} else {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := newClient(t, url, 5*time.Second)
	for i, m := range []string{"GET", "PUT", "DELETE", "HEAD", "GET"} {
		time.Sleep(20 * time.Millisecond) // let the close arrive
		st, _, err := send(t, context.Background(), c, m, "/x", []byte("body"))
		if err != nil || st != 200 {
			t.Fatalf("request %d (%s): %d %v", i, m, st, err)
		}
	}
	if conns.Load() != 5 {
		t.Fatalf("%d connections, want 5", conns.Load())
	}
}

// Answers delimited by the connection's close, HTTP/1.0, 100 Continue
// before the answer, and broken answers, which come back as errors of the
// right kind.
func TestRawAnswers(t *testing.T) {
	cases := []struct {
		name, answer string
		status       int
		body, kind   string
	}{
		{"until-close", "HTTP/1.1 200 OK\r\n\r\nall of it", 200, "all of it", ""},
		{"http10", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", 200, "abc", ""},
		{"continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 201, "", ""},
		{"short-body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, "", "eof"},
		{"no-answer", "", 0, "", "eof"},
		{"cut-headers", "HTTP/1.1 200 OK\r\nContent-Le", 0, "", "eof"},
		{"not-http", "SSH-2.0-OpenSSH_9.2\r\n\r\n", 0, "", "other"},
		{"bad-length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 0, "", "other"},
		{"bad-chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, "", "other"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				if readRequest(br) == nil {
					io.WriteString(c, tc.answer)
				}
			})
			c := newClient(t, url, 5*time.Second)
			st, b, err := send(t, context.Background(), c, "GET", "/x", nil)
			if tc.kind != "" {
				if err == nil || backend.Kind(err) != tc.kind {
					t.Fatalf("err %v (kind %q), want kind %q", err, backend.Kind(err), tc.kind)
				}
				return
			}
			if err != nil || st != tc.status || string(b) != tc.body {
				t.Fatalf("%d %q %v", st, b, err)
			}
		})
	}
}

// A silent server runs into the timeout; a cancelled context abandons the
// request at once; a closed port is refused.
func TestTimeoutCancelAndRefused(t *testing.T) {
	url, _ := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		_ = readRequest(br)
		time.Sleep(3 * time.Second)
	})
	c := newClient(t, url, 200*time.Millisecond)
	start := time.Now()
	_, _, err := send(t, context.Background(), c, "GET", "/x", nil)
	if backend.Kind(err) != "timeout" || time.Since(start) > 2*time.Second {
		t.Fatalf("after %v: %v (kind %q), want a timeout after 200 ms", time.Since(start), err, backend.Kind(err))
	}

	c = newClient(t, url, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, _, err = send(t, ctx, c, "GET", "/x", nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Fatalf("after %v: %v, want context.Canceled soon after 100 ms", time.Since(start), err)
	}
	if _, _, err := send(t, ctx, c, "GET", "/x", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context still sent: %v", err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, _, err = send(t, context.Background(), newClient(t, "http://"+addr, time.Second), "GET", "/", nil)
	if backend.Kind(err) != "connection-refused" {
		t.Fatalf("%v (kind %q)", err, backend.Kind(err))
	}
}

// A context cancelled after its request ended (as context.WithTimeout's
// cancel does) must not break the pooled connection for the next request,
// nor abort a request under another context (cleanup after an interrupt).
func TestLaterCancelLeavesOtherRequestsAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, 5*time.Second)
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, _, err := send(t, ctx, c, "GET", "/", nil)
		cancel()
		if err != nil || st != 200 {
			t.Fatalf("%d %v", st, err)
		}
	}
	run, interrupt := context.WithCancel(context.Background())
	if st, _, err := send(t, run, c, "GET", "/", nil); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	time.AfterFunc(100*time.Millisecond, interrupt) // while the next request is in flight on the same connection
	if st, _, err := send(t, context.Background(), c, "GET", "/slow", nil); err != nil || st != 200 {
		t.Fatalf("a request under another context was aborted: %d %v", st, err)
	}
}
