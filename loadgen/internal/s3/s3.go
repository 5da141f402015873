// Package s3 is the S3 backend, built on minio-go v7 the way it talks to RGW:
// SigV4, path-style addressing, a fixed region (no bucket-location lookups),
// unsigned payloads (no streaming SHA-256 over the body), no Content-MD5, no
// checksum trailers, no client-side retries (every failure is counted), and
// objects up to 64 MiB sent as one PUT. Object requests of the load itself
// take a cheaper path with the same wire format (object.go, over package
// http1).
package s3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/http1"
)

// PartSize is the multipart part size; objects up to it go as one PUT.
const PartSize = 64 << 20

// Client implements backend.Client over S3.
type Client struct {
	mc   *minio.Client
	core minio.Core
	h1   *http1.Client // object requests
	sig  *signer
	date amzDate
}

// Options configure New.
type Options struct {
	Endpoint  string // http(s)://host:port
	Region    string
	AccessKey string
	SecretKey string
	Transport http.RoundTripper // bucket-level calls (minio-go)
	Timeout   time.Duration     // bound of each object request
}

// New builds a client; it sends nothing.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil {
		return nil, err
	}
	mc, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Transport:    o.Transport,
		Region:       o.Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, err
	}
	h1, err := http1.New(o.Endpoint, o.Timeout)
	if err != nil {
		return nil, err
	}
	return &Client{mc: mc, core: minio.Core{Client: mc}, h1: h1, sig: newSigner(o.AccessKey, o.SecretKey, o.Region)}, nil
}

// wrap turns minio's error answers into *backend.StatusError.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.StatusCode != 0 {
		return &backend.StatusError{Op: op, Status: er.StatusCode, Code: er.Code}
	}
	return err
}

// Check lists buckets: cheap, and fails on bad keys.
func (c *Client) Check(ctx context.Context) error {
	_, err := c.mc.ListBuckets(ctx)
	return wrap("ListBuckets", err)
}

// BucketExists sends HEAD bucket.
func (c *Client) BucketExists(ctx context.Context, bucket string) (bool, error) {
	ok, err := c.mc.BucketExists(ctx, bucket)
	return ok, wrap("HeadBucket", err)
}

// CreateBucket creates bucket; an existing bucket gives created=false.
func (c *Client) CreateBucket(ctx context.Context, bucket string) (bool, error) {
	err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
	if err != nil {
		code := minio.ToErrorResponse(err).Code
		if code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return false, nil
		}
		return false, wrap("CreateBucket", err)
	}
	return true, nil
}

// DeleteBucket removes an empty bucket.
func (c *Client) DeleteBucket(ctx context.Context, bucket string) error {
	return wrap("DeleteBucket", c.mc.RemoveBucket(ctx, bucket))
}

// putMultipart uploads objects above PartSize with minio-go's multipart upload.
func (c *Client) putMultipart(ctx context.Context, bucket, key string, body io.ReadSeeker, size int64) error {
	_, err := c.mc.PutObject(ctx, bucket, key, body, size, minio.PutObjectOptions{
		ContentType:          "application/octet-stream",
		PartSize:             PartSize,
		DisableContentSha256: true,
		SendContentMd5:       false,
	})
	return wrap("PutObject", err)
}

// List fetches one ListObjectsV2 page. minio's Core listing takes no context;
// the transport's response-header timeout bounds it.
func (c *Client) List(_ context.Context, bucket, prefix string, max int) (int, error) {
	res, err := c.core.ListObjectsV2(bucket, prefix, "", "", "", max)
	if err != nil {
		return 0, wrap("ListObjectsV2", err)
	}
	return len(res.Contents), nil
}
