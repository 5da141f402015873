package workload

import (
	"strconv"
	"sync/atomic"

	"github.com/cephbench/cephbench/loadgen/internal/config"
)

// keySpace is the set of objects a run works on: index i lives in bucket
// i mod B under key prefix+%08d, with a size fixed by (seed, i) so that every
// PUT of a key writes the same size and a ranged GET knows the object length.
//
// Each key has a state word so that concurrent operations on one key never
// contradict each other (a GET racing a DELETE of the same key would count a
// 404 that the server did nothing wrong to earn):
//
//	-1  one PUT or DELETE in flight (exclusive)
//	 0  absent
//	 n  present, with n-1 GET/HEAD in flight (shared)
type keySpace struct {
	n       int
	prefix  string
	buckets []string
	sizes   *config.Chooser[int64]
	seed    uint64

	state   []atomic.Int32
	written []atomic.Bool // may exist on the server because this run wrote it
	nWrit   atomic.Int64
}

// maxProbe bounds the search for a usable key from a random start.
const maxProbe = 4096

func newKeySpace(cfg *config.Config, present bool) *keySpace {
	k := &keySpace{
		n:       cfg.Objects,
		prefix:  cfg.KeyPrefix,
		sizes:   config.NewChooser(cfg.Sizes),
		seed:    uint64(cfg.Seed),
		state:   make([]atomic.Int32, cfg.Objects),
		written: make([]atomic.Bool, cfg.Objects),
	}
	for b := 0; b < cfg.Buckets; b++ {
		k.buckets = append(k.buckets, cfg.BucketName(b))
	}
	if present {
		for i := range k.state {
			k.state[i].Store(1)
		}
	}
	return k
}

func (k *keySpace) bucket(i int) string { return k.buckets[i%len(k.buckets)] }

func (k *keySpace) key(i int) string {
	var num [20]byte
	d := strconv.AppendInt(num[:0], int64(i), 10)
	var buf [96]byte
	b := append(buf[:0], k.prefix...)
	for pad := 8 - len(d); pad > 0; pad-- {
		b = append(b, '0')
	}
	return string(append(b, d...))
}

// splitmix64 is a fast bijective mixer, used for per-key sizes.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (k *keySpace) size(i int) int64 { return k.sizes.Pick(splitmix64(k.seed<<32 ^ uint64(i))) }

func (k *keySpace) claimShared(i int) bool {
	for {
		s := k.state[i].Load()
		if s < 1 {
			return false
		}
		if k.state[i].CompareAndSwap(s, s+1) {
			return true
		}
	}
}

func (k *keySpace) releaseShared(i int) { k.state[i].Add(-1) }

// claimExclusive takes key i for a PUT (allowAbsent) or DELETE; it reports
// whether the object was present before.
func (k *keySpace) claimExclusive(i int, allowAbsent bool) (wasPresent, ok bool) {
	s := k.state[i].Load()
	if s == 1 || (allowAbsent && s == 0) {
		return s == 1, k.state[i].CompareAndSwap(s, -1)
	}
	return false, false
}

func (k *keySpace) releaseExclusive(i int, present bool) {
	if present {
		k.state[i].Store(1)
	} else {
		k.state[i].Store(0)
	}
}

// findShared probes from start for a present key and claims it shared.
func (k *keySpace) findShared(start int) (int, bool) {
	for p := 0; p < min(k.n, maxProbe); p++ {
		i := (start + p) % k.n
		if k.claimShared(i) {
			return i, true
		}
	}
	return 0, false
}

// findExclusive probes from start for a key it can claim exclusively.
func (k *keySpace) findExclusive(start int, allowAbsent bool) (i int, wasPresent, ok bool) {
	for p := 0; p < min(k.n, maxProbe); p++ {
		i = (start + p) % k.n
		if wasPresent, ok = k.claimExclusive(i, allowAbsent); ok {
			return i, wasPresent, true
		}
	}
	return 0, false, false
}

// markWritten is called before a PUT is sent: even a failed PUT may leave
// an object behind, so cleanup must try it.
func (k *keySpace) markWritten(i int) {
	if !k.written[i].Swap(true) {
		k.nWrit.Add(1)
	}
}

func (k *keySpace) markGone(i int) {
	if k.written[i].Swap(false) {
		k.nWrit.Add(-1)
	}
}
