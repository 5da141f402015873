package workload

import (
	"math/rand/v2"
	"time"
)

// arrivals yields the intended send times of an open loop as offsets from
// the start of the phase: evenly spaced (constant) or with exponential gaps
// (poisson), both averaging rate per second.
type arrivals struct {
	rate    float64
	poisson bool
	rng     *rand.Rand
	k       int64   // ops scheduled so far (constant)
	t       float64 // seconds (poisson)
}

func newArrivals(rate float64, poisson bool, seed uint64) *arrivals {
	return &arrivals{rate: rate, poisson: poisson, rng: rand.New(rand.NewPCG(seed, 0xa5a5a5a5))}
}

// next returns the offset of the next op; the first is at 0.
func (a *arrivals) next() time.Duration {
	if !a.poisson {
		off := time.Duration(float64(a.k) * 1e9 / a.rate)
		a.k++
		return off
	}
	off := time.Duration(a.t * 1e9)
	a.t += a.rng.ExpFloat64() / a.rate
	return off
}
