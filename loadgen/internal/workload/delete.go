package workload

import (
	"context"
	"sync/atomic"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
)

// deleteOp deletes a present key. In the delete workload it walks the key
// space in order (each object deleted once; the run ends when none is
// left); inside mixed it picks a random present key.
type deleteOp struct {
	c          *Common
	sequential bool
	next       atomic.Int64
}

func (o *deleteOp) do(ctx context.Context, w *worker) result {
	k := o.c.keys
	var i int
	if o.sequential {
		for {
			j := o.next.Add(1) - 1
			if j >= int64(k.n) {
				return result{op: opDelete, exhausted: true}
			}
			if _, ok := k.claimExclusive(int(j), false); ok {
				i = int(j)
				break
			}
		}
	} else {
		var ok bool
		if i, _, ok = k.findExclusive(w.rng.IntN(k.n), false); !ok {
			return result{op: opDelete, skipped: true}
		}
	}
	err := o.c.be.Delete(ctx, k.bucket(i), k.key(i))
	gone := err == nil || backend.IsNotFound(err)
	if gone {
		k.markGone(i)
	}
	k.releaseExclusive(i, !gone)
	return result{op: opDelete, err: err}
}
