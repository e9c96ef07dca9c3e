package connect

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect/internal/channel"
	"github.com/minca-go/minca/identity"
)

// HomeState is where a home's side of connecting by code stands (06 §3).
type HomeState uint8

const (
	HomeWaiting  HomeState = iota // no hello yet: nobody may be waiting on the link
	HomeKeyed                     // answered the first hello with its key; waiting for that peer's point
	HomeOpened                    // the point matched; said where it lives, waiting for code:ask
	HomeAsked                     // the code is spent: heard the program, waiting for the person
	HomeAnswered                  // sent the grant; waiting for code:done
	HomeDone                      // the program kept the grant
	HomeDenied                    // sent the person's no
)

// HomeExchange is the offering side of connecting by code (06 §3), the
// home's, as a state machine independent of the transport: it is told of
// messages ([HomeExchange.Receive]) and of the person's decision
// ([HomeExchange.Answer], [HomeExchange.Deny]) and returns the messages to
// send. [RunHome] drives one over a [Room].
//
// It makes one exchange, with a fresh ephemeral key: it answers the first
// code:hello with code:key and ignores every later one; answers that peer's
// code:point with code:home only if the point hashes to its commitment;
// takes that program's first code:ask that reads, after which the code is
// spent and no other ask is answered; and ignores code:done from any other
// peer. It never sends a grant made out to another key than the ask's, nor
// one for more than records. Not safe for concurrent use.
type HomeExchange struct {
	code   Code
	origin string
	eph    *channel.Ephemeral
	peer   string
	commit []byte
	sess   *channel.Session
	state  HomeState
	ask    Ask
}

// NewHomeExchange starts a home's side for the code it was opened with;
// origin is the home's own, as code:home says it.
func NewHomeExchange(code Code, origin string) (*HomeExchange, error) {
	if _, err := ParseOrigin(origin); err != nil {
		return nil, fmt.Errorf("minca/connect: the home's origin: %w", err)
	}
	eph, err := channel.NewEphemeral()
	if err != nil {
		return nil, err
	}
	return &HomeExchange{code: code, origin: origin, eph: eph}, nil
}

// State is where the exchange stands.
func (h *HomeExchange) State() HomeState { return h.state }

// Asked is the program's ask, with the check to show, once the code is
// spent (state HomeAsked or later).
func (h *HomeExchange) Asked() (Ask, bool) { return h.ask, h.state >= HomeAsked }

// Receive takes a message from peer and returns what to send. An error is
// a *Refusal saying why the message was ignored; an ignored message changes
// nothing.
func (h *HomeExchange) Receive(peer string, b []byte) ([]Send, error) {
	m, err := decodeMessage(b)
	if err != nil {
		return nil, err
	}
	switch m.typ {
	case MsgHello:
		return h.hello(peer, m)
	case MsgPoint:
		return h.point(peer, m)
	case MsgAsk, MsgDone:
	default:
		return nil, refuse(CodeCodePeer, "type", m.typ+" is not a message the program sends (06 §3)")
	}
	if h.state < HomeOpened || peer != h.peer {
		return nil, refuse(CodeCodePeer, "", m.typ+" from a peer that is not this exchange's (06 §3)")
	}
	if m.typ == MsgAsk {
		if h.state != HomeOpened {
			return nil, refuse(CodeCodeSpent, "", "a later code:ask: the code is spent, and the home answers no other ask (06 §3)")
		}
		body, err := openBody(h.sess, m)
		if err != nil {
			return nil, err
		}
		ask, err := readAsk(body)
		if err != nil {
			return nil, err
		}
		heard, err := encodeSealed(h.sess, MsgHeard, canonical.NewObject())
		if err != nil {
			return nil, err
		}
		ask.Check = h.sess.Check()
		h.ask, h.state = ask, HomeAsked
		return []Send{{Peer: h.peer, Message: heard}}, nil
	}
	if h.state != HomeAnswered {
		return nil, refuse(CodeCodePeer, "type", "code:done out of its order (06 §3)")
	}
	body, err := openBody(h.sess, m)
	if err != nil {
		return nil, err
	}
	if body.Len() != 0 {
		return nil, refuse(CodeCodePayload, "payload", "code:done's body is {} (06 §3)")
	}
	h.state = HomeDone
	return nil, nil
}

func (h *HomeExchange) hello(peer string, m message) ([]Send, error) {
	if h.state != HomeWaiting {
		return nil, refuse(CodeCodeSpent, "", "a later code:hello: the home answers the first and ignores every later one (06 §3)")
	}
	c, err := readBytes(MsgHello, m.clear, "commit", 32)
	if err != nil {
		return nil, err
	}
	h.peer, h.commit, h.state = peer, c, HomeKeyed
	key := canonical.NewObject("key", base64.RawURLEncoding.EncodeToString(h.eph.Point()))
	return []Send{{Peer: peer, Message: encodeClear(MsgKey, key)}}, nil
}

func (h *HomeExchange) point(peer string, m message) ([]Send, error) {
	if h.state != HomeKeyed || peer != h.peer {
		return nil, refuse(CodeCodePeer, "", "code:point from a peer the home did not send its key, or out of its order (06 §3)")
	}
	j, err := readBytes(MsgPoint, m.clear, "key", channel.PointLen)
	if err != nil {
		return nil, err
	}
	c := channel.Commit(j)
	if subtle.ConstantTimeCompare(c[:], h.commit) != 1 {
		return nil, refuse(CodeCodeCommitment, "payload.key", "the point does not hash to the commitment the program sent first (06 §3)")
	}
	sess, err := channel.Derive(channel.Code, h.code[:], true, h.eph, j)
	if err != nil {
		return nil, refuse(CodeCodePayload, "payload.key", "code:point: "+err.Error())
	}
	msg, err := encodeSealed(sess, MsgHome, canonical.NewObject("origin", h.origin))
	if err != nil {
		return nil, err
	}
	h.sess, h.state = sess, HomeOpened
	return []Send{{Peer: h.peer, Message: msg}}, nil
}

// Answer sends the grant the person allowed (06 §3: code:answer {grant},
// as the home sends it, without home). It refuses, sending nothing, a
// grant made out to another key than the ask's, or whose note grants more
// than records.
func (h *HomeExchange) Answer(g *Grant) ([]Send, error) {
	if h.state != HomeAsked {
		return nil, fmt.Errorf("minca/connect: nothing to answer (the exchange is past or before an ask)")
	}
	if g.Note.Aud != h.ask.DID {
		return nil, refuse(CodeGrantAudience, "note.payload.aud", "the home never sends a grant made out to another key than the one that asked (06 §3)")
	}
	if !identity.Covers(identity.CmdRecord, g.Note.Cmd) || g.ContactKey != nil {
		return nil, refuse(CodeHomeRecordsOnly, "note.payload.cmd", "a program connected by code is granted records only (06 §3)")
	}
	sent := g.WithHome("")
	msg, err := encodeSealed(h.sess, MsgAnswer, canonical.NewObject("grant", sent.Value()))
	if err != nil {
		return nil, err
	}
	h.state = HomeAnswered
	return []Send{{Peer: h.peer, Message: msg}}, nil
}

// Deny sends the person's no, with a reason of at most 500 characters.
func (h *HomeExchange) Deny(reason string) ([]Send, error) {
	if h.state != HomeAsked {
		return nil, fmt.Errorf("minca/connect: nothing to answer (the exchange is past or before an ask)")
	}
	if canonical.UTF16Len(reason) > MaxDeniedLen {
		reason = string([]rune(reason)[:MaxDeniedLen/2])
	}
	msg, err := encodeSealed(h.sess, MsgAnswer, canonical.NewObject("denied", reason))
	if err != nil {
		return nil, err
	}
	h.state = HomeDenied
	return []Send{{Peer: h.peer, Message: msg}}, nil
}

// GrantCode is what a home does once the person allows a program that
// asked by code (06 §3, §2.5): it makes the ConnectRequest for the ask,
// checks it (the proof against this home's origin, and every check of
// [Home.Check]), issues the records-only grant with o, and remembers the
// connection by its key. The note lasts o.Days (the home's choice), else
// DefaultDays. A refusal is a *Refusal, to say no with.
func (h *Home) GrantCode(ctx context.Context, ask Ask, o GrantOptions) (*Grant, error) {
	r, err := NewCodeRequest(ask.DID, ask.Proof, ask.Name, 0)
	if err != nil {
		return nil, err
	}
	if err := h.Check(ctx, r, ""); err != nil {
		return nil, err
	}
	g, err := IssueGrant(r, o)
	if err != nil {
		return nil, err
	}
	if _, err := h.Remember(ctx, r, "", GrantedBy(g)); err != nil {
		return nil, err
	}
	return g, nil
}
