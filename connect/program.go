package connect

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect/internal/channel"
	"github.com/minca-go/minca/identity"
)

// Send is a message for one peer in the code's room.
type Send struct {
	Peer    string
	Message []byte
}

// Limits of a side of the code channel.
const (
	MaxPeers      = 64 // peers a program greets with its commitment; later ones are not
	MaxCheckTries = 3  // wrong checks a person may give before the program gives up
)

// ProgramState is where a program's exchange stands (06 §3).
type ProgramState uint8

const (
	ProgramWaiting ProgramState = iota // greeting each peer with its commitment; no key taken
	ProgramKeyed                       // took a peer's key and sent its point; waiting for code:home
	ProgramAsked                       // the home said where it lives; asked, waiting for code:heard
	ProgramHeard                       // the home heard: waiting for its answer and the person's check
	ProgramDone                        // kept the grant and said done
	ProgramDenied                      // the home said no
	ProgramRefused                     // the grant failed the checks a program makes of it
	ProgramFailed                      // the person gave a check that does not match, too often
)

// ProgramOptions are what a program connects with.
type ProgramOptions struct {
	// Code is the code it made (NewCode) and opened the home with.
	Code Code
	// Page is the connect page it opened, as ConnectPage reads it; the
	// home must say it lives at that page's origin, and the grant is kept
	// with this page as its home, whatever the grant names.
	Page string
	// Key is the program's own key: the grant's audience, which signs the
	// proof. Required.
	Key identity.Signer
	// Name is what the program calls itself, at most 80 characters.
	Name string
	// Now is the clock the note's expiry is checked by; nil is time.Now.
	Now func() time.Time
}

// Program is the joining side of connecting by code (06 §3), as a state
// machine independent of the transport: it is told of peers connecting
// ([Program.Joined]) and of their messages ([Program.Receive]) and of the
// check the person gives ([Program.GiveCheck]), and returns the messages
// to send. [RunProgram] drives one over a [Room].
//
// It makes one exchange, with a fresh ephemeral key: it sends its
// commitment to each peer that connects before it sees any key, and its
// point only to the first peer whose code:key it takes, ignoring every
// later one; it asks only a home that says it lives at the origin it
// opened; it checks the grant as an app does (§2.6) and keeps it, and says
// code:done, only once the person has given the check and it matches.
// Not safe for concurrent use.
type Program struct {
	code         Code
	page, origin string
	key          identity.Signer
	name         string
	now          func() time.Time

	eph     *channel.Ephemeral
	commit  string
	helloed map[string]bool
	hailed  bool   // its commitment went to the whole room (Hello)
	home    string // the peer whose key it took
	sess    *channel.Session
	state   ProgramState
	grant   *Grant // checked, held until the check matches
	checked bool
	tries   int
	err     error
}

// NewProgram starts a program's side of connecting by code, with a fresh
// ephemeral key for its one exchange.
func NewProgram(o ProgramOptions) (*Program, error) {
	if o.Key == nil {
		return nil, errors.New("minca/connect: a program needs its own key")
	}
	page, origin, err := ConnectPage(o.Page)
	if err != nil {
		return nil, err
	}
	if canonical.UTF16Len(o.Name) > MaxNameLen {
		return nil, refuse(CodeRequestName, "name", "a program's name is at most 80 characters (06 §3)")
	}
	eph, err := channel.NewEphemeral()
	if err != nil {
		return nil, err
	}
	c := channel.Commit(eph.Point())
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Program{code: o.Code, page: page, origin: origin, key: o.Key, name: o.Name, now: now, eph: eph,
		commit: base64.RawURLEncoding.EncodeToString(c[:]), helloed: map[string]bool{}}, nil
}

// State is where the exchange stands.
func (p *Program) State() ProgramState { return p.state }

// Finished reports whether the exchange is over, one way or another.
func (p *Program) Finished() bool { return p.state >= ProgramDone }

// Result is the grant kept, with Home the page opened, once the state is
// ProgramDone; the *Refusal that ended it when it is denied, refused or
// failed; nil, nil while it goes on.
func (p *Program) Result() (*Grant, error) {
	if p.state == ProgramDone {
		return p.grant, nil
	}
	return nil, p.err
}

// Joined greets a peer that connected with the program's commitment
// (code:hello), until a home has heard it, and to at most MaxPeers peers.
//
// In a room hailed with [Program.Hello], a peer is known only by the first
// message it sends, which it could send only after the hail reached it: it
// counts as greeted, and is not greeted again.
func (p *Program) Joined(peer string) []Send {
	if p.state >= ProgramHeard || p.helloed[peer] || len(p.helloed) >= MaxPeers {
		return nil
	}
	p.helloed[peer] = true
	if p.hailed {
		return nil
	}
	return []Send{{Peer: peer, Message: p.hello()}}
}

// Hello is the program's commitment (code:hello) for every peer of a room
// where peers do not see each other join (a [Hailer]), or nil once the
// program has taken a key: it greets nobody new after that, since it
// ignores every later key (06 §3).
func (p *Program) Hello() []byte {
	if p.state != ProgramWaiting {
		return nil
	}
	p.hailed = true
	return p.hello()
}

func (p *Program) hello() []byte {
	return encodeClear(MsgHello, canonical.NewObject("commit", p.commit))
}

// Receive takes a message from peer and returns what to send. An error is
// a *Refusal saying why the message was ignored; an ignored message changes
// nothing, and the exchange goes on.
func (p *Program) Receive(peer string, b []byte) ([]Send, error) {
	if p.Finished() {
		return nil, refuse(CodeCodeSpent, "", "the exchange is over (06 §3)")
	}
	m, err := decodeMessage(b)
	if err != nil {
		return nil, err
	}
	switch m.typ {
	case MsgKey:
		return p.takeKey(peer, m)
	case MsgHome, MsgHeard, MsgAnswer:
	default:
		return nil, refuse(CodeCodePeer, "type", m.typ+" is not a message the home sends (06 §3)")
	}
	if p.state == ProgramWaiting || peer != p.home {
		return nil, refuse(CodeCodePeer, "", m.typ+" from a peer that is not this exchange's (06 §3)")
	}
	want := ProgramKeyed // code:home
	switch m.typ {
	case MsgHeard:
		want = ProgramAsked
	case MsgAnswer:
		want = ProgramHeard
	}
	if p.state != want || m.typ == MsgAnswer && p.grant != nil {
		return nil, refuse(CodeCodePeer, "type", m.typ+" out of its order (06 §3)")
	}
	body, err := openBody(p.sess, m)
	if err != nil {
		return nil, err
	}
	switch m.typ {
	case MsgHome:
		return p.homeSaid(body)
	case MsgHeard:
		if body.Len() != 0 {
			return nil, refuse(CodeCodePayload, "payload", "code:heard's body is {} (06 §3)")
		}
		p.state = ProgramHeard
		return nil, nil
	}
	return p.answered(body)
}

// takeKey takes the first code:key from a peer it greeted: its point goes
// to that peer alone, and every later key is ignored.
func (p *Program) takeKey(peer string, m message) ([]Send, error) {
	if p.state != ProgramWaiting {
		return nil, refuse(CodeCodeSpent, "", "a later code:key: the program takes one, from the first peer (06 §3)")
	}
	if !p.helloed[peer] {
		return nil, refuse(CodeCodePeer, "", "code:key from a peer the program has not sent its commitment (06 §3)")
	}
	o, err := readBytes(MsgKey, m.clear, "key", channel.PointLen)
	if err != nil {
		return nil, err
	}
	if string(o) == string(p.eph.Point()) {
		return nil, refuse(CodeCodePayload, "payload.key", "code:key carries the program's own point (06 §3)")
	}
	sess, err := channel.Derive(channel.Code, p.code[:], false, p.eph, o)
	if err != nil {
		return nil, refuse(CodeCodePayload, "payload.key", "code:key: "+err.Error())
	}
	p.sess, p.home, p.state = sess, peer, ProgramKeyed
	point := canonical.NewObject("key", base64.RawURLEncoding.EncodeToString(p.eph.Point()))
	return []Send{{Peer: peer, Message: encodeClear(MsgPoint, point)}}, nil
}

// homeSaid answers code:home with code:ask, when the home lives at the
// origin opened.
func (p *Program) homeSaid(body *canonical.Object) ([]Send, error) {
	s, err := payloadStrings(MsgHome, body, []string{"origin"})
	if err != nil {
		return nil, err
	}
	if _, err := ParseOrigin(s[0]); err != nil {
		return nil, refuse(CodeCodePayload, "payload.origin", "code:home's origin: "+err.Error())
	}
	if s[0] != p.origin {
		return nil, refuse(CodeCodeOrigin, "payload.origin", fmt.Sprintf("the home says it lives at %s, not at %s, the home opened: the program asks only the home it opened (06 §3)", s[0], p.origin))
	}
	proof, err := KeyProof{Audience: p.key.DID(), RecordsOnly: true, Origin: p.origin}.Sign(p.key)
	if err != nil {
		return nil, err
	}
	ask := canonical.NewObject("did", p.key.DID(), "proof", proof)
	if p.name != "" {
		ask.Set("name", p.name)
	}
	msg, err := encodeSealed(p.sess, MsgAsk, ask)
	if err != nil {
		return nil, err
	}
	p.state = ProgramAsked
	return []Send{{Peer: p.home, Message: msg}}, nil
}

// answered takes code:answer: a denial ends the exchange; a grant is
// checked as an app checks one (§2.6), records only, and held until the
// person gives the check.
func (p *Program) answered(body *canonical.Object) ([]Send, error) {
	g, denied, err := readAnswer(body)
	if err != nil {
		return nil, err
	}
	if g == nil {
		p.state, p.err = ProgramDenied, refuse(CodeCodeDenied, "denied", "the home said no: "+denied)
		return nil, nil
	}
	if err := CheckGrant(g, GrantCheck{Audience: p.key.DID(), RecordsOnly: true, Now: p.now()}); err != nil {
		p.state, p.err = ProgramRefused, err
		return nil, nil
	}
	p.grant = g.WithHome(p.page)
	if p.checked {
		return p.done()
	}
	return nil, nil
}

// AwaitsCheck reports whether the program waits for the person to give the
// check: the home has heard it, and no matching check was given yet.
func (p *Program) AwaitsCheck() bool { return p.state == ProgramHeard && !p.checked }

// GiveCheck takes the six digits the person gives (spaces and hyphens
// ignored). A match, once the grant is in and passed its checks, keeps it
// and returns code:done; a mismatch is a *Refusal (code/check), and after
// MaxCheckTries of them the exchange fails with nothing kept.
func (p *Program) GiveCheck(digits string) ([]Send, error) {
	if !p.AwaitsCheck() {
		return nil, fmt.Errorf("minca/connect: no check is awaited (the exchange is %s)", p.stateName())
	}
	d := strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(digits))
	if subtle.ConstantTimeCompare([]byte(d), []byte(p.sess.Check())) != 1 {
		p.tries++
		err := refuse(CodeCodeCheck, "check", "the check given does not match this exchange's: the home it reached is not the one showing that check, or it was mistyped (06 §3)")
		if p.tries >= MaxCheckTries {
			p.state, p.err = ProgramFailed, err
		}
		return nil, err
	}
	p.checked = true
	if p.grant != nil {
		return p.done()
	}
	return nil, nil
}

func (p *Program) done() ([]Send, error) {
	msg, err := encodeSealed(p.sess, MsgDone, canonical.NewObject())
	if err != nil {
		return nil, err
	}
	p.state = ProgramDone
	return []Send{{Peer: p.home, Message: msg}}, nil
}

func (p *Program) stateName() string {
	return [...]string{"waiting", "keyed", "asked", "heard", "done", "denied", "refused", "failed"}[p.state]
}
