package seal

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// Keyring is the keys one reader holds for one private space, and what it
// seals and opens with them (docs/private-spaces.md, Which keys a reader
// holds). A key is taken into the ring in two ways only: K₀, the key the
// genesis's encryptionKeyId names, as it is; any other key with the key
// change that made it, whose earlier keys — K₀ among them — are taken
// with it. A key offered before its key change is held (from an invite or
// a box) waits until [Keyring.Take] is given the change. So every key a
// ring holds comes with K₀, and a key change whose earlier leaves K₀ out
// gives none (02 §7.3). Safe for concurrent use.
type Keyring struct {
	space string
	first string // K₀'s keyId

	mu      sync.Mutex
	keys    map[string]*Key // taken
	offered map[string]*Key // held, waiting for their key change
	// recent is what OpenVersion opened last, by version id and sealed
	// text: a node's judge and its index open each version they store, in
	// the same batch, and the second is a look-up. Bounded by maxRecent.
	recent map[string]*Opened
}

// maxRecent bounds Keyring.recent: about two batches of versions.
const maxRecent = 2048

// NewKeyring makes an empty ring for a private space whose genesis names
// firstID as encryptionKeyId.
func NewKeyring(spaceID, firstID string) (*Keyring, error) {
	if !ValidKeyID(firstID) {
		return nil, fail(ErrMalformed, CodeKeyID, "encryptionKeyId", "a private space's genesis names its first key by a keyId: b and 52 characters of base32")
	}
	return &Keyring{space: spaceID, first: firstID, keys: map[string]*Key{}, offered: map[string]*Key{}}, nil
}

// Space is the id of the ring's space.
func (r *Keyring) Space() string { return r.space }

// FirstID is K₀'s keyId.
func (r *Keyring) FirstID() string { return r.first }

// Offer hands the ring a key from an invite or a box. K₀ is taken at once;
// any other key is held until its key change is taken. It reports whether
// the key is now taken.
func (r *Keyring) Offer(k *Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.keys[k.id]; ok {
		return true
	}
	if k.id == r.first {
		r.keys[k.id] = k
		return true
	}
	if len(r.offered) < MaxEarlier {
		r.offered[k.id] = k
	}
	return false
}

// Take takes the key a key change makes, and its earlier keys, when the
// ring holds that key (offered or taken). ErrNoKey when it does not: the
// change waits for a box or an invite. ErrChain or ErrOpen when the change
// gives no key: its earlier leaves K₀ out, names a key that is not one, or
// does not open. An offered key stays offered, not taken: another version
// of the change, a genuine one, may still give it.
func (r *Keyring) Take(c *KeyChange) error {
	r.mu.Lock()
	next, ok := r.keys[c.KeyID]
	if !ok {
		next, ok = r.offered[c.KeyID]
	}
	r.mu.Unlock()
	if !ok {
		return fail(ErrNoKey, CodeNoKey, "body.keyId", "the ring does not hold the key "+c.KeyID)
	}
	earlier, err := c.Open(next, r.space, r.first)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.offered, c.KeyID)
	r.keys[next.id] = next
	for _, k := range earlier {
		if _, ok := r.keys[k.id]; !ok {
			r.keys[k.id] = k
		}
		delete(r.offered, k.id)
	}
	return nil
}

// Restore takes keys this reader took before and kept, in its own key
// file, as they are: they came into a ring by the rules above once. K₀
// must be among them whenever any is given, so a ring restored still
// holds every key with K₀ (02 §7.3).
func (r *Keyring) Restore(ks []*Key) error {
	if len(ks) == 0 {
		return nil
	}
	if !slices.ContainsFunc(ks, func(k *Key) bool { return k.id == r.first }) {
		return fail(ErrChain, CodeChain, "keys", "keys restored into a ring carry K₀, "+r.first+" (02 §7.3)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range ks {
		if _, ok := r.keys[k.id]; !ok {
			r.keys[k.id] = k
		}
		delete(r.offered, k.id)
	}
	return nil
}

// Offered lists the keys offered and not yet taken, by keyId: a reader
// keeps them with its keys until their key changes arrive.
func (r *Keyring) Offered() []*Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Key, 0, len(r.offered))
	for _, k := range r.offered {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *Key) int { return strings.Compare(a.id, b.id) })
	return out
}

// HasOffered reports whether the key keyID is offered or taken.
func (r *Keyring) HasOffered(keyID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, taken := r.keys[keyID]
	_, offered := r.offered[keyID]
	return taken || offered
}

// Key returns a key the ring has taken.
func (r *Keyring) Key(id string) (*Key, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[id]
	return k, ok
}

// First returns K₀ when taken.
func (r *Keyring) First() (*Key, bool) { return r.Key(r.first) }

// Keys lists the keys taken, by keyId.
func (r *Keyring) Keys() []*Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Key, 0, len(r.keys))
	for _, k := range r.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *Key) int { return strings.Compare(a.id, b.id) })
	return out
}

// OneKey is the key onePer keys are derived under, from K₀ (02 §7.3); ok
// is false when K₀ is not taken.
func (r *Keyring) OneKey() (collection.OneKey, bool) {
	k, ok := r.First()
	if !ok {
		return collection.OneKey{}, false
	}
	return k.OneKey(), true
}

// TagKey is the key tags are computed under for a body sealed with keyID
// (02 §8.2); ok is false when that key is not taken.
func (r *Keyring) TagKey(keyID string) (collection.TagKey, bool) {
	k, ok := r.Key(keyID)
	if !ok {
		return collection.TagKey{}, false
	}
	return k.TagKey(), true
}

// NewKeyChange makes a new key and the key change to it, carrying every
// key the ring has taken; the ring takes the new key. It fails without
// K₀. The caller writes the change (sys.key) and boxes the new key to the
// members (sys.box).
func (r *Keyring) NewKeyChange() (*Key, *KeyChange, error) {
	next := NewKey()
	c, err := NewKeyChange(r.space, r.first, next, r.Keys())
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	r.keys[next.id] = next
	r.mu.Unlock()
	return next, c, nil
}

// SealBody seals a version's body and links under the key keyID, which the
// ring must have taken (see [Keyring.Current] for which).
func (r *Keyring) SealBody(keyID, collection, key string, c collection.Content) (*canonical.Object, error) {
	k, ok := r.Key(keyID)
	if !ok {
		return nil, fail(ErrNoKey, CodeNoKey, "body.keyId", "the ring does not hold the key "+keyID)
	}
	return SealBody(k, r.space, collection, key, c)
}

// SealFile seals a file under the key keyID.
func (r *Keyring) SealFile(keyID string, data []byte) ([]byte, error) {
	k, ok := r.Key(keyID)
	if !ok {
		return nil, fail(ErrNoKey, CodeNoKey, "file", "the ring does not hold the key "+keyID)
	}
	return SealFile(k, r.space, data), nil
}

// OpenBody opens a sealed body of a version at collection and key, under
// whichever taken key its keyId names. ErrNoKey when that key is not
// taken: the reader is one without it.
func (r *Keyring) OpenBody(collection, key string, body any) (*Opened, error) {
	s, err := ParseSealed(body)
	if err != nil {
		return nil, err
	}
	k, ok := r.Key(s.KeyID)
	if !ok {
		return nil, fail(ErrNoKey, CodeNoKey, "body.keyId", "the body is sealed under "+s.KeyID+", a key this reader does not hold")
	}
	return s.Open(k, BodyBinding(r.space, collection, key))
}

// ErrNotSealed: a version of a private space whose body is not sealed.
var ErrNotSealed = errors.New("minca/seal: the body is not sealed")

// OpenVersion opens a version of the ring's space: its body and links.
// A stub and a delete have none (nil, nil). A body of another space is
// not opened here. What it returns is shared with later calls for the same
// version: it must not be changed.
func (r *Keyring) OpenVersion(v *record.Version) (*Opened, error) {
	if v.Space != r.space {
		return nil, fail(ErrNoKey, CodeNoKey, "space", "the version is of the space "+v.Space+", the ring of "+r.space)
	}
	if !v.HasBody || v.Deleted {
		return nil, nil
	}
	if !IsSealed(v.Body) {
		return nil, fail(ErrNotSealed, CodeShape, "body", "a version of a private space carries a sealed body {sealed, keyId} (02 §3.1)")
	}
	// The id covers the version's space, collection and key — the binding
	// — and the sealed text is the rest of what opens: both name an entry.
	sv, _ := v.Body.(*canonical.Object).Get("sealed")
	text, _ := sv.(string)
	rk := v.ID + "\x00" + text
	r.mu.Lock()
	o, ok := r.recent[rk]
	r.mu.Unlock()
	if ok {
		return o, nil
	}
	o, err := r.OpenBody(v.Collection, v.Key, v.Body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.recent == nil || len(r.recent) >= maxRecent {
		r.recent = make(map[string]*Opened, maxRecent)
	}
	r.recent[rk] = o
	r.mu.Unlock()
	return o, nil
}

// OpenFile opens a sealed file of the ring's space.
func (r *Keyring) OpenFile(sealed []byte) ([]byte, error) {
	id, err := FileKeyID(sealed)
	if err != nil {
		return nil, err
	}
	k, ok := r.Key(id)
	if !ok {
		return nil, fail(ErrNoKey, CodeNoKey, "file", "the file is sealed under "+id+", a key this reader does not hold")
	}
	return OpenFile(k, r.space, sealed)
}

// Head is one of a space's current keys as its access state gives them
// (space.State.KeyHeads): the keyId of a latest key change, or K₀'s when
// there is none; Stale when a member removed since is not a member now
// and the change that made the key had not seen the removal, so the
// removed member may hold it.
type Head struct {
	KeyID string
	Stale bool
}

// Current is the key a writer seals under (docs/private-spaces.md, Which
// key seals): of heads, those the ring has taken and that are not stale,
// the one whose keyId sorts first. ErrNoCurrentKey when there is none —
// every current key the writer holds may be known to someone removed, or
// it holds none of them: the write waits for a key change or a box.
func (r *Keyring) Current(heads []Head) (*Key, error) {
	var best *Key
	stale := false
	for _, h := range heads {
		k, ok := r.Key(h.KeyID)
		if !ok {
			continue
		}
		if h.Stale {
			stale = true
			continue
		}
		if best == nil || k.id < best.id {
			best = k
		}
	}
	if best != nil {
		return best, nil
	}
	if stale {
		return nil, fail(ErrNoCurrentKey, CodeNoCurrent, "", "a member was removed since the space's current key was made: a key change must come before anything more is sealed")
	}
	return nil, fail(ErrNoCurrentKey, CodeNoCurrent, "", "this reader holds none of the space's current keys: it waits for a box or an invite")
}
