package backend

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
)

// BlockSize is the size of the random block every payload repeats.
const BlockSize = 1 << 20

// Payload hands out request bodies of any size without allocating them:
// bodies are views of one random block, repeated for larger sizes. Random
// bytes keep compression and deduplication out of the measurement.
type Payload struct {
	block []byte // the block's first bytes: all of it unless made for smaller objects
	seed  uint64
	once  sync.Once
	full  []byte // the whole block, made when a body needs more than block
}

// NewPayload fills the block from seed.
func NewPayload(seed uint64) *Payload { return NewPayloadFor(seed, BlockSize) }

// NewPayloadFor makes only the block's first maxSize bytes (the largest body
// the run sends; the same bytes NewPayload gives), so that a run of small
// objects does not start by filling 1 MiB. A larger body still works: the
// whole block is made then.
func NewPayloadFor(seed uint64, maxSize int64) *Payload {
	n := int(min(max(maxSize, 0), BlockSize))
	return &Payload{block: fill(seed, n), seed: seed}
}

// fill returns the first n bytes of seed's block.
func fill(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, (n+7)&^7)
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b[:n]
}

func (p *Payload) blockFor(size int64) []byte {
	if size <= int64(len(p.block)) || len(p.block) == BlockSize {
		return p.block
	}
	p.once.Do(func() { p.full = fill(p.seed, BlockSize) })
	return p.full
}

// Reader returns a body of size bytes.
func (p *Payload) Reader(size int64) io.ReadSeeker {
	block := p.blockFor(size)
	if size <= int64(len(block)) {
		return bytes.NewReader(block[:size])
	}
	return &repeatReader{block: block, size: size}
}

// repeatReader reads block over and over up to size bytes.
type repeatReader struct {
	block []byte
	size  int64
	off   int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	return n, err
}

func (r *repeatReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	var err error
	if rem := r.size - off; int64(len(p)) > rem {
		p, err = p[:rem], io.EOF
	}
	n := 0
	for n < len(p) {
		bo := int((off + int64(n)) % int64(len(r.block)))
		n += copy(p[n:], r.block[bo:])
	}
	return n, err
}

func (r *repeatReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return 0, errors.New("repeatReader: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("repeatReader: negative position")
	}
	r.off = abs
	return abs, nil
}

// Size is the body length, for callers that set Content-Length.
func (r *repeatReader) Size() int64 { return r.size }
