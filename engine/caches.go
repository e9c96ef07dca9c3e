package engine

import (
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// DefaultCacheBytes is Options.CacheBytes's default: 1 MiB of versions
// as stored, some 2,000 of 500 bytes. Decoded, a version weighs about
// six times its stored bytes when it names many files (its file entries
// parsed), so the cache holds some 6 MB whatever the versions are like.
const DefaultCacheBytes = 1 << 20

// heldCache keeps recently stored versions for the judge's chain checks
// (an edit's prev is usually the version stored just before it). Two
// generations: when the current one fills, in number or in bytes, it
// becomes the previous one, so it holds at most size versions and bytes
// of them (each weighed by its bytes as stored) plus the one version
// that alone may weigh more than half. Guarded by Store.mu; filled only
// from committed batches.
type heldCache struct {
	size                int
	bytes               int64
	cur, prev           map[canonical.ID]*record.Version
	curBytes, prevBytes int64
}

func (c *heldCache) get(d canonical.ID) (*record.Version, bool) {
	if v, ok := c.cur[d]; ok {
		return v, true
	}
	v, ok := c.prev[d]
	return v, ok
}

// put keeps v, stored as weight bytes.
func (c *heldCache) put(d canonical.ID, v *record.Version, weight int) {
	if c.cur == nil || len(c.cur) >= (c.size+1)/2 || (len(c.cur) > 0 && c.curBytes+int64(weight) > c.bytes/2) {
		c.prev, c.prevBytes = c.cur, c.curBytes
		c.cur, c.curBytes = make(map[canonical.ID]*record.Version, 256), 0
	}
	c.cur[d] = v
	c.curBytes += int64(weight)
}

// held is how many versions the cache holds and their bytes as stored.
func (c *heldCache) held() (n int, bytes int64) {
	return len(c.cur) + len(c.prev), c.curBytes + c.prevBytes
}

// refusalSet remembers refusals as (peer, id) only, never by id alone
// (02 §9.5), in memory, bounded: the oldest half is forgotten when full.
type refusalSet struct {
	size int

	mu        sync.Mutex
	cur, prev map[refusal]struct{}
}

type refusal struct {
	peer string
	id   canonical.ID
}

func (r *refusalSet) add(peer string, id canonical.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || len(r.cur) >= (r.size+1)/2 {
		r.prev = r.cur
		r.cur = make(map[refusal]struct{}, 256)
	}
	r.cur[refusal{peer, id}] = struct{}{}
}

func (r *refusalSet) has(peer string, id canonical.ID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := refusal{peer, id}
	_, a := r.cur[k]
	_, b := r.prev[k]
	return a || b
}

// Refused reports whether the store refused the version with this id when
// peer sent it, so the caller need not ask that peer for it again. It says
// nothing about copies from anyone else (02 §3.2, §9.5).
func (s *Store) Refused(peer string, id canonical.ID) bool {
	return s.refusals.has(peer, id)
}
