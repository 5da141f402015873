// Package workload generates load: one file per operation (put.go, get.go,
// delete.go, list.go, stat.go, mixed.go) over the shared machinery here
// (key space, workers, closed and open loops, error-ratio stop, prefill and
// cleanup). Aggregation lives in package stats.
package workload

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/config"
)

type opKind int

const (
	opPut opKind = iota
	opGet
	opDelete
	opList
	opStat
)

// OpNames are the operation names of the result, indexed by opKind.
var OpNames = []string{"put", "get", "delete", "list", "stat"}

// TTFBOps are the operations that report a time to first byte.
var TTFBOps = map[string]bool{"get": true}

// Stop reasons written to "stopped_reason".
const (
	StopErrorRatio    = "error-ratio"
	StopInterrupted   = "interrupted"
	StopKeysExhausted = "keys-exhausted"
)

// ErrInterrupted is the cancel cause the caller uses for SIGINT/SIGTERM.
var ErrInterrupted = errors.New("interrupted")

// listPage is how many keys one list operation asks for.
const listPage = 1000

// minOpsForErrorRatio: the error ratio is only judged after this many ops.
const minOpsForErrorRatio = 100

// result is what one operation reports back to the loop.
type result struct {
	op        opKind
	bytes     int64
	firstByte time.Time // when response headers arrived (GET); zero otherwise
	err       error
	skipped   bool // no usable key right now; nothing was sent
	exhausted bool // no usable key ever again; nothing was sent
}

// operation is one kind of request; do runs one of them for worker w.
type operation interface {
	do(ctx context.Context, w *worker) result
}

// worker is one goroutine's private state.
type worker struct {
	id  int
	rng *rand.Rand
}

func (c *Common) newWorker(id int) *worker {
	return &worker{id: id, rng: rand.New(rand.NewPCG(uint64(c.cfg.Seed), uint64(id)+1))}
}

// Common is the state shared by every operation of a run.
type Common struct {
	cfg     *config.Config
	be      backend.Client
	keys    *keySpace
	payload *backend.Payload
	log     io.Writer

	// Hold, when set, is called between prefill and the warm-up: it returns once the measured phase may
	// start, false when ctx ended first (--hold: cephbench's start barrier across client hosts).
	Hold func(ctx context.Context) bool

	mu      sync.Mutex
	created []string // buckets this run created, in order
	deleted map[string]bool
}

// New prepares a run; nothing is sent until Prepare.
func New(cfg *config.Config, be backend.Client, log io.Writer) *Common {
	// Without prefill the key space is taken to exist already (a kept data
	// set), except for PUT, which needs nothing.
	present := !cfg.Prefill && cfg.Workload != config.OpPut
	return &Common{
		cfg: cfg, be: be, log: log,
		keys:    newKeySpace(cfg, present),
		payload: backend.NewPayloadFor(uint64(cfg.Seed), cfg.MaxSize()),
		deleted: map[string]bool{},
	}
}

// reqCtx bounds one bucket-level or list request by --timeout (object
// requests are bounded by the backend itself, without a context each).
func (c *Common) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// newOperation builds the operation(s) of the configured workload.
func (c *Common) newOperation() operation {
	switch c.cfg.Workload {
	case config.OpPut:
		return &putOp{c}
	case config.OpGet:
		return &getOp{c}
	case config.OpDelete:
		return &deleteOp{c: c, sequential: true}
	case config.OpList:
		return &listOp{c}
	case config.OpStat:
		return &statOp{c}
	default:
		return newMixedOp(c)
	}
}

// errGuard stops a phase when errors/attempts exceeds the ratio after at
// least minOps attempts.
type errGuard struct {
	ratio  float64
	minOps int64
	n, e   atomic.Int64
}

func (g *errGuard) observe(isErr bool) (exceeded bool) {
	n := g.n.Add(1)
	e := g.e.Load()
	if isErr {
		e = g.e.Add(1)
	}
	return n >= g.minOps && float64(e) > g.ratio*float64(n)
}

// halter stops a phase from issuing new operations, once, with a reason.
type halter struct {
	once   sync.Once
	ch     chan struct{}
	reason atomic.Value // string
	at     atomic.Int64 // unix ns
}

func newHalter() *halter { return &halter{ch: make(chan struct{})} }

func (h *halter) halt(reason string) {
	h.once.Do(func() {
		h.reason.Store(reason)
		h.at.Store(time.Now().UnixNano())
		close(h.ch)
	})
}

func (h *halter) halted() bool {
	select {
	case <-h.ch:
		return true
	default:
		return false
	}
}

func (h *halter) why() string {
	s, _ := h.reason.Load().(string)
	return s
}
