package s3

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
)

// The object requests of the measured load (PUT, GET, HEAD, DELETE) are
// built here on net/http and signed by sigv4.go, with the same wire format
// as minio-go (path-style URL, UNSIGNED-PAYLOAD, SigV4 header). minio-go's
// own PutObject wraps the body in readers that net/http cannot recognise as
// in-memory, which makes it send headers and body in two writes; together
// with its per-request regular expressions that doubled the client's CPU
// per small object. Bucket-level calls still go through minio-go.

var userAgent = []string{"cephbench-loadgen"}

func (c *Client) newObjectRequest(ctx context.Context, method, bucket, key string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/"+bucket+"/"+key, body)
	if err != nil {
		return nil, err
	}
	req.Header["User-Agent"] = userAgent
	return req, nil
}

// do signs and sends req; any non-2xx answer becomes a *backend.StatusError
// (with the S3 error code when the body has one).
func (c *Client) do(op string, req *http.Request) (*http.Response, error) {
	c.sig.sign(req, time.Now())
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
		resp.Body.Close()
		return nil, &backend.StatusError{Op: op, Status: resp.StatusCode, Code: errorCode(body)}
	}
	return resp, nil
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
// MaxSinglePut; larger objects go through minio-go's multipart upload).
func (c *Client) Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64) error {
	if size > PartSize {
		return c.putMultipart(ctx, bucket, key, body, size)
	}
	req, err := c.newObjectRequest(ctx, http.MethodPut, bucket, key, body)
	if err != nil {
		return err
	}
	if _, ok := body.(*bytes.Reader); !ok {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header["Content-Type"] = octetStream
	resp, err := c.do("PutObject", req)
	if err != nil {
		return err
	}
	backend.Drain(resp)
	return nil
}

var octetStream = []string{"application/octet-stream"}

// Get reads and discards the object or length bytes at off.
func (c *Client) Get(ctx context.Context, bucket, key string, off, length int64) (int64, time.Time, error) {
	req, err := c.newObjectRequest(ctx, http.MethodGet, bucket, key, nil)
	if err != nil {
		return 0, time.Time{}, err
	}
	if length > 0 {
		req.Header["Range"] = []string{"bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+length-1, 10)}
	}
	resp, err := c.do("GetObject", req)
	if err != nil {
		return 0, time.Time{}, err
	}
	return backend.ReadBody(resp)
}

// Stat sends HEAD object.
func (c *Client) Stat(ctx context.Context, bucket, key string) error {
	return c.bodiless(ctx, "HeadObject", http.MethodHead, bucket, key)
}

// Delete removes one object.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	return c.bodiless(ctx, "DeleteObject", http.MethodDelete, bucket, key)
}

func (c *Client) bodiless(ctx context.Context, op, method, bucket, key string) error {
	req, err := c.newObjectRequest(ctx, method, bucket, key, nil)
	if err != nil {
		return err
	}
	resp, err := c.do(op, req)
	if err != nil {
		return err
	}
	backend.Drain(resp)
	return nil
}
