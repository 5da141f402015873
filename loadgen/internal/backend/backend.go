// Package backend defines what the load generator needs from an object store
// and what S3 and Swift share: the HTTP transport, error kinds and payloads.
package backend

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"time"
)

// Client is one protocol's view of RGW. Implementations are safe for
// concurrent use. Errors for HTTP failures are *StatusError. The object
// calls (Put, Get, Stat, Delete) are bounded by the client's own timeout
// (or ctx's deadline, if earlier) and abandoned when ctx is cancelled.
type Client interface {
	// Check makes one cheap authenticated call (S3 ListBuckets, Swift auth).
	Check(ctx context.Context) error
	BucketExists(ctx context.Context, bucket string) (bool, error)
	// CreateBucket returns created=false when the bucket already existed.
	CreateBucket(ctx context.Context, bucket string) (created bool, err error)
	DeleteBucket(ctx context.Context, bucket string) error
	Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64) error
	// Get reads the object (or length bytes at off when length > 0) and
	// discards it; firstByte is when the response headers arrived.
	Get(ctx context.Context, bucket, key string, off, length int64) (n int64, firstByte time.Time, err error)
	Stat(ctx context.Context, bucket, key string) error
	Delete(ctx context.Context, bucket, key string) error
	// List lists one page of at most max keys under prefix and returns how many came back.
	List(ctx context.Context, bucket, prefix string, max int) (int, error)
}

// NewTransport returns the HTTP transport shared by all workers: keep-alive,
// HTTP/1.1 only (no HTTP/2 negotiation), no compression, no proxy from the
// environment, and enough idle connections per host for every worker.
func NewTransport(concurrency int, timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   min(timeout, 10*time.Second),
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          concurrency + 64,
		MaxIdleConnsPerHost:   concurrency + 64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: 0,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		TLSNextProto:          map[string]func(string, *tls.Conn) http.RoundTripper{},
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
}

// Drain reads what is left of a response body and closes it, so that the
// connection goes back to the idle pool.
func Drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// ReadBody discards a GET response body, returning its length and the
// time the response headers had arrived (just before the call).
func ReadBody(resp *http.Response) (int64, time.Time, error) {
	first := time.Now()
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return n, first, err
}
