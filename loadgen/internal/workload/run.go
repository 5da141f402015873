package workload

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/stats"
)

// Outcome is the measured part of the result document.
type Outcome struct {
	StartUnixNs   int64
	DurationS     float64
	StoppedReason string // "" = ran to the end
	Summary       stats.Summary
	Prefill       *PrefillInfo
	WarmupOps     int64
	UnsentOps     int64 // open loop: ops of the schedule never sent by the end of the window
}

// PrefillInfo describes the prefill phase (not part of the statistics).
type PrefillInfo struct {
	Objects   int64   `json:"objects"`
	Bytes     int64   `json:"bytes"`
	Errors    int64   `json:"errors"`
	DurationS float64 `json:"duration_s"`
}

// Run prefills (if asked), then runs warm-up and the measured phase. ctx
// is cancelled with cause ErrInterrupted on the first signal: in-flight
// requests are abandoned and the outcome so far is returned.
func (c *Common) Run(ctx context.Context) (*Outcome, error) {
	out := &Outcome{}
	if c.cfg.Prefill {
		info, reason := c.prefill(ctx)
		out.Prefill = info
		if reason != "" {
			return unmeasured(out, reason)
		}
	}
	// the other clients' setup and prefill may take longer: their measured phases start together, or the
	// controller's common window would be where they did not overlap
	if c.Hold != nil && !c.Hold(ctx) {
		return unmeasured(out, StopInterrupted)
	}
	return c.measure(ctx, out)
}

// unmeasured is the outcome of a run stopped before its measured phase.
func unmeasured(out *Outcome, reason string) (*Outcome, error) {
	out.StoppedReason = reason
	out.StartUnixNs = time.Now().UnixNano()
	s, err := stats.NewCollector(OpNames, time.Now()).Summarize(0, TTFBOps)
	out.Summary = s
	return out, err
}

func stopReason(ctx context.Context, h *halter) string {
	if ctx.Err() != nil {
		return StopInterrupted
	}
	return h.why()
}

// prefill writes every key of the key space once, with the run's
// concurrency.
func (c *Common) prefill(ctx context.Context) (*PrefillInfo, string) {
	fmt.Fprintf(c.log, "cephbench-loadgen: prefill: writing %d objects over %d bucket(s)\n", c.keys.n, len(c.keys.buckets))
	start := time.Now()
	info := &PrefillInfo{}
	h := newHalter()
	g := &errGuard{ratio: c.cfg.MaxErrorRatio, minOps: minOpsForErrorRatio}
	var next, objects, bytes, errs atomic.Int64
	var wg sync.WaitGroup
	for range min(c.cfg.Concurrency, c.keys.n) {
		wg.Go(func() {
			for !h.halted() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= c.keys.n {
					return
				}
				wasPresent, ok := c.keys.claimExclusive(i, true)
				if !ok {
					continue
				}
				res := c.putKey(ctx, i, wasPresent)
				if res.err != nil && ctx.Err() != nil {
					return
				}
				if res.err != nil {
					errs.Add(1)
				} else {
					objects.Add(1)
					bytes.Add(res.bytes)
				}
				if g.observe(res.err != nil) {
					h.halt(StopErrorRatio)
				}
			}
		})
	}
	wg.Wait()
	info.Objects, info.Bytes, info.Errors = objects.Load(), bytes.Load(), errs.Load()
	info.DurationS = time.Since(start).Seconds()
	return info, stopReason(ctx, h)
}

// phase is the shared state of the load loops of one measured phase.
type phase struct {
	c       *Common
	ctx     context.Context
	op      operation
	col     *stats.Collector
	guard   *errGuard
	halt    *halter
	mStart  time.Time
	mEnd    time.Time // zero: run by op count
	budget  atomic.Int64
	counted bool // whether budget applies
	warmOps atomic.Int64
	unsent  atomic.Int64 // open loop: measured ops never sent (rate not kept up)
}

// measure runs warm-up then the measured phase, in a closed loop (N
// workers back to back) or an open loop (--rate: an arrival schedule fed to
// N workers; latency counts from each op's intended send time, so queueing
// behind a stalled server shows in the tail: coordinated omission
// correction).
func (c *Common) measure(ctx context.Context, out *Outcome) (*Outcome, error) {
	cfg := c.cfg
	start := time.Now()
	p := &phase{
		c: c, ctx: ctx, op: c.newOperation(), halt: newHalter(),
		guard:  &errGuard{ratio: cfg.MaxErrorRatio, minOps: minOpsForErrorRatio},
		mStart: start.Add(cfg.Warmup),
	}
	if cfg.Duration > 0 {
		p.mEnd = p.mStart.Add(cfg.Duration)
	} else {
		p.counted = true
		p.budget.Store(cfg.Ops)
	}
	p.col = stats.NewCollector(OpNames, p.mStart)
	if cfg.Warmup > 0 {
		fmt.Fprintf(c.log, "cephbench-loadgen: warm-up %v, then measuring\n", cfg.Warmup)
	}
	var wg sync.WaitGroup
	if cfg.OpenLoop() {
		ch := make(chan time.Time, 4*cfg.Concurrency)
		wg.Go(func() { p.schedule(start, ch) })
		for id := range cfg.Concurrency {
			w := c.newWorker(id)
			wg.Go(func() { p.openWorker(w, ch) })
		}
	} else {
		for id := range cfg.Concurrency {
			w := c.newWorker(id)
			wg.Go(func() { p.closedWorker(w) })
		}
	}
	done := make(chan struct{})
	var progress sync.WaitGroup
	progress.Go(func() { p.progress(done, time.Second) })
	wg.Wait()
	close(done)
	progress.Wait()
	end := time.Now()
	out.StoppedReason = stopReason(ctx, p.halt)
	if out.StoppedReason == StopInterrupted {
		end = time.Now()
	} else if at := p.halt.at.Load(); at != 0 {
		end = time.Unix(0, at)
	}
	if !p.mEnd.IsZero() && end.After(p.mEnd) {
		end = p.mEnd
	}
	dur := max(end.Sub(p.mStart), 0)
	out.StartUnixNs = p.mStart.UnixNano()
	out.DurationS = dur.Seconds()
	out.WarmupOps = p.warmOps.Load()
	out.UnsentOps = p.unsent.Load()
	var err error
	out.Summary, err = p.col.Summarize(out.DurationS, TTFBOps)
	return out, err
}

// progress prints, once per interval of the measured phase, what the last
// interval achieved, so that whoever runs loadgen can show live figures:
//
//	cephbench-loadgen: progress t=3s ops_per_s=1523.0 bytes_per_s=6238208
func (p *phase) progress(done <-chan struct{}, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lastOps, lastBytes int64
	last := p.mStart
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if now.Before(p.mStart) {
				continue // warm-up
			}
			ops, bytes := p.col.Totals()
			dt := now.Sub(last).Seconds()
			fmt.Fprintf(p.c.log, "cephbench-loadgen: progress t=%.0fs ops_per_s=%.1f bytes_per_s=%.0f\n",
				now.Sub(p.mStart).Seconds(), float64(ops-lastOps)/dt, float64(bytes-lastBytes)/dt)
			lastOps, lastBytes, last = ops, bytes, now
		}
	}
}

func (p *phase) stopped() bool { return p.ctx.Err() != nil || p.halt.halted() }

// admit decides whether an op intended at t may run, and whether it is
// measured (not warm-up).
func (p *phase) admit(t time.Time) (run, measured bool) {
	if t.Before(p.mStart) {
		return true, false
	}
	if !p.mEnd.IsZero() && !t.Before(p.mEnd) {
		return false, false
	}
	if p.counted && p.budget.Add(-1) < 0 {
		return false, false
	}
	return true, true
}

func (p *phase) closedWorker(w *worker) {
	streak := 0
	for !p.stopped() {
		t := time.Now()
		run, measured := p.admit(t)
		if !run {
			return
		}
		res := p.op.do(p.ctx, w)
		if res.skipped || res.exhausted {
			if measured && p.counted {
				p.budget.Add(1)
			}
			if res.exhausted {
				p.halt.halt(StopKeysExhausted)
				return
			}
			if streak++; streak > 64 {
				time.Sleep(time.Millisecond)
			}
			continue
		}
		streak = 0
		p.account(res, t, time.Now(), measured)
	}
}

// schedule feeds intended send times to the workers. It never sends an
// op early; when it falls behind it sends at once, and the op's latency
// still counts from its intended time. With --duration it gives up at the
// end of the window: ops intended inside it but still unsent then (the
// server could not keep up with the rate) are counted in unsent.
func (p *phase) schedule(start time.Time, ch chan<- time.Time) {
	defer close(ch)
	cfg := p.c.cfg
	arr := newArrivals(cfg.Rate, cfg.Arrival == "poisson", uint64(cfg.Seed))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var end <-chan time.Time // closes the window in duration mode
	if !p.mEnd.IsZero() {
		et := time.NewTimer(time.Until(p.mEnd))
		defer et.Stop()
		end = et.C
	}
	giveUp := func(t time.Time) {
		n := int64(1)
		for next := start.Add(arr.next()); next.Before(p.mEnd); next = start.Add(arr.next()) {
			n++
		}
		if !t.Before(p.mStart) {
			p.unsent.Add(n)
		}
	}
	for !p.stopped() {
		t := start.Add(arr.next())
		if run, _ := p.admit(t); !run {
			return
		}
		if d := time.Until(t); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-p.ctx.Done():
				return
			case <-p.halt.ch:
				return
			}
		}
		select {
		case ch <- t:
		case <-end:
			giveUp(t)
			return
		case <-p.ctx.Done():
			return
		case <-p.halt.ch:
			return
		}
	}
}

func (p *phase) openWorker(w *worker, ch <-chan time.Time) {
	for t := range ch {
		if p.stopped() {
			continue // drain what was scheduled, send nothing more
		}
		res := p.op.do(p.ctx, w)
		if res.exhausted {
			p.halt.halt(StopKeysExhausted)
			continue
		}
		if res.skipped {
			continue
		}
		p.account(res, t, time.Now(), !t.Before(p.mStart))
	}
}

// account records one finished op; start is its (intended) start.
func (p *phase) account(res result, start, end time.Time, measured bool) {
	if res.err != nil && p.ctx.Err() != nil {
		return // abandoned on interrupt, not the server's doing
	}
	kind := backend.Kind(res.err)
	if p.guard.observe(kind != "") {
		p.halt.halt(StopErrorRatio)
	}
	if !measured {
		p.warmOps.Add(1)
		return
	}
	s := stats.Sample{Op: int(res.op), Lat: end.Sub(start), Kind: kind, End: end}
	if kind == "" {
		s.Bytes = res.bytes
		if !res.firstByte.IsZero() {
			s.TTFB = max(res.firstByte.Sub(start), 1)
		}
	}
	p.col.Record(s)
}
