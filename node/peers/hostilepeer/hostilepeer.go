// Package hostilepeer is a peer that breaks the rules, for tests and
// benchmarks of a node's limits (docs/sync.md, Limits): it reaches a real
// listener over loopback from a source address of its choice, proves a
// throwaway key, and then speaks the session's wire (docs/sync.md §7.1)
// by hand — or says nothing, reads nothing, or floods.
//
//	p, err := hostilepeer.Dial(ctx, url, &hostilepeer.Options{From: "127.0.0.2"})
//	p.Send(ctx, hostilepeer.NegOpen(1, spaceID, true, hostilepeer.EmptySet()))
package hostilepeer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"

	"github.com/coder/websocket"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/transport"
)

// Options shape a hostile peer. nil: a throwaway key, any source address.
type Options struct {
	// Self is the key it proves; nil: a new throwaway key, no note.
	Self transport.Self
	// From is the loopback address it connects from ("127.0.0.2"), so a
	// node counts it as another machine; "" lets the system choose.
	From string
	// Header is sent with the WebSocket upgrade (Origin, Host).
	Header http.Header
}

// Peer is one connection of a hostile peer, after who.
type Peer struct {
	Conn *transport.Conn
	Key  string
}

// Client is an HTTP client whose connections come from the source
// address from ("" for any).
func Client(from string) *http.Client {
	d := &net.Dialer{}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// Upgrade opens a WebSocket to url and nothing more: no hello, no who. It
// holds a handshake slot until the node drops it.
func Upgrade(ctx context.Context, url string, o *Options) (*websocket.Conn, error) {
	var oo Options
	if o != nil {
		oo = *o
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: Client(oo.From), HTTPHeader: oo.Header})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("hostilepeer: upgrade: HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, fmt.Errorf("hostilepeer: upgrade: %w", err)
	}
	ws.SetReadLimit(-1)
	return ws, nil
}

// Dial connects to a node's peer listener at url and runs who.
func Dial(ctx context.Context, url string, o *Options) (*Peer, error) {
	var oo Options
	if o != nil {
		oo = *o
	}
	if oo.Self == nil {
		k, err := identity.GenerateKey()
		if err != nil {
			return nil, err
		}
		oo.Self = transport.Carrier(k)
	}
	ws, err := Upgrade(ctx, url, &oo)
	if err != nil {
		return nil, err
	}
	c, err := transport.Handshake(ctx, transport.NewWebSocketLink(ws, transport.DefaultFrame), &transport.Options{Self: oo.Self}, transport.HandshakeOptions{Role: transport.Initiator})
	if err != nil {
		return nil, err
	}
	return &Peer{Conn: c, Key: oo.Self.DID()}, nil
}

// Send sends one message.
func (p *Peer) Send(ctx context.Context, msg []byte) error { return p.Conn.Send(ctx, msg) }

// Recv reads the next message; a Peer that never calls it does not read
// (the connection holds one frame, then the node's sends wait).
func (p *Peer) Recv(ctx context.Context) ([]byte, error) { return p.Conn.Recv(ctx) }

// Drain reads and drops every message until the connection ends.
func (p *Peer) Drain() {
	go func() {
		for {
			if _, err := p.Conn.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
}

// Close ends the connection.
func (p *Peer) Close() error { return p.Conn.Close() }

// Message types of the sync session (docs/sync.md §7.1).
const (
	NegOpenType  byte = 0x01
	NegMsgType   byte = 0x02
	NegCloseType byte = 0x03
	NegErrType   byte = 0x04
	WantType     byte = 0x05
	VersionsType byte = 0x06
	AdmittedType byte = 0x07
)

// VERSIONS flags.
const (
	FlagAnswer byte = 0
	FlagLast   byte = 1
	FlagPush   byte = 2
)

func msg(typ byte, sid uint64, body ...[]byte) []byte {
	b := binary.AppendUvarint([]byte{typ}, sid)
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

// NegOpen opens session sid on a space (all its collections) with
// negentropy's first message neg.
func NegOpen(sid uint64, spaceID string, live bool, neg []byte) []byte {
	p, _ := json.Marshal(map[string]any{"space": spaceID, "live": live})
	return msg(NegOpenType, sid, binary.AppendUvarint(nil, uint64(len(p))), p, neg)
}

// NegMsg is a negentropy message for session sid.
func NegMsg(sid uint64, neg []byte) []byte { return msg(NegMsgType, sid, neg) }

// NegErrMsg ends session sid with a reason.
func NegErrMsg(sid uint64, code, message string) []byte {
	b, _ := json.Marshal(map[string]string{"code": code, "message": message})
	return msg(NegErrType, sid, b)
}

// Want asks for versions by digest (flag 0: as kept).
func Want(sid uint64, digests ...[32]byte) []byte {
	b := msg(WantType, sid, []byte{0})
	for _, d := range digests {
		b = append(b, d[:]...)
	}
	return b
}

// Versions carries versions' JSON with a flag (FlagPush: unasked).
func Versions(sid uint64, flag byte, raws ...[]byte) []byte {
	b := msg(VersionsType, sid, []byte{flag})
	for _, r := range raws {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// EmptySet is negentropy's first message for an empty set: the responder
// answers with what it holds, by fingerprints and then ids.
func EmptySet() []byte {
	v := negentropy.NewVector(0)
	v.Seal()
	cl, err := negentropy.NewClient(v, 1<<20)
	if err != nil {
		panic(err)
	}
	first, err := cl.Initiate()
	if err != nil {
		panic(err)
	}
	return first
}

// SendEverything is a 5-byte negentropy message asking, in one range to
// infinity, for every id the responder holds: an empty id list.
func SendEverything() []byte {
	return []byte{negentropy.ProtocolVersion, 0, 0, byte(negentropy.ModeIdList), 0}
}

// Parse splits a message into its type, session id and body; ok is false
// for one too short to be a message.
func Parse(m []byte) (typ byte, sid uint64, body []byte, ok bool) {
	if len(m) < 2 {
		return 0, 0, nil, false
	}
	sid, n := binary.Uvarint(m[1:])
	if n <= 0 {
		return 0, 0, nil, false
	}
	return m[0], sid, m[1+n:], true
}

// NegErr reads a NEG-ERR's body: its reason code and message.
func NegErr(body []byte) (code, message string) {
	var e struct{ Code, Message string }
	json.Unmarshal(body, &e)
	return e.Code, e.Message
}

// Forger makes versions of a space that fail the crypto gate (02 §3.3)
// only at its last and costly step: each a fresh record by a throwaway
// key, its id the content id of what it signs, its signature broken. A
// node verifies each before it can refuse it.
type Forger struct {
	w *corpus.Writer
	n int
}

// NewForger makes a forger of versions in space.
func NewForger(spaceID string) (*Forger, error) {
	w, err := corpus.NewWriter(spaceID)
	if err != nil {
		return nil, err
	}
	return &Forger{w: w}, nil
}

// Next is the next forgery's JSON.
func (f *Forger) Next() []byte {
	f.n++
	v, err := f.w.First("app.notes", canonical.NewObject("forged", float64(f.n)))
	if err != nil {
		panic(err)
	}
	o := v.Object().Clone()
	sig, _ := o.Get("signature")
	s := []byte(sig.(string))
	for i := 8; i < 24 && i < len(s); i++ {
		s[i] = 'A' + byte((int(s[i])+f.n)%26)
	}
	o.Set("signature", string(s))
	b, err := canonical.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

// Unstandable is a validly signed edit by the forger's throwaway key,
// with a body of about size bytes, whose prev and genesis name a version
// sent nowhere: it can never stand, and a node holds it aside as later
// (02 §9.5) within its bounds on what waits.
func (f *Forger) Unstandable(size int) []byte {
	f.n++
	first, err := f.w.First("app.notes", canonical.NewObject("n", float64(f.n)))
	if err != nil {
		panic(err)
	}
	pad := make([]byte, size)
	for i := range pad {
		pad[i] = 'a' + byte((i*7+f.n)%26)
	}
	v, err := f.w.Next(first, canonical.NewObject("n", float64(f.n), "pad", string(pad)))
	if err != nil {
		panic(err)
	}
	b, err := canonical.Marshal(v.Object())
	if err != nil {
		panic(err)
	}
	return b
}

// Relay is a member of a relay speaking its messages by hand
// (docs/sync.md §4).
type Relay struct {
	Conn *transport.Conn
	Key  string
}

// JoinRelay connects to a relay at url with a throwaway key and joins
// room with introductions off.
func JoinRelay(ctx context.Context, url, room string) (*Relay, error) {
	k, err := identity.GenerateKey()
	if err != nil {
		return nil, err
	}
	c, err := transport.Dial(ctx, url, &transport.Options{Self: transport.Carrier(k)})
	if err != nil {
		return nil, err
	}
	r := &Relay{Conn: c, Key: k.DID()}
	j, _ := json.Marshal(map[string]any{"type": "join", "room": room, "intro": false})
	if err := c.Send(ctx, j); err != nil {
		c.Close()
		return nil, err
	}
	go func() { // reads what the relay says, so it is never the slow one
		for {
			if _, err := c.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
	return r, nil
}

// Forward sends payload (a JSON string here) to member to of room, or to
// every other member when to is "".
func (r *Relay) Forward(ctx context.Context, room, to, payload string) error {
	m := map[string]any{"type": "forward", "room": room, "payload": payload}
	if to != "" {
		m["to"] = to
	}
	b, _ := json.Marshal(m)
	return r.Conn.Send(ctx, b)
}
