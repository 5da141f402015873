package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cephbench/cephbench/loadgen/internal/backend"
	"github.com/cephbench/cephbench/loadgen/internal/config"
)

// Prepare checks every bucket first, then creates the missing ones. A
// bucket that exists without --use-existing, or is missing with it, is a
// *config.UsageError and nothing is created. Only buckets this run created
// are ever deleted.
func (c *Common) Prepare(ctx context.Context) error {
	cfg := c.cfg
	var missing []string
	for b := range cfg.Buckets {
		name := cfg.BucketName(b)
		rctx, cancel := c.reqCtx(ctx)
		exists, err := c.be.BucketExists(rctx, name)
		cancel()
		if se := (*backend.StatusError)(nil); errors.As(err, &se) && se.Status == 403 {
			return config.Usagef("--bucket-prefix", "choose another --bucket-prefix",
				"bucket %q exists and belongs to another user (HTTP 403)", name)
		}
		if err != nil {
			return fmt.Errorf("checking bucket %s: %w", name, err)
		}
		switch {
		case exists && !cfg.UseExisting:
			return config.Usagef("--bucket-prefix",
				"choose another --bucket-prefix, or add --use-existing to use it (it is then never deleted)",
				"bucket %q already exists", name)
		case !exists && cfg.UseExisting:
			return config.Usagef("--use-existing",
				"create it first, or drop --use-existing to let the run create and remove its own buckets",
				"bucket %q does not exist", name)
		case !exists:
			missing = append(missing, name)
		}
	}
	for _, name := range missing {
		rctx, cancel := c.reqCtx(ctx)
		created, err := c.be.CreateBucket(rctx, name)
		cancel()
		if err != nil {
			return fmt.Errorf("creating bucket %s: %w", name, err)
		}
		if !created {
			return fmt.Errorf("bucket %s appeared while this run was creating it; not using it", name)
		}
		c.mu.Lock()
		c.created = append(c.created, name)
		c.mu.Unlock()
	}
	return nil
}

// CleanupInfo says what cleanup removed and what is left.
type CleanupInfo struct {
	Kept           bool     `json:"kept"`
	ObjectsDeleted int64    `json:"objects_deleted"`
	ObjectsLeft    int64    `json:"objects_left"`
	BucketsDeleted []string `json:"buckets_deleted"`
	BucketsLeft    []string `json:"buckets_left"`
	Errors         []string `json:"errors,omitempty"`
}

// Cleanup deletes the objects this run wrote, then the buckets it created,
// with the run's concurrency. A 404 counts as deleted.
func (c *Common) Cleanup(ctx context.Context) CleanupInfo {
	info := CleanupInfo{BucketsDeleted: []string{}, BucketsLeft: []string{}}
	k := c.keys
	var next, deleted atomic.Int64
	var errMu sync.Mutex
	errKinds := map[string]int{}
	var wg sync.WaitGroup
	for range min(c.cfg.Concurrency, k.n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= k.n {
					return
				}
				if !k.written[i].Load() {
					continue
				}
				err := c.be.Delete(ctx, k.bucket(i), k.key(i))
				if err == nil || backend.IsNotFound(err) {
					k.markGone(i)
					deleted.Add(1)
					continue
				}
				errMu.Lock()
				errKinds[backend.Kind(err)]++
				errMu.Unlock()
			}
		})
	}
	wg.Wait()
	info.ObjectsDeleted = deleted.Load()
	info.ObjectsLeft = k.nWrit.Load()
	for kind, n := range errKinds {
		info.Errors = append(info.Errors, fmt.Sprintf("%d object deletes failed: %s", n, kind))
	}
	for _, b := range c.createdBuckets() {
		if ctx.Err() != nil {
			info.BucketsLeft = append(info.BucketsLeft, b)
			continue
		}
		rctx, cancel := c.reqCtx(ctx)
		err := c.be.DeleteBucket(rctx, b)
		cancel()
		if err != nil && !backend.IsNotFound(err) {
			info.BucketsLeft = append(info.BucketsLeft, b)
			info.Errors = append(info.Errors, fmt.Sprintf("bucket %s: %s", b, backend.Kind(err)))
			continue
		}
		info.BucketsDeleted = append(info.BucketsDeleted, b)
		c.mu.Lock()
		c.deleted[b] = true
		c.mu.Unlock()
	}
	sort.Strings(info.Errors)
	return info
}

// KeepInfo describes a run that keeps what it created.
func (c *Common) KeepInfo() CleanupInfo {
	return CleanupInfo{Kept: true, ObjectsLeft: c.keys.nWrit.Load(), BucketsDeleted: []string{}, BucketsLeft: c.createdBuckets()}
}

func (c *Common) createdBuckets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, b := range c.created {
		if !c.deleted[b] {
			out = append(out, b)
		}
	}
	return out
}

// Leftover says what the run created that is still there, for a message
// when the user insists on exiting before cleanup ends. Safe at any time.
func (c *Common) Leftover() string {
	n := c.keys.nWrit.Load()
	bs := c.createdBuckets()
	if n == 0 && len(bs) == 0 {
		return "nothing left behind"
	}
	s := fmt.Sprintf("left behind: up to %d object(s) named %s* in bucket(s) %s*", n, c.cfg.KeyPrefix, c.cfg.BucketPrefix)
	if len(bs) > 0 {
		s += "; bucket(s) created by this run: " + strings.Join(bs, ", ")
	}
	return s
}
