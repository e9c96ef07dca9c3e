package peers

import (
	"context"
	"sync"
)

// budget bounds the bytes one connection holds for sending, or received
// and not yet handled (Limits.SendQueue, RecvQueue).
type budget struct {
	cap int64

	mu   sync.Mutex
	used int64
	free chan struct{} // closed, and replaced, when bytes are given back
}

func newBudget(cap int) *budget {
	return &budget{cap: int64(cap), free: make(chan struct{})}
}

// take waits until n bytes fit, leaving reserve bytes free, or until
// nothing is held (so a message larger than the bound still goes, alone),
// and takes them.
func (b *budget) take(ctx context.Context, n, reserve int) error {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+int64(n) <= b.cap-int64(reserve) {
			b.used += int64(n)
			b.mu.Unlock()
			return nil
		}
		free := b.free
		b.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// force takes n bytes without waiting: a small message the protocol's
// own credit bounds.
func (b *budget) force(n int) {
	b.mu.Lock()
	b.used += int64(n)
	b.mu.Unlock()
}

// give returns n bytes.
func (b *budget) give(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= int64(n)
	close(b.free)
	b.free = make(chan struct{})
	b.mu.Unlock()
}

// room is how many bytes fit now.
func (b *budget) room() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int(max(0, b.cap-b.used))
}
