package peers

import (
	"context"
	"slices"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
)

// Host is what the sessions sync: a store and who may read which of its
// spaces. A node is one ([NodeHost]); a carrier, which holds spaces it
// cannot read and shows no note (06 §4.1), is another: it implements Host
// over its own store and runs the same sessions with transport.Carrier.
type Host interface {
	// Store holds the versions: Admit judges what arrives (02 §9),
	// SyncOrder and VersionJSON answer what is asked, Subscribe tells of
	// what is newly admitted.
	Store() *engine.Store
	// Spaces lists the spaces held, to open with each peer.
	Spaces(ctx context.Context) ([]string, error)
	// MayRead says whether peer may read space (06 §4; docs/sync.md §7.2):
	// false when the space is not held as well, so a peer asking learns
	// nothing.
	MayRead(ctx context.Context, spaceID string, peer transport.Peer) (bool, error)
}

// NodeHost is the Host of a node: the spaces it keeps, read as [MayRead]
// says, never by a revoked key; the account's carry spaces, live and
// removed, each read by its carrier's key and the account's devices (06
// §4.2: a removed carrier still hears carry:closed); and the account
// registry, which until it names a keeper any peer asking by its id may
// sync (Node.RegistryUnsynced).
func NodeHost(n *node.Node) Host { return nodeHost{n} }

type nodeHost struct{ n *node.Node }

func (h nodeHost) Store() *engine.Store { return h.n.Store() }

// FileWants are the files the node's readers asked for and it lacks
// (fetched whatever the policy, docs/sync.md §7.7).
func (h nodeHost) FileWants(ctx context.Context) ([]engine.NamedFile, <-chan struct{}) {
	return h.n.FileWants(ctx)
}

func (h nodeHost) Spaces(ctx context.Context) ([]string, error) {
	sps, err := h.n.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	carry, err := h.n.CarrySpaceIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(sps)+len(carry))
	for _, s := range sps {
		out = append(out, s.ID)
	}
	for _, id := range carry {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (h nodeHost) MayRead(ctx context.Context, spaceID string, p transport.Peer) (bool, error) {
	if did, ok, err := h.n.CarrierOf(ctx, spaceID); err != nil {
		return false, err
	} else if ok {
		if p.DID == did {
			return true, nil
		}
		// A carry space is the account's: its devices read it too, as
		// members (by root) of any private space do.
	}
	if spaceID == h.n.Registry() {
		if fresh, err := h.n.RegistryUnsynced(ctx); err != nil || fresh {
			return fresh, err
		}
	}
	return MayRead(ctx, h.n.Judge(), spaceID, p)
}

// Histories is what [MayRead] reads a space's access history from;
// *judge.SpaceJudge is one.
type Histories interface {
	WithHistory(ctx context.Context, spaceID string, fn func(h *space.History) error) (bool, error)
}

// MayRead is the read rule of docs/sync.md §7.2 over a space's access
// history as of now: a public space that is not an account's own is read
// by any peer whose key is not revoked there; any other — private, or an
// account space such as a public registry of earlier mincas — by a member
// (by the note's issuer), or by a keeper the space names (by key, with or
// without a note: a carrier, 06 §4.1). A space whose genesis is not held
// is read by nobody.
func MayRead(ctx context.Context, hs Histories, spaceID string, p transport.Peer) (bool, error) {
	may := false
	ok, err := hs.WithHistory(ctx, spaceID, func(h *space.History) error {
		st := h.Now()
		for _, r := range st.Revoked() {
			if r.Key == p.DID {
				return nil
			}
		}
		switch {
		case !h.Genesis().Private() && !h.Genesis().Account:
			may = true
		case p.Root != "" && st.IsMember(p.Root):
			may = true
		default:
			may = slices.ContainsFunc(st.Keepers(), func(k space.Keeper) bool { return k.DID == p.DID })
		}
		return nil
	})
	return ok && may, err
}

// Revocations answers transport's who check from the spaces a host
// keeps: a key revoked in any of them is refused (docs/sync.md §2).
type revocations struct {
	hs     Histories
	spaces func(ctx context.Context) ([]string, error)
}

func (r revocations) Revoked(ctx context.Context, key string) bool {
	ids, err := r.spaces(ctx)
	if err != nil {
		return false
	}
	for _, id := range ids {
		revoked := false
		r.hs.WithHistory(ctx, id, func(h *space.History) error {
			revoked = slices.ContainsFunc(h.Now().Revoked(), func(k space.RevokedKey) bool { return k.Key == key })
			return nil
		})
		if revoked {
			return true
		}
	}
	return false
}

// NodeSelf is the node's end of every connection: its session key and
// the note it holds now, asked for at each handshake so a renewed note
// is shown from the next connection on.
func NodeSelf(n *node.Node) transport.Self { return nodeSelf{n} }

type nodeSelf struct{ n *node.Node }

func (s nodeSelf) signer() *identity.SessionSigner {
	sg, err := s.n.Signer()
	if err != nil {
		return nil
	}
	return sg
}

func (s nodeSelf) DID() string {
	if sg := s.signer(); sg != nil {
		return sg.DID()
	}
	return ""
}

func (s nodeSelf) Sign(b []byte) ([]byte, error) {
	sg, err := s.n.Signer()
	if err != nil {
		return nil, err
	}
	return sg.Sign(b)
}

func (s nodeSelf) Note() *identity.Note {
	if sg := s.signer(); sg != nil {
		return sg.Note()
	}
	return nil
}
