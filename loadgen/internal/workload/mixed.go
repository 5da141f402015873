package workload

import (
	"context"

	"github.com/cephbench/cephbench/loadgen/internal/config"
)

// mixedOp runs the operations of --mix in proportion to their weights.
type mixedOp struct {
	pick *config.Chooser[operation]
}

func newMixedOp(c *Common) *mixedOp {
	var ws []config.Weighted[operation]
	for _, m := range c.cfg.Mix {
		var op operation
		switch m.Value {
		case config.OpPut:
			op = &putOp{c}
		case config.OpGet:
			op = &getOp{c}
		case config.OpDelete:
			op = &deleteOp{c: c}
		case config.OpList:
			op = &listOp{c}
		case config.OpStat:
			op = &statOp{c}
		}
		ws = append(ws, config.Weighted[operation]{Value: op, Weight: m.Weight})
	}
	return &mixedOp{pick: config.NewChooser(ws)}
}

func (o *mixedOp) do(ctx context.Context, w *worker) result {
	return o.pick.Pick(w.rng.Uint64()).do(ctx, w)
}
