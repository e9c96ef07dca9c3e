package node

import "github.com/minca-go/minca/identity"

// Signer is the session key with its current note (06 §1.2): what the
// node shows in the who exchange of every connection (docs/sync.md §2).
// Ask for it at each use: a renewed note replaces it.
func (n *Node) Signer() (*identity.SessionSigner, error) { return n.sess.current() }
