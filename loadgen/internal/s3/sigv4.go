package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
	"time"
)

// AWS Signature Version 4 for the object requests of the load, written
// straight into the request head. It gives the same Authorization header as
// minio-go's signer.SignV4 for the same request and time (checked by
// TestSignerMatchesMinio on the bytes sent), but keeps the per-day signing
// key, reuses its hashes and buffers, and allocates nothing per request.
// Paths need no escaping: keys are limited to unreserved characters by the
// config.

const (
	unsignedPayload = "UNSIGNED-PAYLOAD"
	amzDateFormat   = "20060102T150405Z"
)

// dayKey is what is fixed for one signing day.
type dayKey struct {
	day   string // 20060102
	key   []byte // HMAC chain of secret, day, region, "s3", "aws4_request"
	scope string // day/region/s3/aws4_request
	cred  string // "AWS4-HMAC-SHA256 Credential=" + access key + "/" + scope + ", SignedHeaders="
}

type signer struct {
	accessKey, secretKey, region string
	day                          atomic.Pointer[dayKey]
	scratch                      sync.Pool // *sigScratch
}

// sigScratch is one request's signing state, pooled.
type sigScratch struct {
	canon []byte    // canonical request
	sts   []byte    // string to sign
	sha   hash.Hash // sha256 of the canonical request
	mac   hash.Hash // HMAC with macFor's key
	macOf *dayKey
	sum   [sha256.Size]byte // here, not on the stack: hash.Hash.Sum would move them to the heap
	sig   [sha256.Size]byte
}

func newSigner(accessKey, secretKey, region string) *signer {
	s := &signer{accessKey: accessKey, secretKey: secretKey, region: region}
	s.scratch.New = func() any {
		return &sigScratch{canon: make([]byte, 0, 512), sts: make([]byte, 0, 256), sha: sha256.New()}
	}
	return s
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func (s *signer) dayKey(amzDate string) *dayKey {
	day := amzDate[:8]
	if k := s.day.Load(); k != nil && k.day == day {
		return k
	}
	key := hmacSHA256([]byte("AWS4"+s.secretKey), day)
	key = hmacSHA256(key, s.region)
	key = hmacSHA256(key, "s3")
	key = hmacSHA256(key, "aws4_request")
	scope := day + "/" + s.region + "/s3/aws4_request"
	k := &dayKey{day: day, key: key, scope: scope,
		cred: "AWS4-HMAC-SHA256 Credential=" + s.accessKey + "/" + scope + ", SignedHeaders="}
	s.day.Store(k)
	return k
}

// sigHeader is one signed header: lower-case name and value (values here
// have no runs of spaces to collapse).
type sigHeader struct{ name, value string }

// appendAuthorization appends the Authorization header line for a request
// whose signed headers are hs, sorted by name and including host.
func (s *signer) appendAuthorization(dst []byte, method string, path []byte, hs []sigHeader, signedHeaders, amzDate string) []byte {
	dk := s.dayKey(amzDate)
	sc := s.scratch.Get().(*sigScratch)
	defer s.scratch.Put(sc)

	c := append(sc.canon[:0], method...)
	c = append(c, '\n')
	c = append(c, path...)
	c = append(c, "\n\n"...) // no query
	for _, h := range hs {
		c = append(c, h.name...)
		c = append(c, ':')
		c = append(c, h.value...)
		c = append(c, '\n')
	}
	c = append(c, '\n')
	c = append(c, signedHeaders...)
	c = append(c, '\n')
	c = append(c, unsignedPayload...)
	sc.canon = c
	sc.sha.Reset()
	sc.sha.Write(c)
	sum := sc.sha.Sum(sc.sum[:0])

	t := append(sc.sts[:0], "AWS4-HMAC-SHA256\n"...)
	t = append(t, amzDate...)
	t = append(t, '\n')
	t = append(t, dk.scope...)
	t = append(t, '\n')
	t = hex.AppendEncode(t, sum)
	sc.sts = t
	if sc.macOf != dk {
		sc.mac, sc.macOf = hmac.New(sha256.New, dk.key), dk
	}
	sc.mac.Reset()
	sc.mac.Write(t)
	sig := sc.mac.Sum(sc.sig[:0])

	dst = append(dst, "Authorization: "...)
	dst = append(dst, dk.cred...)
	dst = append(dst, signedHeaders...)
	dst = append(dst, ", Signature="...)
	dst = hex.AppendEncode(dst, sig)
	return append(dst, "\r\n"...)
}

type stamp struct {
	sec  int64
	text string
}

// amzDate formats t as X-Amz-Date, once per second per signer.
type amzDate struct{ last atomic.Pointer[stamp] }

func (d *amzDate) format(t time.Time) string {
	sec := t.Unix()
	if st := d.last.Load(); st != nil && st.sec == sec {
		return st.text
	}
	text := t.UTC().Format(amzDateFormat)
	d.last.Store(&stamp{sec, text})
	return text
}
