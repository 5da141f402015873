package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

var sizeUnits = map[string]int64{
	"":    1,
	"b":   1,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"kb":  1000,
	"mb":  1000 * 1000,
	"gb":  1000 * 1000 * 1000,
	"tb":  1000 * 1000 * 1000 * 1000,
}

// ParseSize parses "4KiB", "1MB", "512", "1.5MiB" into bytes. Units are
// case-insensitive: B, KiB, MiB, GiB, TiB (powers of 1024) and KB, MB, GB, TB
// (powers of 1000). A plain integer is bytes. The result must be a whole
// number of bytes and not negative.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q does not start with a number", s)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q has unknown unit %q", s, t[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q is not a number", s)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a number", s)
	}
	v := f * float64(mult)
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(v), nil
}

// FormatSize prints bytes with the largest binary unit that divides them.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Weighted is one entry of a weighted choice.
type Weighted[T any] struct {
	Value  T
	Weight uint64
}

// ParseWeights parses "a:70,b:30" into weighted entries, keeping the order
// given. parse turns each name into a value. Weights are non-negative
// integers; duplicates and an all-zero sum are errors. Entries of weight zero
// are dropped.
func ParseWeights[T any](s string, parse func(string) (T, error)) ([]Weighted[T], error) {
	var out []Weighted[T]
	seen := map[string]bool{}
	var sum uint64
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty list")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, w, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("entry %q is not NAME:WEIGHT", part)
		}
		name = strings.TrimSpace(name)
		weight, err := strconv.ParseUint(strings.TrimSpace(w), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("weight %q of %q is not a non-negative integer", w, name)
		}
		v, err := parse(name)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(name)
		if seen[key] {
			return nil, fmt.Errorf("%q appears twice", name)
		}
		seen[key] = true
		sum += weight
		if weight > 0 {
			out = append(out, Weighted[T]{Value: v, Weight: weight})
		}
	}
	if sum == 0 {
		return nil, fmt.Errorf("weights sum to zero")
	}
	return out, nil
}

// Chooser picks from weighted entries given a uniform random number.
type Chooser[T any] struct {
	values []T
	cum    []uint64
	total  uint64
}

// NewChooser builds a chooser; entries must have a positive total weight.
func NewChooser[T any](ws []Weighted[T]) *Chooser[T] {
	c := &Chooser[T]{}
	for _, w := range ws {
		if w.Weight == 0 {
			continue
		}
		c.total += w.Weight
		c.values = append(c.values, w.Value)
		c.cum = append(c.cum, c.total)
	}
	if c.total == 0 {
		panic("config: chooser with zero total weight")
	}
	return c
}

// Pick maps a uniform random r (any uint64) onto an entry.
func (c *Chooser[T]) Pick(r uint64) T {
	if len(c.values) == 1 {
		return c.values[0]
	}
	x := r % c.total
	i := sort.Search(len(c.cum), func(i int) bool { return c.cum[i] > x })
	return c.values[i]
}

// Len is the number of entries with a positive weight.
func (c *Chooser[T]) Len() int { return len(c.values) }
