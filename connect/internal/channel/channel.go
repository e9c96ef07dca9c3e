// Package channel is our profile of the channel of 01 §15.2 that 06 §3
// runs connecting by code on: one exchange of ephemeral P-256 points per
// side, keys per direction derived from the shared point and the secret,
// messages sealed with AES-256-GCM under a count, and a six-digit check
// over the exchange. docs/connect.md says it byte for byte.
//
//	ikm        = Z ‖ secret              Z: the x-coordinate ECDH(o, J) = ECDH(j, O), 32 bytes
//	transcript = O ‖ J                   the offering side's point, then the joining side's (65 bytes each, SEC 1 uncompressed)
//	key(side)  = HKDF-SHA-256(ikm, salt = none, info = Key ‖ transcript ‖ side, 32)   side "offer" or "join"
//	check      = uint32_be(HKDF-SHA-256(ikm, salt = none, info = Check ‖ transcript, 4)) mod 1000000, 6 digits
//	envelope   = uint32_be(seq) ‖ AES-256-GCM(key(sender), nonce = 0⁴ ‖ uint64_be(seq), body, aad)
//	aad        = canonical JSON {"seal": Seal, "seq": seq, "type": type}
//
// Each side seals with the key named for it and opens with the other's, so
// nothing one side sent opens as the other's; seq counts each side's
// sealed messages from 0, and a receiver opens only the next, so nothing is
// repeated, reordered or relabelled.
package channel

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
)

// Kind is a channel's labels (01 §15.2): its room, keys, seals and check
// are each derived under one of them, so two kinds of channel never share
// a key.
type Kind struct {
	Room, Key, Seal, Check string
}

// Code is the channel of connecting by code (06 §3).
var Code = Kind{Room: "minca/code-room/v1", Key: "minca/code-key/v1", Seal: "minca/code/v1", Check: "minca/code-check/v1"}

// PointLen is the length of a point: SEC 1 uncompressed P-256.
const PointLen = 65

// Overhead is what sealing adds to a body: the count and GCM's tag.
const Overhead = 4 + 16

// ErrOpen is what every failure to open is (errors.Is): a wrong key, type,
// count or body.
var ErrOpen = errors.New("minca/connect/channel: does not open")

// Ephemeral is one side's key for one exchange. It is made fresh for each
// exchange and never used with another peer.
type Ephemeral struct {
	priv *ecdh.PrivateKey
}

// NewEphemeral makes a fresh ephemeral key from crypto/rand.
func NewEphemeral() (*Ephemeral, error) {
	k, err := ecdh.P256().GenerateKey(nil)
	if err != nil {
		return nil, fmt.Errorf("minca/connect/channel: making an ephemeral key: %w", err)
	}
	return &Ephemeral{priv: k}, nil
}

// EphemeralFromScalar is the ephemeral key with the given 32-byte scalar:
// for worked examples, never for an exchange.
func EphemeralFromScalar(b []byte) (*Ephemeral, error) {
	k, err := ecdh.P256().NewPrivateKey(b)
	if err != nil {
		return nil, err
	}
	return &Ephemeral{priv: k}, nil
}

// Point is the key's public point, 65 bytes.
func (e *Ephemeral) Point() []byte { return e.priv.PublicKey().Bytes() }

// Commit is what the joining side commits to before it sees the offering
// side's point: SHA-256 of its own.
func Commit(point []byte) [32]byte { return sha256.Sum256(point) }

// CheckPoint reports whether b is a point on P-256 other than the
// identity, in SEC 1 uncompressed form.
func CheckPoint(b []byte) error {
	_, err := ecdh.P256().NewPublicKey(b)
	return err
}

// Session is one side's view of one exchange: the keys to seal and open
// with, the counts, and the check. Not safe for concurrent use.
type Session struct {
	kind             Kind
	send, recv       cipher.AEAD
	sendSeq, recvSeq uint32
	check            string
}

// Derive makes a side's session from its ephemeral key and the other
// side's point. offer is true for the offering side (the home), whose
// point comes first in the transcript.
func Derive(kind Kind, secret []byte, offer bool, mine *Ephemeral, theirs []byte) (*Session, error) {
	pub, err := ecdh.P256().NewPublicKey(theirs)
	if err != nil {
		return nil, fmt.Errorf("minca/connect/channel: their point: %w", err)
	}
	z, err := mine.priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("minca/connect/channel: %w", err)
	}
	o, j := mine.Point(), theirs
	if !offer {
		o, j = theirs, mine.Point()
	}
	m, err := DeriveMaterial(kind, append(z, secret...), append(append([]byte{}, o...), j...))
	if err != nil {
		return nil, err
	}
	return NewSession(kind, m, offer)
}

// NewSession is the session of one side of an exchange whose material is
// m: it seals with its own direction's key and opens with the other's.
// Derive makes sessions; tests make them from material they choose.
func NewSession(kind Kind, m Material, offer bool) (*Session, error) {
	o, err := newGCM(m.OfferKey)
	if err != nil {
		return nil, err
	}
	j, err := newGCM(m.JoinKey)
	if err != nil {
		return nil, err
	}
	s := &Session{kind: kind, check: m.Check, send: o, recv: j}
	if !offer {
		s.send, s.recv = j, o
	}
	return s, nil
}

// Material is what an exchange derives, shown for worked examples: both
// directions' keys and the check.
type Material struct {
	OfferKey, JoinKey []byte
	Check             string
}

// DeriveMaterial derives an exchange's material from ikm (Z ‖ secret) and
// the transcript (O ‖ J).
func DeriveMaterial(kind Kind, ikm, transcript []byte) (Material, error) {
	ko, err := hkdf.Key(sha256.New, ikm, nil, kind.Key+string(transcript)+"offer", 32)
	if err != nil {
		return Material{}, err
	}
	kj, err := hkdf.Key(sha256.New, ikm, nil, kind.Key+string(transcript)+"join", 32)
	if err != nil {
		return Material{}, err
	}
	c, err := hkdf.Key(sha256.New, ikm, nil, kind.Check+string(transcript), 4)
	if err != nil {
		return Material{}, err
	}
	return Material{OfferKey: ko, JoinKey: kj, Check: fmt.Sprintf("%06d", binary.BigEndian.Uint32(c)%1000000)}, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Check is the exchange's six digits: both ends of one exchange derive the
// same, and only they.
func (s *Session) Check() string { return s.check }

// Seal seals body as the next message of type typ this side sends.
func (s *Session) Seal(typ string, body []byte) ([]byte, error) {
	aad, err := AAD(s.kind, typ, s.sendSeq)
	if err != nil {
		return nil, err
	}
	env := binary.BigEndian.AppendUint32(make([]byte, 0, len(body)+Overhead), s.sendSeq)
	env = s.send.Seal(env, nonce(s.sendSeq), body, aad)
	s.sendSeq++
	return env, nil
}

// Open opens env as a message of type typ from the other side. It opens
// only the next message the other side sealed: one with a count already
// opened (a repeat), past the next (one missing), of another type, or
// sealed with another key, does not open, and changes nothing.
func (s *Session) Open(typ string, env []byte) ([]byte, error) {
	if len(env) < Overhead {
		return nil, fmt.Errorf("%w: too short", ErrOpen)
	}
	seq := binary.BigEndian.Uint32(env)
	if seq != s.recvSeq {
		return nil, fmt.Errorf("%w: count %d, expecting %d", ErrOpen, seq, s.recvSeq)
	}
	aad, err := AAD(s.kind, typ, seq)
	if err != nil {
		return nil, err
	}
	body, err := s.recv.Open(nil, nonce(seq), env[4:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: not sealed by the other side of this exchange as %s #%d", ErrOpen, typ, seq)
	}
	s.recvSeq++
	return body, nil
}

// AAD is what a sealed message is bound to: the canonical JSON of {"seal":
// kind.Seal, "seq": seq, "type": typ}.
func AAD(kind Kind, typ string, seq uint32) ([]byte, error) {
	return canonical.Marshal(canonical.NewObject("seal", kind.Seal, "seq", float64(seq), "type", typ))
}

func nonce(seq uint32) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[4:], uint64(seq))
	return n[:]
}
