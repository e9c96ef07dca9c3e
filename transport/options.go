package transport

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/minca-go/minca/identity"
)

// Self is this end of every connection: the key that signs the who
// challenge, and the note it shows (06 §1.2). A node passes its
// *identity.SessionSigner, which renews its note; a carrier, which shows
// no note (06 §4.1), passes [Carrier](key).
type Self interface {
	identity.Signer
	// Note is the note shown in who, made out to DID(); nil shows from:
	// null. It is asked for at every handshake, so a renewed note is used
	// from the next connection on.
	Note() *identity.Note
}

type carrier struct{ identity.Signer }

func (carrier) Note() *identity.Note { return nil }

// Carrier is a Self with a key of its own and no note: peers see it as
// from: null (06 §4.1). Relays and throwaway keys (06 §3) use it too.
func Carrier(key identity.Signer) Self { return carrier{key} }

// Revocations says whether a key is revoked: the node answers from the
// sys.revoke records of the spaces it holds (03 §6.4). A revoked key's
// connection is refused with who/revoked.
type Revocations interface {
	Revoked(ctx context.Context, key string) bool
}

// Limits on Options.MaxFrame.
const (
	MinFrame     = 64 << 10 // a smaller limit could not carry a who with a note
	DefaultFrame = 1 << 20
	MaxFrameCap  = 64 << 20
)

// DataAlign is the boundary of memory [Options.PlaceData] places bytes
// on: a disk's block, what a write that bypasses the page cache
// (O_DIRECT) asks of its buffer.
const DataAlign = 4 << 10

// Options are how this end opens and keeps connections. nil means
// defaults where allowed; Self is required. An Options is read, never
// changed, by this package, and may be shared.
type Options struct {
	// Self signs this end's who. Required.
	Self Self
	// Revoked answers whether a peer's key is revoked. nil: none is.
	Revoked Revocations
	// Now is the clock a peer's note is checked against (06 §2.9).
	// nil: time.Now.
	Now func() time.Time
	// Checker verifies notes and remembers those that verified; nil: one
	// of this Options' own.
	Checker *identity.Checker
	// MaxFrame is the largest frame this end accepts, in bytes, kind byte
	// included; it is told to the peer in hello and the peer's is obeyed
	// when sending. Default 1 MiB; at least 64 KiB, at most 64 MiB.
	MaxFrame int
	// HandshakeTimeout bounds hello and who together. Default 10 s.
	HandshakeTimeout time.Duration
	// IdleTimeout ends a connection on which no whole frame arrived for
	// this long (conn/idle). Default 60 s.
	IdleTimeout time.Duration
	// KeepAlive is how long this end stays silent before it sends a ping,
	// so the peer's IdleTimeout does not end a quiet connection. Default
	// 15 s; less than IdleTimeout.
	KeepAlive time.Duration
	// WriteTimeout ends a connection on which one frame could not be sent
	// for this long: the peer does not read (conn/stalled). Default 60 s.
	WriteTimeout time.Duration
	// Linger is how long a connection that ended, having said why in a
	// bye, goes on reading and dropping what the peer still sends, until
	// the peer closes too: so the peer reads the bye rather than a reset.
	// Only on links that can close one side alone. Default 2 s.
	Linger time.Duration
	// RootCAs verifies wss:// servers. nil: the system roots.
	RootCAs *x509.CertPool
	// PlaceData says where a large data frame's bytes lie in the buffer
	// it is read into: given the frame's message as far as read (at
	// least its first 16 KiB, past the kind byte), the offset in it of
	// bytes the receiver hands to the disk as they are, which are then
	// read to start on a DataAlign boundary of memory; -1 for none. It
	// neither keeps nor changes its argument. A node passes where a
	// FILE-DATA's file bytes start, so a chunk is written to its partial
	// file with no copy (docs/sync.md §7.7). nil: every frame lies at the
	// start of its buffer.
	PlaceData func(msg []byte) int

	// clock runs a connection's idle, keep-alive and write timers. nil:
	// the real one; tests set their own, which moves only when told.
	clock clock
}

// resolved is Options cloned, with defaults filled and validated.
type resolved struct {
	Options
}

func (o *Options) resolve() (*resolved, error) {
	if o == nil {
		return nil, errors.New("minca/transport: options: Self is required")
	}
	r := &resolved{Options: *o}
	if r.Self == nil {
		return nil, errors.New("minca/transport: options: Self is required")
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.clock == nil {
		r.clock = realClock{}
	}
	if r.Checker == nil {
		r.Checker = &identity.Checker{}
	}
	if r.MaxFrame == 0 {
		r.MaxFrame = DefaultFrame
	}
	if r.MaxFrame < MinFrame || r.MaxFrame > MaxFrameCap {
		return nil, fmt.Errorf("minca/transport: options: MaxFrame %d is outside [%d, %d] bytes", r.MaxFrame, MinFrame, MaxFrameCap)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"HandshakeTimeout", &r.HandshakeTimeout, 10 * time.Second},
		{"IdleTimeout", &r.IdleTimeout, 60 * time.Second},
		{"KeepAlive", &r.KeepAlive, 15 * time.Second},
		{"WriteTimeout", &r.WriteTimeout, 60 * time.Second},
		{"Linger", &r.Linger, 2 * time.Second},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return nil, fmt.Errorf("minca/transport: options: %s %v is negative", d.name, *d.v)
		}
	}
	if r.KeepAlive >= r.IdleTimeout {
		return nil, fmt.Errorf("minca/transport: options: KeepAlive %v is not less than IdleTimeout %v: the peer would end quiet connections", r.KeepAlive, r.IdleTimeout)
	}
	return r, nil
}

// clock is what a connection's timers run on.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) stopper
}

// stopper is a timer that may be stopped before it fires.
type stopper interface {
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }
