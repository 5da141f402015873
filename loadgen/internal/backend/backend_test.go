package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestPayloadSizesAndRepeats(t *testing.T) {
	p := NewPayload(1)
	for _, size := range []int64{0, 1, 4096, BlockSize, BlockSize + 1, 3*BlockSize + 17} {
		r := p.Reader(size)
		b, err := io.ReadAll(r)
		if err != nil || int64(len(b)) != size {
			t.Fatalf("size %d: read %d, %v", size, len(b), err)
		}
		if size >= BlockSize+100 && !bytes.Equal(b[BlockSize:BlockSize+100], b[:100]) {
			t.Fatalf("size %d: body does not repeat the block", size)
		}
		// Seek back and read again (HTTP retries and minio-go seek bodies).
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		again, _ := io.ReadAll(r)
		if !bytes.Equal(again, b) {
			t.Fatalf("size %d: differs after seek", size)
		}
	}
	if bytes.Equal(NewPayload(1).block[:64], NewPayload(2).block[:64]) {
		t.Fatal("seed does not change the payload")
	}
	if bytes.Count(p.block[:4096], []byte{0}) > 100 {
		t.Fatal("payload is not random")
	}
}

func TestKinds(t *testing.T) {
	cases := map[error]string{
		nil: "",
		&StatusError{Op: "PutObject", Status: 503, Code: "SlowDown"}: "503 SlowDown",
		fmt.Errorf("wrapped: %w", &StatusError{Status: 404}):         "404",
		context.DeadlineExceeded:                                     "timeout",
		&net.OpError{Op: "dial", Err: &net.AddrError{}}:              "other",
		fmt.Errorf("dial: %w", syscall.ECONNREFUSED):                 "connection-refused",
		fmt.Errorf("read: %w", syscall.ECONNRESET):                   "connection-reset",
		io.ErrUnexpectedEOF:                                          "eof",
		&net.DNSError{Err: "no such host", Name: "x"}:                "dns",
		errors.New("something else"):                                 "other",
	}
	for err, want := range cases {
		if got := Kind(err); got != want {
			t.Errorf("Kind(%v) = %q, want %q", err, got, want)
		}
	}
	if !IsNotFound(fmt.Errorf("x: %w", &StatusError{Status: 404})) || IsNotFound(&StatusError{Status: 403}) {
		t.Fatal("IsNotFound")
	}
}

// A payload made for small objects gives the same bytes as the full one,
// and still serves a larger body.
func TestPayloadForSmallObjects(t *testing.T) {
	full, small := NewPayload(7), NewPayloadFor(7, 4096)
	if len(small.block) != 4096 {
		t.Fatalf("block of %d bytes for 4 KiB objects", len(small.block))
	}
	for _, size := range []int64{1, 4095, 4096, 4097, BlockSize + 5} {
		a, _ := io.ReadAll(full.Reader(size))
		b, _ := io.ReadAll(small.Reader(size))
		if !bytes.Equal(a, b) || int64(len(b)) != size {
			t.Fatalf("size %d: %d bytes, differ from the full payload's", size, len(b))
		}
	}
}
