package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// AWS Signature Version 4 for the object requests of the hot path. It
// produces the same Authorization header as minio-go's signer.SignV4 for
// the same request and time (checked by TestSignerMatchesMinio) but caches
// the per-day signing key, skips regular-expression path checks (keys are
// limited to unreserved characters by the config) and allocates less.

const (
	unsignedPayload = "UNSIGNED-PAYLOAD"
	amzDateFormat   = "20060102T150405Z"
	dayFormat       = "20060102"
)

// ignoredHeaders are not signed, as in minio-go.
var ignoredHeaders = map[string]bool{"Accept-Encoding": true, "Authorization": true, "User-Agent": true}

type signingKey struct {
	day string
	key []byte
}

type signer struct {
	accessKey, secretKey, region string
	cache                        atomic.Pointer[signingKey]
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func (s *signer) key(day string) []byte {
	if k := s.cache.Load(); k != nil && k.day == day {
		return k.key
	}
	k := hmacSHA256([]byte("AWS4"+s.secretKey), day)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, "s3")
	k = hmacSHA256(k, "aws4_request")
	s.cache.Store(&signingKey{day: day, key: k})
	return k
}

// sign sets X-Amz-Date, X-Amz-Content-Sha256 (UNSIGNED-PAYLOAD) and
// Authorization on req. The URL path must need no escaping and the query
// must already be in canonical form (sorted, encoded).
func (s *signer) sign(req *http.Request, t time.Time) {
	amzDate := s.date(t)
	day := amzDate[:8]
	req.Header["X-Amz-Date"] = []string{amzDate}
	if _, ok := req.Header["X-Amz-Content-Sha256"]; !ok {
		req.Header["X-Amz-Content-Sha256"] = []string{unsignedPayload}
	}
	payload := req.Header["X-Amz-Content-Sha256"][0]

	hs, signed := signedHeaderList(req.Header)
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}

	var b strings.Builder
	b.Grow(512)
	b.WriteString(req.Method)
	b.WriteByte('\n')
	b.WriteString(req.URL.Path)
	b.WriteByte('\n')
	b.WriteString(req.URL.RawQuery)
	b.WriteByte('\n')
	for _, h := range hs {
		b.WriteString(h.lower)
		b.WriteByte(':')
		if h.lower == "host" {
			b.WriteString(host)
		} else {
			for i, v := range req.Header[h.canon] {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(trimAll(v))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(signed)
	b.WriteByte('\n')
	b.WriteString(payload)
	sum := sha256.Sum256([]byte(b.String()))

	scope := day + "/" + s.region + "/s3/aws4_request"
	sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	sig := hex.EncodeToString(hmacSHA256(s.key(day), sts))
	req.Header["Authorization"] = []string{"AWS4-HMAC-SHA256 Credential=" + s.accessKey + "/" + scope +
		", SignedHeaders=" + signed + ", Signature=" + sig}
}

// trimAll collapses runs of spaces as SigV4 asks (header values here
// rarely have any).
func trimAll(v string) string {
	if !strings.Contains(v, "  ") && strings.TrimSpace(v) == v {
		return v
	}
	return strings.Join(strings.Fields(v), " ")
}

type headerName struct{ lower, canon string }

// usual is the sorted set of headers the object requests carry; requests
// with only these (and ignored ones) skip sorting and lower-casing.
var usual = []headerName{
	{"content-type", "Content-Type"}, {"host", "Host"}, {"range", "Range"},
	{"x-amz-content-sha256", "X-Amz-Content-Sha256"}, {"x-amz-date", "X-Amz-Date"},
}

// usualSigned caches the SignedHeaders value per subset of usual (bit i = usual[i]).
var usualSigned [1 << 5]string

func init() {
	for m := range usualSigned {
		var names []string
		for i, h := range usual {
			if m&(1<<i) != 0 {
				names = append(names, h.lower)
			}
		}
		usualSigned[m] = strings.Join(names, ";")
	}
}

// signedHeaderList returns the headers to sign, sorted by lower-case name,
// and the SignedHeaders value; host is always included.
func signedHeaderList(h http.Header) ([]headerName, string) {
	mask, n := 1<<1, 0 // host
	for i, u := range usual {
		if _, ok := h[u.canon]; ok {
			mask |= 1 << i
			n++
		}
	}
	others := 0
	for k := range h {
		if !ignoredHeaders[k] {
			others++
		}
	}
	if others == n {
		out := make([]headerName, 0, len(usual))
		for i, u := range usual {
			if mask&(1<<i) != 0 {
				out = append(out, u)
			}
		}
		return out, usualSigned[mask]
	}
	// Any other header: the general rule (all but the ignored ones, plus host).
	var out []headerName
	hasHost := false
	for k := range h {
		if ignoredHeaders[k] {
			continue
		}
		l := strings.ToLower(k)
		hasHost = hasHost || l == "host"
		out = append(out, headerName{l, k})
	}
	if !hasHost {
		out = append(out, headerName{"host", "Host"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lower < out[j].lower })
	names := make([]string, len(out))
	for i, x := range out {
		names[i] = x.lower
	}
	return out, strings.Join(names, ";")
}

type stamp struct {
	sec  int64
	text string
}

var lastStamp atomic.Pointer[stamp]

// date formats t as X-Amz-Date, once per second.
func (s *signer) date(t time.Time) string {
	sec := t.Unix()
	if st := lastStamp.Load(); st != nil && st.sec == sec {
		return st.text
	}
	text := t.UTC().Format(amzDateFormat)
	lastStamp.Store(&stamp{sec, text})
	return text
}
