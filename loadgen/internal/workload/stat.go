package workload

import "context"

// statOp sends HEAD for a random present key.
type statOp struct{ c *Common }

func (o *statOp) do(ctx context.Context, w *worker) result {
	return o.c.withShared(w, opStat, func(i int) result {
		return result{op: opStat, err: o.c.be.Stat(ctx, o.c.keys.bucket(i), o.c.keys.key(i))}
	})
}
