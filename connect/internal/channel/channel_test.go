package channel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func pair(t *testing.T, secret []byte) (offer, join *Session) {
	t.Helper()
	o, err := NewEphemeral()
	if err != nil {
		t.Fatal(err)
	}
	j, err := NewEphemeral()
	if err != nil {
		t.Fatal(err)
	}
	if offer, err = Derive(Code, secret, true, o, j.Point()); err != nil {
		t.Fatal(err)
	}
	if join, err = Derive(Code, secret, false, j, o.Point()); err != nil {
		t.Fatal(err)
	}
	return offer, join
}

// Both ends of one exchange share its keys and check; each direction has a
// key of its own, a count, and a type, and nothing opens out of place.
func TestSealAndOpen(t *testing.T) {
	secret := []byte("0123456789abcdef")
	home, prog := pair(t, secret)
	if home.Check() != prog.Check() || len(home.Check()) != 6 {
		t.Fatalf("checks %q %q", home.Check(), prog.Check())
	}
	a, _ := home.Seal("code:home", []byte(`{"origin":"https://home.example"}`))
	b, _ := home.Seal("code:heard", []byte(`{}`))
	// The sender's own message does not open as the other side's: a key
	// per direction.
	if _, err := home.Open("code:home", a); !errors.Is(err, ErrOpen) {
		t.Fatalf("reflected: %v", err)
	}
	// Out of order, relabelled, or with its count changed: nothing opens,
	// and nothing is consumed.
	if _, err := prog.Open("code:heard", b); !errors.Is(err, ErrOpen) {
		t.Fatal("opened out of order")
	}
	if _, err := prog.Open("code:heard", a); !errors.Is(err, ErrOpen) {
		t.Fatal("opened relabelled")
	}
	reseq := bytes.Clone(b)
	binary.BigEndian.PutUint32(reseq, 0)
	if _, err := prog.Open("code:heard", reseq); !errors.Is(err, ErrOpen) {
		t.Fatal("opened with its count changed")
	}
	flipped := bytes.Clone(a)
	flipped[len(flipped)-1] ^= 1
	if _, err := prog.Open("code:home", flipped); !errors.Is(err, ErrOpen) {
		t.Fatal("opened changed")
	}
	if body, err := prog.Open("code:home", a); err != nil || string(body) != `{"origin":"https://home.example"}` {
		t.Fatalf("%s %v", body, err)
	}
	// Repeated: no longer the next.
	if _, err := prog.Open("code:home", a); !errors.Is(err, ErrOpen) {
		t.Fatal("opened twice")
	}
	if _, err := prog.Open("code:heard", b); err != nil {
		t.Fatal(err)
	}
	c, _ := prog.Seal("code:ask", []byte(`{}`))
	if _, err := home.Open("code:ask", c); err != nil {
		t.Fatal(err)
	}
	if _, err := home.Open("code:ask", []byte("short")); !errors.Is(err, ErrOpen) {
		t.Fatal(err)
	}
	// Another exchange, even with the same secret, has other keys.
	home2, prog2 := pair(t, secret)
	d, _ := home2.Seal("code:home", []byte(`{}`))
	if _, err := prog2.Open("code:home", a); !errors.Is(err, ErrOpen) {
		t.Fatal("one exchange's message opened in another")
	}
	if _, err := prog2.Open("code:home", d); err != nil {
		t.Fatal(err)
	}
}

// A point is a P-256 point in SEC 1 uncompressed form, not the identity.
func TestCheckPoint(t *testing.T) {
	e, _ := NewEphemeral()
	if err := CheckPoint(e.Point()); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(e.Point())
	bad[64] ^= 1
	for _, b := range [][]byte{bad, e.Point()[:33], make([]byte, 65), append([]byte{0x04}, make([]byte, 64)...)} {
		if CheckPoint(b) == nil {
			t.Errorf("%x read as a point", b)
		}
	}
}
