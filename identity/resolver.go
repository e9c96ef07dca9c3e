package identity

import (
	"strings"
	"sync"

	"github.com/minca-go/minca/internal/p256"
)

// Resolver turns did:key strings into public keys, remembering the most
// recent ones: decompressing a point costs about as much as a quarter of a
// verification, and the same few authors sign most versions. It holds at
// most Size keys (default 4096); safe for concurrent use.
//
// The keys it resolves most often it also expands for fast verification
// (package internal/p256: a table of the key's multiples, 148 KiB, built
// once in about forty verifications' time, then each verification about
// 40% of the work of crypto/ecdsa's): a key resolved HotAfter times
// (default 32) gets a table, and at most Tables keys hold one at a time
// (default 40, about 5.9 MB); past that the key least used since the last
// choice loses its table.
type Resolver struct {
	Size     int
	Tables   int
	HotAfter int

	mu   sync.Mutex
	cur  map[string]*PublicKey
	prev map[string]*PublicKey
	// hot are the keys holding a table; building is set while one is
	// built (one at a time, outside mu).
	hot      []*PublicKey
	building bool
}

// Resolve returns the key a did:key names, or the error of [ParseDID].
// Refusals are not remembered.
func (r *Resolver) Resolve(did string) (*PublicKey, error) {
	r.mu.Lock()
	k, ok := r.cur[did]
	if !ok {
		if k, ok = r.prev[did]; ok {
			r.putLocked(did, k)
		}
	}
	r.mu.Unlock()
	if !ok {
		var err error
		if k, err = ParseDID(did); err != nil {
			return nil, err
		}
		r.mu.Lock()
		// A copy of the text: did may be cut from the line a version was
		// read from, which the map would keep alive.
		r.putLocked(strings.Clone(did), k)
		r.mu.Unlock()
	}
	r.count(k)
	return k, nil
}

// putLocked keeps two generations: when the current one fills, it becomes
// the previous and the oldest is dropped, an LRU approximation with no
// per-entry bookkeeping.
func (r *Resolver) putLocked(did string, k *PublicKey) {
	size := r.Size
	if size <= 0 {
		size = 4096
	}
	if r.cur == nil || len(r.cur) >= (size+1)/2 {
		r.prev = r.cur
		r.cur = make(map[string]*PublicKey, (size+1)/2)
	}
	r.cur[did] = k
}

// count notes a use of k and expands it once it is used often. When
// every table is taken, the key least used since the last choice gives its
// table up only if it was used fewer times than k meanwhile, so that more
// hot keys than tables do not rebuild tables in turn.
func (r *Resolver) count(k *PublicKey) {
	hotAfter := int64(r.HotAfter)
	if hotAfter <= 0 {
		hotAfter = 32
	}
	if k.uses.Add(1) < hotAfter || k.fast.Load() != nil {
		return
	}
	tables := r.Tables
	if tables <= 0 {
		tables = 40
	}
	r.mu.Lock()
	if r.building {
		r.mu.Unlock()
		return // one is built at a time; this key's turn comes
	}
	if len(r.hot) >= tables && r.hot[r.leastLocked()].uses.Load() >= hotAfter {
		// Every table is in use: count afresh, and compare again then.
		for _, h := range r.hot {
			h.uses.Store(0)
		}
		k.uses.Store(0)
		r.mu.Unlock()
		return
	}
	r.building = true
	r.mu.Unlock()
	b, err := k.key.Bytes()
	var fast *p256.PublicKey
	if err == nil {
		fast, err = p256.Precompute(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.building = false
	if err != nil {
		k.uses.Store(-1 << 62) // never again: crypto/ecdsa verifies it
		return
	}
	if len(r.hot) >= tables {
		i := r.leastLocked()
		r.hot[i].fast.Store(nil)
		r.hot = append(r.hot[:i], r.hot[i+1:]...)
		for _, h := range r.hot {
			h.uses.Store(0)
		}
	}
	k.fast.Store(fast)
	k.uses.Store(0)
	r.hot = append(r.hot, k)
}

// leastLocked is the index of the hot key least used since the last
// choice.
func (r *Resolver) leastLocked() int {
	least := 0
	for i, h := range r.hot {
		if h.uses.Load() < r.hot[least].uses.Load() {
			least = i
		}
	}
	return least
}
