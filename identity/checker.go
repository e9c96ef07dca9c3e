package identity

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
)

// Checker judges the notes versions carry as their proof: it is the note
// half of the capability gate (02 §9.3 steps 2–5) and of loose versions'
// check 5 (02 §3.5), and satisfies record.NoteChecker. The zero value is
// ready; a Checker is safe for concurrent use.
//
// Every version a session signs carries the same note, so a Checker
// remembers notes whose signature verified, keyed by a hash of their
// signed bytes and signature, and does not verify them again: one ECDSA
// verification per note, not per version. Failures are never remembered.
type Checker struct {
	// Resolver turns iss into a key; nil parses each afresh.
	Resolver *Resolver
	// CacheSize is how many verified notes are remembered (default 1024);
	// negative remembers none.
	CacheSize int

	mu   sync.Mutex
	cur  map[[32]byte]struct{}
	prev map[[32]byte]struct{}
}

// CheckNote decodes note and reports whether it is valid — its shape and
// signature, and, when at is not nil, nbf ≤ at < exp (records pass nil:
// 02 §9.3 step 2) — whether its aud is audience (step 3) and, when inv is
// not nil, whether it grants inv (step 4). It returns the note's issuer,
// the root (step 5), or a *NoteError saying which step refused it.
func (c *Checker) CheckNote(note *canonical.Object, audience string, at *time.Time, inv *Invocation) (string, error) {
	n, err := DecodeNote(note)
	if err != nil {
		return "", err
	}
	if err := c.Check(n, audience, at, inv); err != nil {
		return "", err
	}
	return n.Iss, nil
}

// Check is CheckNote on a decoded note.
func (c *Checker) Check(n *Note, audience string, at *time.Time, inv *Invocation) error {
	if err := c.CheckValid(n, at); err != nil {
		return err
	}
	if n.Aud != audience {
		return noteErr(CodeNoteAudience, "payload.aud", fmt.Sprintf("aud %q is not %q, the key that used the note", n.Aud, audience))
	}
	if inv != nil {
		return n.Grants(inv)
	}
	return nil
}

// CheckValid reports whether n is valid (01 §7.5 in our profile): its
// signature verifies under iss and, when at is not nil, it is in force then.
func (c *Checker) CheckValid(n *Note, at *time.Time) error {
	if err := c.checkSignature(n); err != nil {
		return err
	}
	if at != nil {
		return n.CheckTime(*at)
	}
	return nil
}

func (c *Checker) checkSignature(n *Note) error {
	if c.CacheSize < 0 {
		return n.CheckSignature(c.Resolver)
	}
	msg, err := n.SignedBytes()
	if err != nil {
		return err
	}
	// The key covers the signed bytes (iss among them) and the signature as
	// written, so only the very note that verified is let through.
	h := sha256.New()
	h.Write(msg)
	h.Write([]byte{0})
	h.Write([]byte(n.Sig))
	var key [32]byte
	h.Sum(key[:0])
	c.mu.Lock()
	_, hit := c.cur[key]
	if !hit {
		_, hit = c.prev[key]
	}
	c.mu.Unlock()
	if hit {
		return nil
	}
	if err := n.CheckSignature(c.Resolver); err != nil {
		return err
	}
	c.remember(key)
	return nil
}

// remember keeps two generations, like Resolver: when the current one
// fills it becomes the previous, and the oldest is dropped.
func (c *Checker) remember(key [32]byte) {
	size := c.CacheSize
	if size == 0 {
		size = 1024
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || len(c.cur) >= (size+1)/2 {
		c.prev = c.cur
		c.cur = make(map[[32]byte]struct{}, (size+1)/2)
	}
	c.cur[key] = struct{}{}
}
