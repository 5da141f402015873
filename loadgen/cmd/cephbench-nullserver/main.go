// Command cephbench-nullserver answers S3 and Swift requests at once with
// just enough semantics for cephbench-loadgen, so that the load generator's
// own cost can be measured. It keeps bucket names (so a run can create,
// check and delete its buckets) but stores no object data: GET returns
// --get-size bytes of zeros, HEAD reports that length.
//
// It speaks a minimal HTTP/1.1 itself (keep-alive, Content-Length request
// bodies, each response in one write) instead of net/http's server, so that
// it costs less per request than the client it measures.
//
// It prints the address it listens on as its first line of stdout.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
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
	storage string // Swift storage URL
}

const swiftPrefix = "/swift/v1"

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0 = any free port)")
	getSize := flag.String("get-size", "4KiB", "bytes returned by GET object")
	flag.Parse()
	n, err := config.ParseSize(*getSize)
	if err != nil || n > 64<<20 {
		fmt.Fprintf(os.Stderr, "cephbench-nullserver: bad size %q (--get-size): use e.g. 4KiB, at most 64MiB\n", *getSize)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cephbench-nullserver: cannot listen on %s (--listen): %v\n", *listen, err)
		os.Exit(2)
	}
	s := &server{buckets: map[string]bool{}, body: make([]byte, n), storage: "http://" + ln.Addr().String() + swiftPrefix}
	fmt.Println(ln.Addr().String())
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "cephbench-nullserver: %v\n", err)
			os.Exit(1)
		}
		go s.serve(c)
	}
}

// response is what route decides.
type response struct {
	status  int
	headers string // extra header lines, each ending in \r\n
	body    []byte
	length  int64 // Content-Length when body is nil (HEAD)
}

var reasons = map[int]string{200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 400: "Bad Request",
	404: "Not Found", 405: "Method Not Allowed", 501: "Not Implemented"}

func (s *server) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10+len(s.body))
	hb := make([]byte, 0, 512)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		method, target, ok := requestLine(line)
		if !ok {
			return
		}
		var clen int64
		closeConn, chunked := false, false
		for {
			h, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			h = bytes.TrimRight(h, "\r\n")
			if len(h) == 0 {
				break
			}
			name, value, _ := bytes.Cut(h, []byte(":"))
			value = bytes.TrimSpace(value)
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				clen, _ = strconv.ParseInt(string(value), 10, 64)
			case bytes.EqualFold(name, []byte("Connection")):
				closeConn = bytes.EqualFold(value, []byte("close"))
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				chunked = true
			}
		}
		var r response
		if chunked {
			r, closeConn = response{status: 501}, true
		} else {
			if _, err := br.Discard(int(clen)); err != nil {
				return
			}
			path, _, _ := bytes.Cut(target, []byte{'?'})
			r = s.route(method, string(path))
		}
		n := r.length
		if r.body != nil {
			n = int64(len(r.body))
		}
		hb = append(hb[:0], "HTTP/1.1 "...)
		hb = strconv.AppendInt(hb, int64(r.status), 10)
		hb = append(hb, ' ')
		hb = append(hb, reasons[r.status]...)
		hb = append(hb, "\r\nContent-Length: "...)
		hb = strconv.AppendInt(hb, n, 10)
		hb = append(hb, "\r\n"...)
		hb = append(hb, r.headers...)
		bw.Write(hb)
		if closeConn {
			bw.WriteString("Connection: close\r\n")
		}
		bw.WriteString("\r\n")
		if method != "HEAD" {
			bw.Write(r.body)
		}
		// Flush when no further request is already waiting: one write per response.
		if br.Buffered() == 0 || closeConn {
			if bw.Flush() != nil || closeConn {
				return
			}
		}
	}
}

// requestLine splits "METHOD target HTTP/1.x"; the method is returned as
// one of the constants route knows, so that it costs no allocation.
func requestLine(line []byte) (method string, target []byte, ok bool) {
	m, rest, ok1 := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte{' '})
	target, proto, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || !bytes.HasPrefix(proto, []byte("HTTP/1.")) {
		return "", nil, false
	}
	for _, known := range methods {
		if string(m) == known {
			return known, target, true
		}
	}
	return string(m), target, true
}

var methods = []string{"GET", "PUT", "HEAD", "DELETE", "POST"}

const (
	etag     = "ETag: \"d41d8cd98f00b204e9800998ecf8427e\"\r\n"
	objHead  = etag + "Last-Modified: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Type: application/octet-stream\r\n"
	xmlType  = "Content-Type: application/xml\r\n"
	emptyXML = `<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult><Owner><ID>null</ID></Owner><Buckets></Buckets></ListAllMyBucketsResult>`
)

func (s *server) route(method, path string) response {
	if path == "/auth/v1.0" || path == "/auth/v1" || path == "/auth" {
		return response{status: 204, headers: "X-Storage-Url: " + s.storage + "\r\nX-Auth-Token: AUTH_tk-null\r\n"}
	}
	swift := strings.HasPrefix(path, swiftPrefix+"/")
	if swift {
		path = strings.TrimPrefix(path, swiftPrefix)
	}
	path = strings.TrimPrefix(path, "/")
	if path == "" {
		return response{status: 200, headers: xmlType, body: []byte(emptyXML)}
	}
	bucket, key, _ := strings.Cut(path, "/")
	if key == "" {
		return s.bucketOp(method, bucket, swift)
	}
	switch method {
	case "PUT":
		if swift {
			return response{status: 201, headers: etag}
		}
		return response{status: 200, headers: etag}
	case "GET":
		return response{status: 200, headers: objHead, body: s.body}
	case "HEAD":
		return response{status: 200, headers: objHead, length: int64(len(s.body))}
	case "DELETE":
		return response{status: 204}
	}
	return response{status: 405}
}

func (s *server) bucketOp(method, bucket string, swift bool) response {
	switch method {
	case "PUT":
		s.mu.Lock()
		existed := s.buckets[bucket]
		s.buckets[bucket] = true
		s.mu.Unlock()
		switch {
		case swift && existed:
			return response{status: 202}
		case swift:
			return response{status: 201}
		}
		return response{status: 200}
	case "HEAD":
		s.mu.RLock()
		ok := s.buckets[bucket]
		s.mu.RUnlock()
		if !ok {
			return response{status: 404}
		}
		return response{status: 200}
	case "DELETE":
		s.mu.Lock()
		delete(s.buckets, bucket)
		s.mu.Unlock()
		return response{status: 204}
	case "GET":
		if swift {
			return response{status: 204}
		}
		return response{status: 200, headers: xmlType, body: []byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>` +
			bucket + `</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`)}
	}
	return response{status: 405}
}
