// Package rate keeps token buckets by name: how often a peer, counted by
// its key or its source address, may do something that costs this node
// work (docs/sync.md, Limits).
package rate

import (
	"sync"
	"time"
)

// maxTracked bounds a table: past it the buckets that say nothing (full
// again) go first, then any, down to half.
const maxTracked = 1 << 16

// Buckets is a table of token buckets, one per name, each holding up to
// burst tokens and refilled at rate a second; a name not seen holds a
// full bucket. Safe for concurrent use. Memory is bounded: a full bucket
// is forgotten when the table grows past 65,536 names.
type Buckets struct {
	rate  float64
	burst float64

	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New makes a table of buckets of burst tokens, refilled at rate a second.
func New(rate float64, burst int) *Buckets {
	return &Buckets{rate: rate, burst: float64(burst), m: map[string]*bucket{}}
}

// Take takes a token from the bucket of each name, or from none and
// reports false when any of them is empty.
func (b *Buckets) Take(now time.Time, names ...string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	bs := make([]*bucket, 0, len(names))
	for _, n := range names {
		k := b.m[n]
		if k == nil {
			if len(b.m) >= maxTracked {
				b.prune(now)
			}
			k = &bucket{tokens: b.burst, last: now}
			b.m[n] = k
		}
		if now.After(k.last) {
			k.tokens = min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
			k.last = now
		}
		if k.tokens < 1 {
			return false
		}
		bs = append(bs, k)
	}
	for _, k := range bs {
		k.tokens--
	}
	return true
}

// prune drops the buckets that have filled again, then any, down to half
// the bound.
func (b *Buckets) prune(now time.Time) {
	for n, k := range b.m {
		if k.tokens+now.Sub(k.last).Seconds()*b.rate >= b.burst {
			delete(b.m, n)
		}
	}
	for n := range b.m {
		if len(b.m) < maxTracked/2 {
			break
		}
		delete(b.m, n)
	}
}
