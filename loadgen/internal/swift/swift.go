// Package swift is the Swift backend, with auth v1: GET {auth-url} with
// X-Auth-User/X-Auth-Key gives X-Storage-Url and X-Auth-Token, which every
// later request carries. Object requests (the load) go over package http1,
// the rest over net/http.
package swift

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/http1"
)

// Client implements backend.Client over Swift.
type Client struct {
	hc      *http.Client
	authURL string
	user    string
	key     string
	timeout time.Duration

	mu         sync.RWMutex
	storageURL string
	token      []string // header value slice, shared read-only by requests
	objects    atomic.Pointer[session]
}

// session is what object requests need from auth.
type session struct {
	h1     *http1.Client
	prefix string // escaped path of the storage URL
	token  string
}

// New builds a client; it sends nothing until Check. Object requests are
// bounded by timeout.
func New(authURL, user, key string, rt http.RoundTripper, timeout time.Duration) *Client {
	return &Client{
		hc:      &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		authURL: authURL, user: user, key: key, timeout: timeout,
	}
}

// Check authenticates (auth v1) and keeps the storage URL and token.
func (c *Client) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.authURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-User", c.user)
	req.Header.Set("X-Auth-Key", c.key)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	backend.Drain(resp)
	if resp.StatusCode/100 != 2 {
		return &backend.StatusError{Op: "auth", Status: resp.StatusCode}
	}
	su, tok := resp.Header.Get("X-Storage-Url"), resp.Header.Get("X-Auth-Token")
	if su == "" || tok == "" {
		return fmt.Errorf("auth answer from %s lacks X-Storage-Url or X-Auth-Token", c.authURL)
	}
	u, err := url.Parse(su)
	if err != nil {
		return fmt.Errorf("auth answer has a bad X-Storage-Url: %v", err)
	}
	h1, err := http1.New(su, c.timeout)
	if err != nil {
		return fmt.Errorf("auth answer has a bad X-Storage-Url: %v", err)
	}
	c.objects.Store(&session{h1: h1, prefix: strings.TrimRight(u.EscapedPath(), "/"), token: tok})
	c.mu.Lock()
	c.storageURL, c.token = su, []string{tok}
	c.mu.Unlock()
	return nil
}

// StorageURL is the account URL from auth ("" before Check).
func (c *Client) StorageURL() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.storageURL
}

// do sends one request to the storage URL + path; the body is drained and closed
// unless keep is set.
func (c *Client) do(ctx context.Context, op, method, path string, body io.Reader, size int64, keep bool, hdr map[string]string) (*http.Response, error) {
	c.mu.RLock()
	u, tok := c.storageURL+path, c.token
	c.mu.RUnlock()
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header["X-Auth-Token"] = tok
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		backend.Drain(resp)
		return nil, &backend.StatusError{Op: op, Status: resp.StatusCode}
	}
	if !keep {
		backend.Drain(resp)
	}
	return resp, nil
}

// BucketExists sends HEAD container.
func (c *Client) BucketExists(ctx context.Context, bucket string) (bool, error) {
	_, err := c.do(ctx, "HeadContainer", http.MethodHead, "/"+url.PathEscape(bucket), nil, 0, false, nil)
	if backend.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// CreateBucket sends PUT container: 201 created, 202 already there.
func (c *Client) CreateBucket(ctx context.Context, bucket string) (bool, error) {
	resp, err := c.do(ctx, "PutContainer", http.MethodPut, "/"+url.PathEscape(bucket), http.NoBody, 0, false, nil)
	if err != nil {
		return false, err
	}
	return resp.StatusCode == http.StatusCreated, nil
}

// DeleteBucket sends DELETE container.
func (c *Client) DeleteBucket(ctx context.Context, bucket string) error {
	_, err := c.do(ctx, "DeleteContainer", http.MethodDelete, "/"+url.PathEscape(bucket), nil, 0, false, nil)
	return err
}

// object sends one object request on the storage URL; on a 2xx answer it
// returns the body's length (read to the end) and when the headers arrived.
// Bucket and key names need no escaping (the config allows only unreserved
// characters).
func (c *Client) object(ctx context.Context, op, method, bucket, key, rng string, body io.Reader, size int64) (int64, time.Time, error) {
	s := c.objects.Load()
	if s == nil {
		return 0, time.Time{}, fmt.Errorf("%s before auth", op)
	}
	cn := s.h1.Get()
	defer cn.Release()
	b := s.h1.AppendRequestLine(cn.Buf(), method, s.prefix, "/", bucket, "/", key)
	b = http1.AppendHeader(b, "User-Agent", "cephbench-loadgen")
	b = http1.AppendHeader(b, "X-Auth-Token", s.token)
	if method == http.MethodPut {
		b = http1.AppendContentLength(b, size)
		b = http1.AppendHeader(b, "Content-Type", "application/octet-stream")
	}
	if rng != "" {
		b = http1.AppendHeader(b, "Range", rng)
	}
	resp, err := cn.Send(ctx, time.Now(), http1.AppendEnd(b), body, size, method == http.MethodHead)
	if err != nil {
		return 0, time.Time{}, err
	}
	if resp.Status/100 != 2 {
		_, _ = resp.Discard()
		return 0, time.Time{}, &backend.StatusError{Op: op, Status: resp.Status}
	}
	n, err := resp.Discard()
	return n, resp.HeadersAt, err
}

// Put sends PUT object.
func (c *Client) Put(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64) error {
	_, _, err := c.object(ctx, "PutObject", http.MethodPut, bucket, key, "", body, size)
	return err
}

// Get sends GET object, optionally ranged, and discards the body.
func (c *Client) Get(ctx context.Context, bucket, key string, off, length int64) (int64, time.Time, error) {
	rng := ""
	if length > 0 {
		rng = "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+length-1, 10)
	}
	return c.object(ctx, "GetObject", http.MethodGet, bucket, key, rng, nil, 0)
}

// Stat sends HEAD object.
func (c *Client) Stat(ctx context.Context, bucket, key string) error {
	_, _, err := c.object(ctx, "HeadObject", http.MethodHead, bucket, key, "", nil, 0)
	return err
}

// Delete sends DELETE object.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	_, _, err := c.object(ctx, "DeleteObject", http.MethodDelete, bucket, key, "", nil, 0)
	return err
}

// List fetches one plain-text container listing page and counts its lines.
func (c *Client) List(ctx context.Context, bucket, prefix string, max int) (int, error) {
	q := url.Values{"format": {"plain"}, "limit": {strconv.Itoa(max)}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	resp, err := c.do(ctx, "ListContainer", http.MethodGet, "/"+url.PathEscape(bucket)+"?"+q.Encode(), nil, 0, true, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	n := 0
	for i, b := range body {
		if b == '\n' || (i == len(body)-1) {
			n++
		}
	}
	return n, nil
}
