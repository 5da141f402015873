package workload

import "context"

// listOp lists one page (up to 1000 keys) of a random bucket under the key
// prefix.
type listOp struct{ c *Common }

func (o *listOp) do(ctx context.Context, w *worker) result {
	k := o.c.keys
	rctx, cancel := o.c.reqCtx(ctx)
	_, err := o.c.be.List(rctx, k.buckets[w.rng.IntN(len(k.buckets))], k.prefix, listPage)
	cancel()
	return result{op: opList, err: err}
}
