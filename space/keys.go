package space

import (
	"slices"
	"strings"

	"github.com/minca-go/minca/seal"
)

// KeyHeads are a private space's current keys as of the state, for
// seal.Keyring.Current (docs/private-spaces.md, Which key seals): the keyId
// of each latest key change (sys.key) that counts, or K₀'s — the genesis's
// encryptionKeyId — when none does, sorted by keyId. A head is Stale when a
// root that is not a member in this state was removed by a counting
// removal the key change had not seen (for K₀: by any counting removal):
// that root may hold the key, so nothing more is sealed under it. nil for
// a public space, and for a private one whose genesis names no key.
func (s *State) KeyHeads() []seal.Head {
	g := s.h.g
	if !g.Private() {
		return nil
	}
	var gone []*node
	for reg, ns := range s.h.regs {
		root, ok := strings.CutPrefix(reg, "member:")
		if !ok || s.IsMember(root) {
			continue
		}
		for _, n := range ns {
			if n.Kind == KindRemove && s.v.in(n) && s.v.counting(n) {
				gone = append(gone, n)
			}
		}
	}
	heads := s.v.heads("key")
	if len(heads) == 0 {
		if g.EncryptionKeyID == "" {
			return nil
		}
		return []seal.Head{{KeyID: g.EncryptionKeyID, Stale: len(gone) > 0}}
	}
	out := make([]seal.Head, 0, len(heads))
	for _, hd := range heads {
		stale := false
		for _, r := range gone {
			if !hd.anc.has(r.pos) {
				stale = true
				break
			}
		}
		out = append(out, seal.Head{KeyID: hd.KeyID, Stale: stale})
	}
	slices.SortFunc(out, func(a, b seal.Head) int { return strings.Compare(a.KeyID, b.KeyID) })
	return out
}
