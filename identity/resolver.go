package identity

import "sync"

// Resolver turns did:key strings into public keys, remembering the most
// recent ones: decompressing a point costs about as much as a quarter of a
// verification, and the same few authors sign most versions. It holds at
// most Size keys (default 4096); safe for concurrent use.
type Resolver struct {
	Size int

	mu   sync.Mutex
	cur  map[string]*PublicKey
	prev map[string]*PublicKey
}

// Resolve returns the key a did:key names, or the error of [ParseDID].
// Refusals are not remembered.
func (r *Resolver) Resolve(did string) (*PublicKey, error) {
	r.mu.Lock()
	if k, ok := r.cur[did]; ok {
		r.mu.Unlock()
		return k, nil
	}
	if k, ok := r.prev[did]; ok {
		r.putLocked(did, k)
		r.mu.Unlock()
		return k, nil
	}
	r.mu.Unlock()
	k, err := ParseDID(did)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.putLocked(did, k)
	r.mu.Unlock()
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
