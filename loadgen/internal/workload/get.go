package workload

import "context"

// getOp reads a random present key, whole or (--range-size) a range at a
// random offset.
type getOp struct{ c *Common }

func (o *getOp) do(ctx context.Context, w *worker) result {
	return o.c.withShared(w, opGet, func(i int) result { return o.get(ctx, w, i) })
}

func (o *getOp) get(ctx context.Context, w *worker, i int) result {
	k := o.c.keys
	var off, length int64
	if rs := o.c.cfg.RangeSize; rs > 0 {
		if size := k.size(i); size > rs {
			off, length = w.rng.Int64N(size-rs+1), rs
		}
	}
	n, first, err := o.c.be.Get(ctx, k.bucket(i), k.key(i), off, length)
	return result{op: opGet, bytes: n, firstByte: first, err: err}
}

// withShared runs f on a random present key held shared (GET, HEAD).
func (c *Common) withShared(w *worker, op opKind, f func(i int) result) result {
	k := c.keys
	i, ok := k.findShared(w.rng.IntN(k.n))
	if !ok {
		return result{op: op, skipped: true}
	}
	defer k.releaseShared(i)
	return f(i)
}
