package s3

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/http1"
)

// The object requests of the load (PUT, GET, HEAD, DELETE) go over our own
// HTTP/1.1 client (package http1) with heads built and signed here, in the
// same wire format as minio-go: path-style URL, UNSIGNED-PAYLOAD, SigV4
// header. Through minio-go and net/http they cost about twice the CPU per
// small object: minio-go's body readers made net/http write head and body
// separately and it runs regular expressions per request; net/http adds two
// goroutines per connection and a Request, Header map and Response per
// request. Bucket-level calls still go through minio-go.

const userAgent = "cephbench-loadgen"

// Signed header sets of the object requests (sorted lower-case names).
const (
	signedPut   = "content-type;host;x-amz-content-sha256;x-amz-date"
	signedPlain = "host;x-amz-content-sha256;x-amz-date"
	signedRange = "host;range;x-amz-content-sha256;x-amz-date"
	octetStream = "application/octet-stream"
)

// objectHead appends the signed head of an object request at time t to
// dst. size is the body length of a PUT; rng a Range value or "".
func (c *Client) objectHead(dst []byte, method, bucket, key, rng string, size int64, t time.Time) []byte {
	date := c.date.format(t)
	dst = append(dst, method...)
	dst = append(dst, ' ')
	p0 := len(dst)
	dst = append(dst, '/')
	dst = append(dst, bucket...)
	dst = append(dst, '/')
	dst = append(dst, key...)
	path := dst[p0:len(dst):len(dst)]
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.h1.Host()...)
	dst = append(dst, "\r\nUser-Agent: "+userAgent+"\r\n"...)

	var hs [5]sigHeader
	n, signed := 0, signedPlain
	put := method == "PUT"
	if put {
		dst = http1.AppendContentLength(dst, size)
		dst = http1.AppendHeader(dst, "Content-Type", octetStream)
		hs[n], n, signed = sigHeader{"content-type", octetStream}, n+1, signedPut
	}
	hs[n], n = sigHeader{"host", c.h1.Host()}, n+1
	if rng != "" {
		dst = http1.AppendHeader(dst, "Range", rng)
		hs[n], n, signed = sigHeader{"range", rng}, n+1, signedRange
	}
	dst = http1.AppendHeader(dst, "X-Amz-Content-Sha256", unsignedPayload)
	dst = http1.AppendHeader(dst, "X-Amz-Date", date)
	hs[n], hs[n+1], n = sigHeader{"x-amz-content-sha256", unsignedPayload}, sigHeader{"x-amz-date", date}, n+2
	dst = c.sig.appendAuthorization(dst, method, path, hs[:n], signed, date)
	return http1.AppendEnd(dst)
}

// object sends one object request; on a 2xx answer it returns the body's
// length (read to the end) and when the headers arrived. Any other answer
// is a *backend.StatusError with the S3 error code when the body has one.
func (c *Client) object(ctx context.Context, op, method, bucket, key, rng string, body io.Reader, size int64) (int64, time.Time, error) {
	cn := c.h1.Get()
	defer cn.Release()
	now := time.Now()
	head := c.objectHead(cn.Buf(), method, bucket, key, rng, size, now)
	resp, err := cn.Send(ctx, now, head, body, size, method == "HEAD")
	if err != nil {
		return 0, time.Time{}, err
	}
	if resp.Status/100 != 2 {
		b, _ := resp.ReadAll(16 << 10)
		return 0, time.Time{}, &backend.StatusError{Op: op, Status: resp.Status, Code: errorCode(b)}
	}
	n, err := resp.Discard()
	return n, resp.HeadersAt, err
}

func errorCode(body []byte) string {
	i := bytes.Index(body, []byte("<Code>"))
	if i < 0 {
		return ""
	}
	rest := body[i+len("<Code>"):]
	j := bytes.Index(rest, []byte("</Code>"))
	if j < 0 || j > 64 {
		return ""
	}
	return string(rest[:j])
}

// Put uploads body as one object (a single PUT of any size up to
// PartSize; larger objects go through minio-go's multipart upload).
func (c *Client) Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64) error {
	if size > PartSize {
		return c.putMultipart(ctx, bucket, key, body, size)
	}
	_, _, err := c.object(ctx, "PutObject", "PUT", bucket, key, "", body, size)
	return err
}

// Get reads and discards the object or length bytes at off.
func (c *Client) Get(ctx context.Context, bucket, key string, off, length int64) (int64, time.Time, error) {
	rng := ""
	if length > 0 {
		rng = "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+length-1, 10)
	}
	return c.object(ctx, "GetObject", "GET", bucket, key, rng, nil, 0)
}

// Stat sends HEAD object.
func (c *Client) Stat(ctx context.Context, bucket, key string) error {
	_, _, err := c.object(ctx, "HeadObject", "HEAD", bucket, key, "", nil, 0)
	return err
}

// Delete removes one object.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	_, _, err := c.object(ctx, "DeleteObject", "DELETE", bucket, key, "", nil, 0)
	return err
}
