package s3

import (
	"bufio"
	"bytes"
	"net/http"
	"testing"
	"time"

	miniosigner "github.com/minio/minio-go/v7/pkg/signer"
)

func testClient(t testing.TB, endpoint, region string) *Client {
	c, err := New(Options{Endpoint: endpoint, Region: region, AccessKey: "AKIDEXAMPLE",
		SecretKey: "wJalrXUtnFEMI/K7MDENG", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The head the object requests send, parsed by net/http and signed again by
// minio-go's signer at the same time, carries exactly minio-go's
// Authorization header.
func TestSignerMatchesMinio(t *testing.T) {
	cases := []struct {
		endpoint, method, bucket, key, rng string
		size                               int64
	}{
		{"http://127.0.0.1:8000", "PUT", "cb-x-0", "obj-00000001", "", 4096},
		{"http://127.0.0.1:8000", "PUT", "b", "empty", "", 0},
		{"http://rgw.example:80", "GET", "b", "dir/obj-7", "bytes=0-4095", 0},
		{"http://rgw.example", "GET", "b", "obj-00000042", "", 0},
		{"http://127.0.0.1:8000", "HEAD", "b", "k", "", 0},
		{"https://127.0.0.1:8443", "DELETE", "b", "k.~_-", "", 0},
	}
	for _, tc := range cases {
		for _, region := range []string{"us-east-1", "default"} {
			c := testClient(t, tc.endpoint, region)
			parse := func(head []byte) *http.Request {
				req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
				if err != nil {
					t.Fatalf("%s: net/http cannot read the head: %v\n%s", tc.method, err, head)
				}
				return req
			}
			at := time.Now()
			// minio-go signs the same request (without our signature; net/http
			// keeps Content-Length out of the header map on the client side).
			ref := parse(c.objectHead(nil, tc.method, tc.bucket, tc.key, tc.rng, tc.size, at))
			ref.Header.Del("Authorization")
			ref.Header.Del("Content-Length")
			ref.Header.Del("X-Amz-Date")
			signed := miniosigner.SignV4(*ref, "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", "", region)
			at, err := time.Parse(amzDateFormat, signed.Header.Get("X-Amz-Date"))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second time from the cached day key and pooled hashes
				head := c.objectHead(nil, tc.method, tc.bucket, tc.key, tc.rng, tc.size, at)
				mine := parse(head)
				if got, want := mine.Header.Get("Authorization"), signed.Header.Get("Authorization"); got != want || want == "" {
					t.Fatalf("%s %s/%s (%s):\n got  %s\n want %s", tc.method, tc.bucket, tc.key, region, got, want)
				}
				if tc.method == "PUT" && mine.ContentLength != tc.size {
					t.Fatalf("Content-Length %d, want %d", mine.ContentLength, tc.size)
				}
				if mine.Host != c.h1.Host() || mine.URL.Path != "/"+tc.bucket+"/"+tc.key || mine.Header.Get("Range") != tc.rng {
					t.Fatalf("head %q", head)
				}
			}
		}
	}
}

func TestErrorCode(t *testing.T) {
	body := []byte(`<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>x</Message></Error>`)
	if errorCode(body) != "SlowDown" || errorCode([]byte("nope")) != "" {
		t.Fatal("error code parsing")
	}
}

// BenchmarkObjectHead: building and signing one PUT head (allocations must stay 0).
func BenchmarkObjectHead(b *testing.B) {
	c := testClient(b, "http://127.0.0.1:8000", "us-east-1")
	buf := make([]byte, 0, 1024)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		buf = c.objectHead(buf[:0], "PUT", "cb-x-0", "obj-00000001", "", 4096, now)
	}
}
