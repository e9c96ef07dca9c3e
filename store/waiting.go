package store

import (
	"strings"

	"github.com/minca-go/minca/engine"
)

// PeerSource reports whether an admission's source (engine Admit's from)
// is a peer: sync sessions admit under the key that signed the peer's who
// proof, a did:key; every other source names itself otherwise (a node's
// writes "local", invites, mirrors "blobs:…", imports).
func PeerSource(from string) bool { return strings.HasPrefix(from, "did:") }

// PeersBounded is l with the waiting bounds in bytes and time applied to
// peers only (engine.WaitingLimits.Unbounded, unless l sets it): a version
// dropped from a peer comes again by the next reconciliation, one from a
// mirror's segment or an import would not. A node, a carrier and the
// store verbs open their stores with it.
func PeersBounded(l engine.WaitingLimits) engine.WaitingLimits {
	if l.Unbounded == nil {
		l.Unbounded = func(from string) bool { return !PeerSource(from) }
	}
	return l
}
