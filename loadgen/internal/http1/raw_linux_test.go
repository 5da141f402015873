//go:build linux

package http1

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
)

// tcpPair returns a connected client and server connection.
func tcpPair(t *testing.T) (*net.TCPConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s
}

// A write larger than the socket buffer waits for room and sends every
// byte in order; reads return what came, then io.EOF when the peer closes.
func TestRawIOWriteWaitsAndReadSeesEOF(t *testing.T) {
	c, s := tcpPair(t)
	if err := c.SetWriteBuffer(4096); err != nil {
		t.Fatal(err)
	}
	var r rawIO
	if !r.init(c) {
		t.Fatal("rawIO refused a TCP connection")
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	got := make(chan []byte)
	go func() {
		time.Sleep(50 * time.Millisecond) // let the client's buffer fill
		b, _ := io.ReadAll(io.LimitReader(s, int64(len(want))))
		s.Write([]byte("answer"))
		s.Close()
		got <- b
	}()
	if err := r.Write(want); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("server got %d bytes, not the %d written in order", len(b), len(want))
	}
	b, err := io.ReadAll(&r)
	if err != nil || string(b) != "answer" {
		t.Fatalf("read %q, %v; want \"answer\" then EOF", b, err)
	}
}

// Deadlines and resets give the errors net.Conn gives, so that error kinds
// stay what they were.
func TestRawIOErrorKinds(t *testing.T) {
	c, _ := tcpPair(t)
	var r rawIO
	r.init(c)
	c.SetDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := r.Read(make([]byte, 10)); backend.Kind(err) != "timeout" {
		t.Fatalf("silent peer: %v (kind %q), want a timeout", err, backend.Kind(err))
	}

	c, s := tcpPair(t)
	r.init(c)
	s.(*net.TCPConn).SetLinger(0) // close with RST
	s.Close()
	time.Sleep(20 * time.Millisecond)
	_, err := r.Read(make([]byte, 10))
	if k := backend.Kind(err); k != "connection-reset" {
		t.Fatalf("reset peer: %v (kind %q), want connection-reset", err, k)
	}
	if err := r.Write([]byte("x")); err == nil {
		t.Fatal("write after a reset succeeded")
	}
}
