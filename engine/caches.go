package engine

import (
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// heldCache keeps recently stored versions for the judge's chain checks
// (an edit's prev is usually the version stored just before it). Two
// generations: when the current one fills it becomes the previous one.
// Guarded by Store.mu; filled only from committed batches.
type heldCache struct {
	size      int
	cur, prev map[canonical.ID]*record.Version
}

func (c *heldCache) get(d canonical.ID) (*record.Version, bool) {
	if v, ok := c.cur[d]; ok {
		return v, true
	}
	v, ok := c.prev[d]
	return v, ok
}

func (c *heldCache) put(d canonical.ID, v *record.Version) {
	if c.cur == nil || len(c.cur) >= (c.size+1)/2 {
		c.prev = c.cur
		c.cur = make(map[canonical.ID]*record.Version, 256)
	}
	c.cur[d] = v
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
