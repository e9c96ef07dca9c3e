package node

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// keysDir is where the node keeps the keys of the private spaces it
// holds, one file a space, in the node directory only: never in the
// store, so nothing a mirror, a segment or a backup carries holds a key
// (docs/private-spaces.md §14).
const keysDir = "keys"

// keyFile is a space's key file: K₀'s id, the keys taken and offered (as
// seal.Key.Text), and the member key's scalar when the node holds no
// account key to derive it from.
type keyFile struct {
	V         int      `json:"v"`
	First     string   `json:"first"`
	Keys      []string `json:"keys"`
	Offered   []string `json:"offered"`
	MemberKey string   `json:"memberKey,omitempty"`
}

// keyStore is the node's keys of private spaces: a [seal.Keyring] a space
// it holds keys for, loaded from its key file when first asked for, and
// its member keys (06 §2.5). It is the node's [KeyRings]: a space without
// a ring is one the node holds without its key, judged and read as a
// carrier does (docs/private-spaces.md §9). Safe for concurrent use.
type keyStore struct {
	dir     string
	account func() []byte // the account key's scalar; nil without it

	mu      sync.Mutex
	rings   map[string]*seal.Keyring // loaded; nil: no key file
	members map[string]*seal.MemberKey
	// save serializes writing key files.
	save sync.Mutex
}

var _ judge.KeyRings = (*keyStore)(nil)

func newKeyStore(dir string, account func() []byte) *keyStore {
	return &keyStore{dir: filepath.Join(dir, keysDir), account: account,
		rings: map[string]*seal.Keyring{}, members: map[string]*seal.MemberKey{}}
}

func (ks *keyStore) path(spaceID string) string { return filepath.Join(ks.dir, spaceID+".json") }

// Keyring returns the ring of a space, nil when the node holds no key of
// it. A key file that does not read gives none here, so the judge judges
// as a peer without the key; the write path, which reads it with load,
// names it.
func (ks *keyStore) Keyring(spaceID string) *seal.Keyring {
	r, _ := ks.load(spaceID)
	return r
}

// load reads a space's key file once.
func (ks *keyStore) load(spaceID string) (*seal.Keyring, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if r, ok := ks.rings[spaceID]; ok {
		return r, nil
	}
	if _, err := canonical.ParseID(spaceID); err != nil {
		return nil, nil // no space's id: no file to read
	}
	b, err := os.ReadFile(ks.path(spaceID))
	if errors.Is(err, os.ErrNotExist) {
		ks.rings[spaceID] = nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("minca/node: the keys of %s: %w", spaceID, err)
	}
	var f keyFile
	if err := json.Unmarshal(b, &f); err != nil || f.V != 1 {
		return nil, fmt.Errorf("minca/node: the key file of %s does not read: %v", spaceID, err)
	}
	r, err := seal.NewKeyring(spaceID, f.First)
	if err != nil {
		return nil, fmt.Errorf("minca/node: the key file of %s: %w", spaceID, err)
	}
	keys, err := parseKeys(f.Keys)
	if err != nil {
		return nil, fmt.Errorf("minca/node: the key file of %s: %w", spaceID, err)
	}
	if err := r.Restore(keys); err != nil {
		return nil, fmt.Errorf("minca/node: the key file of %s: %w", spaceID, err)
	}
	offered, err := parseKeys(f.Offered)
	if err != nil {
		return nil, fmt.Errorf("minca/node: the key file of %s: %w", spaceID, err)
	}
	for _, k := range offered {
		r.Offer(k)
	}
	if f.MemberKey != "" {
		raw, err := base64.RawURLEncoding.DecodeString(f.MemberKey)
		if err != nil {
			return nil, fmt.Errorf("minca/node: the key file of %s: memberKey: %w", spaceID, err)
		}
		mk, err := seal.ParseMemberKey(raw)
		if err != nil {
			return nil, fmt.Errorf("minca/node: the key file of %s: %w", spaceID, err)
		}
		ks.members[spaceID] = mk
	}
	ks.rings[spaceID] = r
	return r, nil
}

func parseKeys(texts []string) ([]*seal.Key, error) {
	out := make([]*seal.Key, 0, len(texts))
	for _, t := range texts {
		k, err := seal.ParseKey(t)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// ring returns a space's ring, made (with no key) when the node has none:
// a node joining or creating a private space starts one.
func (ks *keyStore) ring(g *space.Genesis) (*seal.Keyring, error) {
	r, err := ks.load(g.ID)
	if err != nil || r != nil {
		return r, err
	}
	r, err = seal.NewKeyring(g.ID, g.EncryptionKeyID)
	if err != nil {
		return nil, err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if old := ks.rings[g.ID]; old != nil {
		return old, nil
	}
	ks.rings[g.ID] = r
	return r, nil
}

// memberKey is the account's member key for a space (docs/private-spaces.md
// §6): derived from the account key when the node holds it, so every
// device of the account has the same one; otherwise one of this node's
// own, kept in the key file.
func (ks *keyStore) memberKey(spaceID string) (*seal.MemberKey, error) {
	if _, err := ks.load(spaceID); err != nil {
		return nil, err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if mk, ok := ks.members[spaceID]; ok {
		return mk, nil
	}
	var mk *seal.MemberKey
	if ks.account != nil {
		var err error
		if mk, err = seal.DeriveMemberKey(ks.account(), spaceID); err != nil {
			return nil, err
		}
	} else {
		mk = seal.NewMemberKey()
	}
	ks.members[spaceID] = mk
	return mk, nil
}

// persist writes a space's key file from its ring, atomically: a key is
// kept before anything sealed under it, or a key change naming it, leaves
// the node.
func (ks *keyStore) persist(spaceID string) error {
	ks.save.Lock()
	defer ks.save.Unlock()
	ks.mu.Lock()
	r := ks.rings[spaceID]
	mk := ks.members[spaceID]
	ks.mu.Unlock()
	if r == nil {
		return nil
	}
	f := keyFile{V: 1, First: r.FirstID(), Keys: []string{}, Offered: []string{}}
	for _, k := range r.Keys() {
		f.Keys = append(f.Keys, k.Text())
	}
	for _, k := range r.Offered() {
		f.Offered = append(f.Offered, k.Text())
	}
	if mk != nil && ks.account == nil {
		f.MemberKey = base64.RawURLEncoding.EncodeToString(mk.Bytes())
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(ks.dir, 0o700); err != nil {
		return fmt.Errorf("minca/node: keys directory: %w", err)
	}
	if err := writeFileAtomic(ks.path(spaceID), b, 0o600); err != nil {
		return fmt.Errorf("minca/node: keeping the keys of %s: %w", spaceID, err)
	}
	return nil
}

// takeKeys takes into a space's ring what the store holds for it: the
// boxes of its first key and of its key changes to this account's member
// key, and the key changes whose keys the ring holds, which bring their
// earlier keys (docs/private-spaces.md §5, §7). want is a keyId a reader met and does
// not hold ("" for none): its box and key change are looked for too. It
// reports whether the ring took a key, and keeps the key file then.
func (n *Node) takeKeys(ctx context.Context, spaceID, want string) (bool, error) {
	ring := n.keys.Keyring(spaceID)
	if ring == nil {
		return false, nil
	}
	var ids []string
	if _, err := n.judge.WithHistory(ctx, spaceID, func(h *space.History) error {
		ids = h.Now().Keys()
		// K₀ too: until a key change names a key, the space's heads
		// name none, and K₀'s box is all there is to take.
		if k0 := h.Genesis().EncryptionKeyID; k0 != "" {
			ids = append(ids, k0)
		}
		return nil
	}); err != nil {
		return false, err
	}
	if want != "" && seal.ValidKeyID(want) {
		ids = append(ids, want)
	}
	mk, err := n.keys.memberKey(spaceID)
	if err != nil {
		return false, err
	}
	took, offered := false, false
	for round := 0; round < 4; round++ {
		progress := false
		for _, id := range ids {
			if _, ok := ring.Key(id); ok {
				continue
			}
			if !ring.HasOffered(id) {
				v, err := n.st.Current(ctx, spaceID, seal.BoxKey(id, n.Account()))
				if err == nil && v.HasBody {
					if b, err := seal.ReadBox(v); err == nil && b.KeyID == id {
						if k, err := b.Open(mk, spaceID); err == nil {
							offered = true
							if ring.Offer(k) { // K₀, taken as it is
								progress, took = true, true
							}
						}
					}
				} else if err != nil && !errors.Is(err, engine.ErrNotFound) {
					return took, err
				}
			}
			if !ring.HasOffered(id) {
				continue
			}
			hs, err := n.st.History(ctx, spaceID, seal.KeyChangeKey(id))
			if err != nil {
				return took, err
			}
			for _, hv := range hs {
				if !hv.Version.HasBody || hv.Version.Collection != seal.KeyChangeCollection {
					continue
				}
				c, err := seal.ReadKeyChange(hv.Version.Body)
				if err != nil {
					continue
				}
				if ring.Take(c) == nil {
					progress, took = true, true
					break
				}
			}
		}
		if !progress {
			break
		}
	}
	if took || offered {
		if err := n.keys.persist(spaceID); err != nil {
			return took, err
		}
	}
	if took {
		n.reindexSoon()
		n.refillSoon() // a pass for the space can be written now
	}
	return took, nil
}

// reindexSoon has the index rebuilt in the background: bodies indexed
// sealed, for want of keys the node has taken since, are indexed opened
// (docs/private-spaces.md §14). Requests while one runs make one more.
func (n *Node) reindexSoon() {
	if n.ix == nil || n.reindex == nil {
		return
	}
	select {
	case n.reindex <- struct{}{}:
	default:
	}
}

// reindexLoop runs the reindexes reindexSoon asks for until the node
// closes.
func (n *Node) reindexLoop() {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.reindex:
			if err := n.st.Reindex(n.ctx); err != nil && n.ctx.Err() == nil {
				n.o.Logger.Error("reindexing with keys taken", "err", err)
			}
		}
	}
}

// holds reports whether the store holds any version of a space.
func (n *Node) holds(ctx context.Context, spaceID string) (bool, error) {
	for _, err := range n.st.Export(ctx, spaceID) {
		return err == nil, err
	}
	return false, nil
}
