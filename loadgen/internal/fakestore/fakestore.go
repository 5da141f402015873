// Package fakestore is an in-memory S3-ish and Swift-ish server for tests:
// enough of both protocols for cephbench-loadgen (list buckets, bucket
// create/head/delete/list, object put/get/head/delete, Swift auth v1). It
// does not check S3 signatures, only the access key named in them.
package fakestore

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault lets a test make a request fail: return a status (and S3 code) or 0.
type Fault func(r *http.Request) (status int, code string)

// Store is the fake server's state.
type Store struct {
	AccessKey string
	SwiftUser string
	SwiftKey  string

	// Fault, if set, is asked before every object request.
	Fault Fault
	// StallOnGet, if > 0, makes the GET object request with this 1-based
	// number hold the whole server for StallFor: every request that arrives
	// meanwhile waits too.
	StallOnGet int64
	StallFor   time.Duration

	srv     *httptest.Server
	stall   sync.RWMutex
	gets    atomic.Int64
	mu      sync.Mutex
	buckets map[string]map[string]int64 // bucket -> key -> size
	Counts  sync.Map                    // "METHOD kind" -> *atomic.Int64
}

const token = "AUTH_tk-fake"

// New starts a server; Close it when done.
func New() *Store {
	s := &Store{AccessKey: "fake-access", SwiftUser: "test:swift", SwiftKey: "fake-swift-key",
		buckets: map[string]map[string]int64{}}
	s.srv = httptest.NewServer(s)
	return s
}

// URL is the server's base URL.
func (s *Store) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Store) Close() { s.srv.Close() }

// AddBucket creates a bucket with objects (key -> size), as if it existed
// before a run.
func (s *Store) AddBucket(name string, objects map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int64{}
	for k, v := range objects {
		m[k] = v
	}
	s.buckets[name] = m
}

// Snapshot returns bucket -> sorted keys.
func (s *Store) Snapshot() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for b, objs := range s.buckets {
		keys := []string{}
		for k := range objs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out[b] = keys
	}
	return out
}

// Count is how many requests of "METHOD kind" (kind: object, bucket,
// service, auth) the server saw.
func (s *Store) Count(what string) int64 {
	if v, ok := s.Counts.Load(what); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

func (s *Store) count(what string) {
	v, _ := s.Counts.LoadOrStore(what, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

type s3Error struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

func writeErr(w http.ResponseWriter, r *http.Request, status int, code string, swift bool) {
	if swift || r.Method == http.MethodHead || code == "" {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(s3Error{Code: code, Message: code})
}

func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.stall.RLock()
	held := true
	defer func() {
		if held {
			s.stall.RUnlock()
		}
	}()
	body, _ := io.ReadAll(r.Body)
	p := r.URL.Path
	if p == "/auth/v1.0" {
		s.count(r.Method + " auth")
		if r.Header.Get("X-Auth-User") != s.SwiftUser || r.Header.Get("X-Auth-Key") != s.SwiftKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Storage-Url", s.srv.URL+"/swift/v1/AUTH_test")
		w.Header().Set("X-Auth-Token", token)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	swift := strings.HasPrefix(p, "/swift/v1/AUTH_test")
	if swift {
		if r.Header.Get("X-Auth-Token") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		p = strings.TrimPrefix(p, "/swift/v1/AUTH_test")
	} else {
		auth := r.Header.Get("Authorization")
		i := strings.Index(auth, "Credential=")
		if i < 0 || !strings.HasPrefix(auth[i+len("Credential="):], s.AccessKey+"/") {
			writeErr(w, r, http.StatusForbidden, "InvalidAccessKeyId", false)
			return
		}
	}
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		s.count(r.Method + " service")
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><ListAllMyBucketsResult><Owner><ID>fake</ID></Owner><Buckets>`)
		for b := range s.Snapshot() {
			fmt.Fprintf(w, `<Bucket><Name>%s</Name><CreationDate>2024-01-01T00:00:00.000Z</CreationDate></Bucket>`, b)
		}
		fmt.Fprint(w, `</Buckets></ListAllMyBucketsResult>`)
		return
	}
	bucket, key, _ := strings.Cut(p, "/")
	if key == "" {
		s.count(r.Method + " bucket")
		s.bucketOp(w, r, bucket, swift)
		return
	}
	s.count(r.Method + " object")
	if r.Method == http.MethodGet && s.StallOnGet > 0 && s.gets.Add(1) == s.StallOnGet {
		s.stall.RUnlock()
		held = false
		s.stall.Lock()
		time.Sleep(s.StallFor)
		s.stall.Unlock()
	}
	if s.Fault != nil {
		if st, code := s.Fault(r); st != 0 {
			writeErr(w, r, st, code, swift)
			return
		}
	}
	s.objectOp(w, r, bucket, key, int64(len(body)), swift)
}

func (s *Store) bucketOp(w http.ResponseWriter, r *http.Request, bucket string, swift bool) {
	s.mu.Lock()
	objs, exists := s.buckets[bucket]
	switch r.Method {
	case http.MethodPut:
		if !exists {
			s.buckets[bucket] = map[string]int64{}
		}
		s.mu.Unlock()
		switch {
		case swift && exists:
			w.WriteHeader(http.StatusAccepted)
		case swift:
			w.WriteHeader(http.StatusCreated)
		case exists:
			writeErr(w, r, http.StatusConflict, "BucketAlreadyOwnedByYou", false)
		}
		return
	case http.MethodDelete:
		switch {
		case !exists:
			s.mu.Unlock()
			writeErr(w, r, http.StatusNotFound, "NoSuchBucket", swift)
		case len(objs) > 0:
			s.mu.Unlock()
			writeErr(w, r, http.StatusConflict, "BucketNotEmpty", swift)
		default:
			delete(s.buckets, bucket)
			s.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	var keys []string
	prefix := r.URL.Query().Get("prefix")
	for k := range objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	if !exists {
		writeErr(w, r, http.StatusNotFound, "NoSuchBucket", swift)
		return
	}
	switch r.Method {
	case http.MethodHead:
		if swift {
			w.WriteHeader(http.StatusNoContent)
		}
	case http.MethodGet:
		sort.Strings(keys)
		limit := 1000
		if v := r.URL.Query().Get("max-keys"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		if v := r.URL.Query().Get("limit"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		truncated := len(keys) > limit
		if truncated {
			keys = keys[:limit]
		}
		if swift {
			if len(keys) == 0 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			fmt.Fprint(w, strings.Join(keys, "\n")+"\n")
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>%d</MaxKeys><IsTruncated>%v</IsTruncated>`,
			bucket, prefix, len(keys), limit, truncated)
		for _, k := range keys {
			fmt.Fprintf(w, `<Contents><Key>%s</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>`, k)
		}
		if truncated {
			fmt.Fprintf(w, `<NextContinuationToken>%s</NextContinuationToken>`, keys[len(keys)-1])
		}
		fmt.Fprint(w, `</ListBucketResult>`)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *Store) objectOp(w http.ResponseWriter, r *http.Request, bucket, key string, bodyLen int64, swift bool) {
	s.mu.Lock()
	objs, exists := s.buckets[bucket]
	if !exists {
		s.mu.Unlock()
		writeErr(w, r, http.StatusNotFound, "NoSuchBucket", swift)
		return
	}
	size, have := objs[key]
	switch r.Method {
	case http.MethodPut:
		objs[key] = bodyLen
		s.mu.Unlock()
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
		if swift {
			w.WriteHeader(http.StatusCreated)
		}
		return
	case http.MethodDelete:
		delete(objs, key)
		s.mu.Unlock()
		if swift && !have {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.mu.Unlock()
	if !have {
		writeErr(w, r, http.StatusNotFound, "NoSuchKey", swift)
		return
	}
	h := w.Header()
	h.Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	h.Set("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
	h.Set("Content-Type", "application/octet-stream")
	start, end := int64(0), size-1
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && r.Method == http.MethodGet {
		a, b, _ := strings.Cut(strings.TrimPrefix(rg, "bytes="), "-")
		start, _ = strconv.ParseInt(a, 10, 64)
		end, _ = strconv.ParseInt(b, 10, 64)
		if start >= size || end < start {
			writeErr(w, r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange", swift)
			return
		}
		end = min(end, size-1)
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, size))
	}
	h.Set("Content-Length", strconv.FormatInt(end-start+1, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		_, _ = w.Write(make([]byte, end-start+1))
	}
}
