package workload

import (
	"math"
	"testing"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/config"
)

func TestConstantArrivals(t *testing.T) {
	a := newArrivals(200, false, 1)
	for k := 0; k < 1000; k++ {
		want := time.Duration(k) * 5 * time.Millisecond
		if got := a.next(); got != want {
			t.Fatalf("op %d intended at %v, want %v", k, got, want)
		}
	}
}

func TestPoissonArrivals(t *testing.T) {
	const rate, n = 1000.0, 20000
	a, b := newArrivals(rate, true, 7), newArrivals(rate, true, 7)
	var prev time.Duration
	var gaps []float64
	for k := 0; k < n; k++ {
		t1, t2 := a.next(), b.next()
		if t1 != t2 {
			t.Fatal("same seed must give the same schedule")
		}
		if k == 0 && t1 != 0 {
			t.Fatalf("first op at %v", t1)
		}
		if t1 < prev {
			t.Fatal("schedule goes back in time")
		}
		if k > 0 {
			gaps = append(gaps, (t1 - prev).Seconds())
		}
		prev = t1
	}
	mean, sd := meanSD(gaps)
	// Exponential gaps: mean = sd = 1/rate; allow 5 % (n = 20000 gives ~0.7 % standard error).
	if math.Abs(mean-1/rate) > 0.05/rate || math.Abs(sd-1/rate) > 0.05/rate {
		t.Fatalf("gap mean %v sd %v, want both %v", mean, sd, 1/rate)
	}
	c, d := newArrivals(rate, true, 8), newArrivals(rate, true, 7)
	c.next()
	d.next()
	if c.next() == d.next() {
		t.Fatal("different seeds should give different schedules")
	}
}

func meanSD(xs []float64) (float64, float64) {
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

func testConfig() *config.Config {
	return &config.Config{Objects: 10, Buckets: 3, BucketPrefix: "b-", KeyPrefix: "k-", Seed: 3,
		Sizes: []config.Weighted[int64]{{Value: 4096, Weight: 70}, {Value: 1 << 20, Weight: 30}}}
}

func TestKeySpaceNamesAndSizes(t *testing.T) {
	k := newKeySpace(testConfig(), false)
	if k.key(7) != "k-00000007" || k.bucket(7) != "b-1" || k.key(123456789) != "k-123456789" {
		t.Fatalf("names %s %s %s", k.key(7), k.bucket(7), k.key(123456789))
	}
	big := 0
	k2 := newKeySpace(testConfig(), false)
	for i := 0; i < k.n; i++ {
		if k.size(i) != k2.size(i) {
			t.Fatal("key size must depend only on seed and index")
		}
	}
	cfg := testConfig()
	cfg.Objects = 10000
	k = newKeySpace(cfg, false)
	for i := 0; i < k.n; i++ {
		if k.size(i) == 1<<20 {
			big++
		}
	}
	if big < 2700 || big > 3300 {
		t.Fatalf("%d of 10000 keys are 1 MiB, want about 3000", big)
	}
}

func TestKeyStates(t *testing.T) {
	k := newKeySpace(testConfig(), false)
	if _, ok := k.findShared(0); ok {
		t.Fatal("GET must not find a key in an empty key space")
	}
	if _, ok := k.claimExclusive(3, false); ok {
		t.Fatal("DELETE must not claim an absent key")
	}
	was, ok := k.claimExclusive(3, true)
	if !ok || was {
		t.Fatal("PUT claims an absent key")
	}
	if _, ok := k.claimExclusive(3, true); ok {
		t.Fatal("two writers on one key")
	}
	k.releaseExclusive(3, true)
	i, ok := k.findShared(0)
	if !ok || i != 3 {
		t.Fatalf("found %d %v, want 3", i, ok)
	}
	if j, ok := k.findShared(3); !ok || j != 3 {
		t.Fatal("readers share a key")
	}
	if _, ok := k.claimExclusive(3, true); ok {
		t.Fatal("writer while readers hold the key")
	}
	k.releaseShared(3)
	k.releaseShared(3)
	if was, ok := k.claimExclusive(3, false); !ok || !was {
		t.Fatal("DELETE claims a present idle key")
	}
	k.markWritten(3)
	k.markWritten(3)
	if k.nWrit.Load() != 1 {
		t.Fatal("written counted twice")
	}
	k.markGone(3)
	if k.nWrit.Load() != 0 {
		t.Fatal("gone not counted")
	}
}
