package workload

import "context"

// putOp writes a random key of the key space (new or overwrite) with the
// key's size.
type putOp struct{ c *Common }

func (o *putOp) do(ctx context.Context, w *worker) result {
	k := o.c.keys
	i, wasPresent, ok := k.findExclusive(w.rng.IntN(k.n), true)
	if !ok {
		return result{op: opPut, skipped: true}
	}
	return o.c.putKey(ctx, i, wasPresent)
}

// putKey writes key i, which the caller holds exclusively, and releases it.
func (c *Common) putKey(ctx context.Context, i int, wasPresent bool) result {
	k := c.keys
	size := k.size(i)
	k.markWritten(i)
	err := c.be.Put(ctx, k.bucket(i), k.key(i), c.payload.Reader(size), size)
	// A failed PUT leaves the old object, if any.
	k.releaseExclusive(i, err == nil || wasPresent)
	if err != nil {
		return result{op: opPut, err: err}
	}
	return result{op: opPut, bytes: size}
}
