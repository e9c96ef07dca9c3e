package identity

import (
	"fmt"

	"github.com/minca-go/minca/canonical"
)

// SessionSigner signs as a session key under a note from the account: what
// it signs carries the note as its proof (06 §1.2, §2.7; 02 §3.1). It is a
// [Signer], and record.Sign finds its note through Proof (record's
// ProofSigner). Safe for concurrent use if its key is.
type SessionSigner struct {
	key  Signer
	note *Note
}

// NewSessionSigner pairs a session key with its note. It refuses a note
// made out to another key (peers would refuse every version: 02 §9.3 step
// 3) or whose signature does not verify (step 2). It does not look at the
// note's time, which records are not judged by, nor at what it grants.
func NewSessionSigner(key Signer, note *Note) (*SessionSigner, error) {
	if note.Aud != key.DID() {
		return nil, fmt.Errorf("minca/identity: the note is made out to %s, not to this key, %s", note.Aud, key.DID())
	}
	if err := note.CheckSignature(nil); err != nil {
		return nil, fmt.Errorf("minca/identity: the note does not verify: %w", err)
	}
	return &SessionSigner{key: key, note: note}, nil
}

// DID is the session key's did:key: a version's author.
func (s *SessionSigner) DID() string { return s.key.DID() }

// Sign signs with the session key.
func (s *SessionSigner) Sign(payload []byte) ([]byte, error) { return s.key.Sign(payload) }

// Proof is the note, as versions carry it in proof. It must not be changed.
func (s *SessionSigner) Proof() *canonical.Object { return s.note.Object() }

// Note is the note the key signs under.
func (s *SessionSigner) Note() *Note { return s.note }

// Root is the account the key speaks for: the note's issuer.
func (s *SessionSigner) Root() string { return s.note.Iss }
