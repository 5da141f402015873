// Command cephbench-nullserver answers S3 and Swift requests at once with
// just enough semantics for cephbench-loadgen, so that the load generator's
// own cost can be measured. It keeps bucket names (so a run can create,
// check and delete its buckets) but stores no object data: GET returns
// --get-size bytes of zeros, HEAD reports that length.
//
// It prints the address it listens on as its first line of stdout.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cephbench/cephbench/loadgen/internal/config"
)

type server struct {
	mu      sync.RWMutex
	buckets map[string]bool
	body    []byte
	bodyLen string
	swift   string // storage URL path prefix
	storage string // full storage URL
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0 = any free port)")
	getSize := flag.String("get-size", "4KiB", "bytes returned by GET object")
	flag.Parse()
	n, err := config.ParseSize(*getSize)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cephbench-nullserver: %v (--get-size): use e.g. 4KiB\n", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cephbench-nullserver: cannot listen on %s (--listen): %v\n", *listen, err)
		os.Exit(2)
	}
	s := &server{buckets: map[string]bool{}, body: make([]byte, n), bodyLen: strconv.FormatInt(n, 10), swift: "/swift/v1"}
	s.storage = "http://" + ln.Addr().String() + s.swift
	fmt.Println(ln.Addr().String())
	if err := http.Serve(ln, s); err != nil {
		fmt.Fprintf(os.Stderr, "cephbench-nullserver: %v\n", err)
		os.Exit(1)
	}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	p := r.URL.Path
	if p == "/auth/v1.0" || p == "/auth/v1" || p == "/auth" {
		h := w.Header()
		h.Set("X-Storage-Url", s.storage)
		h.Set("X-Auth-Token", "AUTH_tk-null")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	swift := strings.HasPrefix(p, s.swift+"/")
	if swift {
		p = strings.TrimPrefix(p, s.swift)
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" { // ListBuckets / account
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult><Owner><ID>null</ID></Owner><Buckets></Buckets></ListAllMyBucketsResult>`)
		return
	}
	bucket, key, _ := strings.Cut(p, "/")
	if key == "" {
		s.bucketOp(w, r, bucket, swift)
		return
	}
	h := w.Header()
	switch r.Method {
	case http.MethodPut:
		h.Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
		if swift {
			w.WriteHeader(http.StatusCreated)
		}
	case http.MethodGet, http.MethodHead:
		h.Set("Content-Length", s.bodyLen)
		h.Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
		if r.Method == http.MethodGet {
			_, _ = w.Write(s.body)
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *server) bucketOp(w http.ResponseWriter, r *http.Request, bucket string, swift bool) {
	switch r.Method {
	case http.MethodPut:
		s.mu.Lock()
		existed := s.buckets[bucket]
		s.buckets[bucket] = true
		s.mu.Unlock()
		if swift && existed {
			w.WriteHeader(http.StatusAccepted)
		} else if swift {
			w.WriteHeader(http.StatusCreated)
		}
	case http.MethodHead:
		s.mu.RLock()
		ok := s.buckets[bucket]
		s.mu.RUnlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
		}
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.buckets, bucket)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		if swift {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>`+bucket+`</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
