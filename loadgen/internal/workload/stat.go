package workload

import "context"

// statOp sends HEAD for a random present key.
type statOp struct{ c *Common }

func (o *statOp) do(ctx context.Context, w *worker) result {
	k := o.c.keys
	i, ok := k.findShared(w.rng.IntN(k.n))
	if !ok {
		return result{op: opStat, skipped: true}
	}
	defer k.releaseShared(i)
	rctx, cancel := o.c.reqCtx(ctx)
	err := o.c.be.Stat(rctx, k.bucket(i), k.key(i))
	cancel()
	return result{op: opStat, err: err}
}
