package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Role is which end of a connection this is. It is part of what each end
// signs, so one end's signature is never good for the other's.
type Role byte

const (
	// Initiator dialled the connection, or sent the WebRTC offer.
	Initiator Role = 'i'
	// Responder accepted it, or answered.
	Responder Role = 'r'
)

func (r Role) other() Role {
	if r == Initiator {
		return Responder
	}
	return Initiator
}

// Binding ties the who challenge to the channel beneath, so a signature
// made on one connection is worth nothing on another, and a relay or a man
// in the middle cannot splice two sessions: each leg has its own binding.
// Both ends compute it alone; it never travels.
type Binding struct {
	Kind string   // one of the Binding… kinds
	Data [32]byte // zero for BindingNone
}

// Binding kinds (docs/sync.md, "Channel binding").
const (
	// BindingNone: a plain link on loopback, or an in-memory pipe. Only the
	// nonces bind the challenge.
	BindingNone = "none"
	// BindingTLS: 32 bytes of the TLS exporter (RFC 5705, RFC 8446 §7.5)
	// with label "EXPORTER-minca-who" and no context.
	BindingTLS = "tls-exporter"
	// BindingDTLS: SHA-256("minca/who/dtls/v1" ‖ SHA-256(offerer's DTLS
	// certificate) ‖ SHA-256(answerer's)).
	BindingDTLS = "dtls-fingerprints"
)

// exporterLabel is the TLS exporter label of BindingTLS.
const exporterLabel = "EXPORTER-minca-who"

// TLSBinding is the binding of a TLS connection, from either end's
// connection state.
func TLSBinding(cs *tls.ConnectionState) (Binding, error) {
	if cs == nil {
		return Binding{}, errors.New("minca/transport: no TLS connection state")
	}
	km, err := cs.ExportKeyingMaterial(exporterLabel, nil, 32)
	if err != nil {
		return Binding{}, fmt.Errorf("minca/transport: TLS exporter: %w", err)
	}
	b := Binding{Kind: BindingTLS}
	copy(b.Data[:], km)
	return b, nil
}

// DTLSBinding is the binding of a WebRTC connection from the SHA-256
// digests of the offerer's and the answerer's DTLS certificates.
func DTLSBinding(offerer, answerer [32]byte) Binding {
	h := sha256.New()
	h.Write([]byte("minca/who/dtls/v1"))
	h.Write(offerer[:])
	h.Write(answerer[:])
	b := Binding{Kind: BindingDTLS}
	h.Sum(b.Data[:0])
	return b
}

// challenge is what an end signs in who (docs/sync.md, "who"):
//
//	"minca/who/v1" 0x00 role kind 0x00 signer-nonce peer-nonce binding
func challenge(role Role, b Binding, own, peer []byte) []byte {
	out := make([]byte, 0, 16+len(b.Kind)+2*nonceLen+32)
	out = append(out, "minca/who/v1"...)
	out = append(out, 0, byte(role))
	out = append(out, b.Kind...)
	out = append(out, 0)
	out = append(out, own...)
	out = append(out, peer...)
	return append(out, b.Data[:]...)
}

// Peer is who is at the other end of a connection, as proven by who.
type Peer struct {
	// DID is the key that signed the challenge: the session key, or a
	// carrier's or throwaway key.
	DID string
	// Root is the account the key speaks for, the note's issuer; "" when
	// the peer showed no note.
	Root string
	// Note is the note the peer showed, checked at connect time; nil for
	// from: null.
	Note *identity.Note
	// Binding is the kind of channel binding the proof was bound to.
	Binding string
}

// Carrier reports whether the peer showed no note (06 §4.1: from: null).
func (p Peer) Carrier() bool { return p.Note == nil }

// HandshakeOptions are what one handshake needs beyond Options.
type HandshakeOptions struct {
	Role    Role
	Binding Binding
	// Expect, when not "", is the only DID accepted at the other end
	// (who/unexpected-peer otherwise): the peer a relay introduced.
	Expect string
}

// Handshake runs hello and who over link (06 §1.2; docs/sync.md) and
// returns the proven connection. On refusal the peer is told why in a bye
// frame, link is closed, and the error is an *Error with the reason. The
// whole exchange is bounded by opts.HandshakeTimeout.
func Handshake(ctx context.Context, link Link, opts *Options, h HandshakeOptions) (*Conn, error) {
	r, err := opts.resolve()
	if err != nil {
		link.Close()
		return nil, err
	}
	return handshake(ctx, link, r, h)
}

func handshake(ctx context.Context, link Link, o *resolved, h HandshakeOptions) (*Conn, error) {
	if h.Role != Initiator && h.Role != Responder {
		link.Close()
		return nil, fmt.Errorf("minca/transport: handshake: role %q is neither initiator nor responder", h.Role)
	}
	if h.Binding.Kind == "" {
		h.Binding.Kind = BindingNone
	}
	self := o.Self
	note := self.Note()
	var from json.RawMessage = json.RawMessage("null")
	if note != nil {
		// Our own note is checked as the peer will, so an expired one is
		// named here rather than by every peer.
		if note.Aud != self.DID() {
			link.Close()
			return nil, fmt.Errorf("minca/transport: our note is made out to %s, not to our key %s", note.Aud, self.DID())
		}
		if err := note.CheckTime(o.Now()); err != nil {
			link.Close()
			return nil, fmt.Errorf("minca/transport: our own note is not in force; renew it: %w", err)
		}
		b, err := canonical.Marshal(note.Object())
		if err != nil {
			link.Close()
			return nil, fmt.Errorf("minca/transport: our note: %w", err)
		}
		from = b
	}

	// The deadline does not cut the link's reads and writes (a WebSocket
	// closes at once when a read's context ends): when it passes, the peer
	// is told who/timeout in a bye, and only then is the link closed, which
	// ends what is still waiting on it.
	hctx, hcancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer hcancel()
	ioctx, iocancel := context.WithCancel(context.WithoutCancel(ctx))
	defer iocancel()
	w := &handshakeWriter{link: link, sem: make(chan struct{}, 1)}
	var timedOut *Error
	var timedOutMu sync.Mutex
	stopTimer := context.AfterFunc(hctx, func() {
		e := errorf(CodeWhoTimeout, "hello and who were not done within %v", o.HandshakeTimeout)
		var ce *Error
		if errors.As(context.Cause(hctx), &ce) {
			e = ce
		}
		timedOutMu.Lock()
		timedOut = e
		timedOutMu.Unlock()
		w.bye(e)
		link.Close()
		iocancel()
	})
	defer stopTimer()
	ctx = ioctx
	fail := func(err error) (*Conn, error) {
		if !stopTimer() {
			// The deadline passed: the bye is said, or being said.
			<-ioctx.Done()
			timedOutMu.Lock()
			defer timedOutMu.Unlock()
			return nil, timedOut
		}
		var e *Error
		if !errors.As(err, &e) {
			e = errorf(CodeBroken, "during the handshake: %v", err)
		}
		if !e.Remote && w.bye(e) {
			lingerClose(link, o)
		} else {
			link.Close()
		}
		return nil, e
	}

	nonce := make([]byte, nonceLen)
	rand.Read(nonce)
	// Sends run beside reads: on a link with no buffer both ends write
	// first.
	sent := make(chan error, 1)
	go func() {
		sent <- w.write(ctx, encodeControl(&control{Type: typeHello, V: whoVersion, Nonce: nonce, MaxFrame: o.MaxFrame}))
	}()
	hello, err := readControl(ctx, link, o.MaxFrame, typeHello)
	if err != nil {
		return fail(err)
	}
	if err := <-sent; err != nil {
		return fail(err)
	}
	if hello.V != whoVersion {
		return fail(errorf(CodeWhoVersion, "hello.payload.v is %d; this end speaks %d", hello.V, whoVersion))
	}
	if bytes.Equal(hello.Nonce, nonce) {
		return fail(errorf(CodeWhoShape, "hello.payload.nonce repeats ours: a reflected hello"))
	}

	sig, err := self.Sign(challenge(h.Role, h.Binding, nonce, hello.Nonce))
	if err != nil {
		return fail(fmt.Errorf("signing the challenge: %w", err))
	}
	go func() {
		sent <- w.write(ctx, encodeControl(&control{Type: typeWho, From: from, Key: self.DID(), Sig: sig}))
	}()
	who, err := readControl(ctx, link, o.MaxFrame, typeWho)
	if err != nil {
		return fail(err)
	}
	if err := <-sent; err != nil {
		return fail(err)
	}
	peer, err := checkWho(ctx, o, h, who, challenge(h.Role.other(), h.Binding, hello.Nonce, nonce))
	if err != nil {
		return fail(err)
	}
	if !stopTimer() {
		return fail(nil)
	}
	maxSend := hello.MaxFrame
	return newConn(link, o, peer, maxSend), nil
}

// handshakeWriter orders the handshake's writes, so a bye never goes out
// in the middle of another frame.
type handshakeWriter struct {
	link Link
	sem  chan struct{}
}

func (w *handshakeWriter) write(ctx context.Context, f []byte) error {
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.sem }()
	return w.link.WriteFrame(ctx, f)
}

// bye tells the peer why, if the link takes it within a second, and
// reports whether it did.
func (w *handshakeWriter) bye(e *Error) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return w.write(ctx, encodeControl(&control{Type: typeBye, Code: e.Code, Message: truncate(e.Message, maxByeMessage)})) == nil
}

// lingerClose closes link after a bye, as [Conn] does: its sending side
// first, when it can, then the rest once the peer has closed too or
// o.Linger has passed, reading and dropping what arrives meanwhile.
func lingerClose(link Link, o *resolved) {
	if !closeWrite(link) {
		link.Close()
		return
	}
	t := time.AfterFunc(o.Linger, func() { link.Close() })
	go func() {
		defer t.Stop()
		for {
			if _, err := link.ReadFrame(context.Background(), o.MaxFrame); err != nil {
				link.Close()
				return
			}
		}
	}()
}

// readControl reads the next frame and requires a control message of
// type want; a bye from the peer is returned as its *Error.
func readControl(ctx context.Context, link Link, max int, want string) (*control, error) {
	f, err := link.ReadFrame(ctx, max)
	if err != nil {
		return nil, err
	}
	kind, err := checkKind(f)
	if err != nil {
		return nil, err
	}
	if kind != kindControl {
		return nil, errorf(CodeFrameOrder, "a data frame before %s: data flows only after who", want)
	}
	c, err := decodeControl(f[1:])
	if err != nil {
		return nil, err
	}
	if c.Type == typeBye {
		return nil, &Error{Code: c.Code, Message: c.Message, Remote: true}
	}
	if c.Type != want {
		return nil, errorf(CodeFrameOrder, "a %s message where %s was due", c.Type, want)
	}
	return c, nil
}

// checkWho checks the peer's who (docs/sync.md, "Checking who"), in
// order: the key, the note, its time at now, its audience, revocation,
// the expected peer, and the challenge signature.
func checkWho(ctx context.Context, o *resolved, h HandshakeOptions, who *control, signed []byte) (Peer, error) {
	key, err := identity.ParseDID(who.Key)
	if err != nil {
		return Peer{}, errorf(CodeWhoShape, "who.payload.key is not a P-256 did:key: %v", err)
	}
	p := Peer{DID: who.Key, Binding: h.Binding.Kind}
	if !bytes.Equal(who.From, []byte("null")) {
		n, err := identity.ParseNote(who.From)
		if err != nil {
			return Peer{}, errorf(CodeWhoNote, "who.from is not a note: %v", err)
		}
		if err := o.Checker.CheckValid(n, nil); err != nil {
			return Peer{}, errorf(CodeWhoNote, "who.from: %v", err)
		}
		if err := n.CheckTime(o.Now()); err != nil {
			code := CodeWhoExpired
			var ne *identity.NoteError
			if errors.As(err, &ne) && ne.Field == "payload.nbf" {
				code = CodeWhoNotYet
			}
			return Peer{}, errorf(code, "who.from: %v", err)
		}
		if n.Aud != who.Key {
			return Peer{}, errorf(CodeWhoAudience, "who.from is made out to %s, not to %s, the key that signs the challenge", n.Aud, who.Key)
		}
		p.Note, p.Root = n, n.Iss
	}
	if o.Revoked != nil && o.Revoked.Revoked(ctx, who.Key) {
		return Peer{}, errorf(CodeWhoRevoked, "the key %s is revoked", who.Key)
	}
	if h.Expect != "" && who.Key != h.Expect {
		return Peer{}, errorf(CodeWhoPeer, "the peer is %s, not %s", who.Key, h.Expect)
	}
	if !key.Verify(signed, who.Sig) {
		return Peer{}, errorf(CodeWhoSignature, "who.payload.sig does not verify: not signed for this connection (role, nonces, %s binding) by %s", h.Binding.Kind, who.Key)
	}
	return p, nil
}
