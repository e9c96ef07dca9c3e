package identity

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
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
	// last is a note CheckNote passed, copied and decoded: every version a
	// session signs carries the same note object, and comparing a note
	// with the copy (the same canonical form, so the same signed bytes and
	// signature) costs less than decoding it and hashing its signed bytes
	// again. Only its signature is taken as checked: time, aud and grants
	// are checked each time. A note is copied once passed twice as the
	// same object (cand), so that notes each read once — an import's —
	// cost no copy.
	last atomic.Pointer[checkedNote]
	cand atomic.Pointer[canonical.Object]
}

// checkedNote is a note whose signature verified: a copy no one else
// holds, and the note decoded from it.
type checkedNote struct {
	obj *canonical.Object
	n   *Note
}

// sameNote reports whether a and b have the same canonical form: member
// by member when their names come in the same order (a note and its copy),
// else as canonical.Equal.
func sameNote(a, b *canonical.Object) bool {
	if len(a.Members) != len(b.Members) {
		return false
	}
	for i, m := range a.Members {
		if m.Name != b.Members[i].Name {
			return canonical.Equal(a, b)
		}
		x, ok := m.Value.(*canonical.Object)
		if y, yok := b.Members[i].Value.(*canonical.Object); ok && yok && x != nil && y != nil {
			if !sameNote(x, y) {
				return false
			}
		} else if !canonical.Equal(m.Value, b.Members[i].Value) {
			return false
		}
	}
	return true
}

// deepCopy copies a value of canonical's model, its members in order.
func deepCopy(v any) any {
	switch t := v.(type) {
	case *canonical.Object:
		if t == nil {
			return t
		}
		o := &canonical.Object{Members: make([]canonical.Member, len(t.Members))}
		for i, m := range t.Members {
			o.Members[i] = canonical.Member{Name: m.Name, Value: deepCopy(m.Value)}
		}
		return o
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// keep copies a note that passed, the second time it passes as the same
// object.
func (c *Checker) keep(note *canonical.Object) {
	if c.CacheSize < 0 || c.cand.Swap(note) != note {
		return
	}
	cp, _ := deepCopy(note).(*canonical.Object)
	if n, err := DecodeNote(cp); err == nil {
		c.last.Store(&checkedNote{obj: cp, n: n})
	}
}

// CheckNote decodes note and reports whether it is valid — its shape and
// signature, and, when at is not nil, nbf ≤ at < exp (records pass nil:
// 02 §9.3 step 2) — whether its aud is audience (step 3) and, when inv is
// not nil, whether it grants inv (step 4). It returns the note's issuer,
// the root (step 5), or a *NoteError saying which step refused it.
func (c *Checker) CheckNote(note *canonical.Object, audience string, at *time.Time, inv *Invocation) (string, error) {
	if l := c.last.Load(); l != nil && note != nil && sameNote(note, l.obj) {
		if err := c.checkChecked(l.n, audience, at, inv); err != nil {
			return "", err
		}
		return l.n.Iss, nil
	}
	n, err := DecodeNote(note)
	if err != nil {
		return "", err
	}
	if err := c.Check(n, audience, at, inv); err != nil {
		return "", err
	}
	c.keep(note)
	return n.Iss, nil
}

// checkChecked is Check on a note whose signature verified.
func (c *Checker) checkChecked(n *Note, audience string, at *time.Time, inv *Invocation) error {
	if at != nil {
		if err := n.CheckTime(*at); err != nil {
			return err
		}
	}
	if n.Aud != audience {
		return noteErr(CodeNoteAudience, "payload.aud", fmt.Sprintf("aud %q is not %q, the key that used the note", n.Aud, audience))
	}
	if inv != nil {
		return n.Grants(inv)
	}
	return nil
}

// Check is CheckNote on a decoded note.
func (c *Checker) Check(n *Note, audience string, at *time.Time, inv *Invocation) error {
	if err := c.checkSignature(n); err != nil {
		return err
	}
	return c.checkChecked(n, audience, at, inv)
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
