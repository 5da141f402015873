package s3

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	miniosigner "github.com/minio/minio-go/v7/pkg/signer"
)

// The hot-path signer must produce exactly what minio-go's does.
func TestSignerMatchesMinio(t *testing.T) {
	mk := func(method, url string, hdr map[string]string) *http.Request {
		var body *bytes.Reader
		if method == http.MethodPut {
			body = bytes.NewReader(make([]byte, 4096))
		}
		var req *http.Request
		if body != nil {
			req, _ = http.NewRequest(method, url, body)
		} else {
			req, _ = http.NewRequest(method, url, nil)
		}
		req.Header.Set("User-Agent", "cephbench-loadgen")
		req.Header.Set("X-Amz-Content-Sha256", unsignedPayload)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return req
	}
	cases := []struct {
		method, url string
		hdr         map[string]string
	}{
		{http.MethodPut, "http://127.0.0.1:8000/cb-x-0/obj-00000001", map[string]string{"Content-Type": "application/octet-stream"}},
		{http.MethodGet, "http://rgw.example:80/b/dir/obj-7", map[string]string{"Range": "bytes=0-4095"}},
		{http.MethodHead, "http://127.0.0.1:8000/b/k", nil},
		{http.MethodDelete, "https://127.0.0.1:8443/b/k.~_-", nil},
		// a header outside the usual set takes the general path
		{http.MethodPut, "http://127.0.0.1:8000/b/k", map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-Run": "a  b"}},
	}
	for _, c := range cases {
		for _, region := range []string{"us-east-1", "default"} {
			ref := miniosigner.SignV4(*mk(c.method, c.url, c.hdr), "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", "", region)
			at, err := time.Parse(amzDateFormat, ref.Header.Get("X-Amz-Date"))
			if err != nil {
				t.Fatal(err)
			}
			s := &signer{accessKey: "AKIDEXAMPLE", secretKey: "wJalrXUtnFEMI/K7MDENG", region: region}
			for range 2 { // second time from the cached signing key
				mine := mk(c.method, c.url, c.hdr)
				s.sign(mine, at)
				if got, want := mine.Header.Get("Authorization"), ref.Header.Get("Authorization"); got != want {
					t.Fatalf("%s %s (%s):\n got  %s\n want %s", c.method, c.url, region, got, want)
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

func BenchmarkSign(b *testing.B) {
	s := &signer{accessKey: "AKIDEXAMPLE", secretKey: "secret", region: "us-east-1"}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8000/b/obj-00000001", nil)
		req.Header["User-Agent"] = userAgent
		s.sign(req, now)
	}
}
