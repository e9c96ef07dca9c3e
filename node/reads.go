package node

import (
	"context"
	"fmt"
	"iter"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/record"
)

// A Read is a held version as the node's reads give it ([Node.Get],
// [Node.History], [Node.Export]): the signed version, and in a private
// space whose key the node holds, what its sealed body holds
// (docs/private-spaces.md).
type Read struct {
	Version *record.Version
	// Opened is what the sealed body holds; nil in a public space, for a
	// stub or a delete, or without the key.
	Opened *Opened
	// Standing and Stored are how the store holds it (History).
	Standing engine.Verdict
	Stored   engine.Storage

	raw []byte // the version's canonical JSON, when read as such
}

// JSON is the version's canonical JSON, with what its sealed body holds
// beside it as "opened": {"body", "links"?} when it was opened
// (index.OpenedJSON). The signed version is the JSON without "opened".
func (r Read) JSON() ([]byte, error) {
	b := r.raw
	if b == nil {
		var err error
		if b, err = r.Version.MarshalJSON(); err != nil {
			return nil, err
		}
	}
	if r.Opened == nil {
		return b, nil
	}
	return index.OpenedJSON(b, r.Opened.Body, r.Opened.Links), nil
}

// read opens a held version for a Read. One that does not open (no key
// held, or a body that does not open under the key: Open says why) is
// read sealed, as it is signed.
func (n *Node) read(ctx context.Context, v *record.Version) Read {
	o, err := n.Open(ctx, v)
	if err != nil {
		o = nil
	}
	return Read{Version: v, Opened: o}
}

// Get is a record's readable current version (02 §4.3, §9.5: the first
// that stands, held whole), opened: engine.ErrNotFound when none reads.
func (n *Node) Get(ctx context.Context, spaceID, key string) (Read, error) {
	b, err := n.st.CurrentJSON(ctx, spaceID, key)
	if err != nil {
		return Read{}, err
	}
	v, err := record.Decode(b)
	if err != nil {
		return Read{}, fmt.Errorf("%w: a stored version: %v", engine.ErrCorrupt, err)
	}
	r := n.read(ctx, v)
	r.raw = b
	return r, nil
}

// History is every held version of a record, newest first by 02 §4.3,
// stubs as stubs, each opened and with its standing; none when the node
// holds no version of it.
func (n *Node) History(ctx context.Context, spaceID, key string) ([]Read, error) {
	hs, err := n.st.History(ctx, spaceID, key)
	if err != nil {
		return nil, err
	}
	out := make([]Read, 0, len(hs))
	for _, h := range hs {
		r := n.read(ctx, h.Version)
		r.Standing, r.Stored = h.Verdict, h.Stored
		out = append(out, r)
	}
	return out, nil
}

// Export yields every version held in a space, in sync order, stubs as
// stubs, each opened; an error is yielded once, last.
func (n *Node) Export(ctx context.Context, spaceID string) iter.Seq2[Read, error] {
	return func(yield func(Read, error) bool) {
		for v, err := range n.st.Export(ctx, spaceID) {
			if err != nil {
				yield(Read{}, err)
				return
			}
			if !yield(n.read(ctx, v), nil) {
				return
			}
		}
	}
}
