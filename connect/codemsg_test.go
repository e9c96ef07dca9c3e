package connect_test

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/internal/channel"
)

// connect-code.test.ts: the eight messages, their shapes and their limits
// (06 §3): a message out of shape is ignored, and the code is not spent by
// an ask that does not read.
func TestConnectCode_TheEightMessagesAndTheirLimits(t *testing.T) {
	s := newScene(t)
	h := s.homeSide()
	eph, _ := channel.NewEphemeral()
	c := channel.Commit(eph.Point())
	for _, bad := range [][]byte{
		[]byte(`{"type":"code:hello","from":null,"payload":{"commit":"x"},"to":"y"}`),
		[]byte(`{"type":"code:hello","from":"did:key:z","payload":{}}`),
		[]byte(`{"type":"code:hi","from":null,"payload":{}}`),
		[]byte(`{"type":"code:hello","from":null,"payload":"` + strings.Repeat("a", 500) + `"}`),
		[]byte(`{"type":"code:hello","from":null,"payload":[]}`),
		[]byte(`{"type":"code:ask","from":null,"payload":"not base64!"}`),
		[]byte(`{"type":"code:ask","from":null,"payload":{}}`),
		[]byte(`{"type":"code:hello","from":null,"payload":{}}` + " "),
		[]byte(`nope`),
	} {
		_, err := h.Receive("p", bad)
		var r *connect.Refusal
		if !errors.As(err, &r) || r.Code != connect.CodeCodeFrame && r.Code != connect.CodeCodePayload {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, bad := range [][]byte{
		clearMsg(t, connect.MsgHello, "commit", c[:31]),
		msg(t, connect.MsgHello, canonical.NewObject("commit", base64.RawURLEncoding.EncodeToString(c[:]), "x", "y")),
	} {
		_, err := h.Receive("p", bad)
		wantCode(t, err, connect.CodeCodePayload)
	}
	if h.State() != connect.HomeWaiting {
		t.Fatal("a bad hello was taken")
	}
	// A program written by hand: its asks out of shape are ignored, and
	// the code stays unspent until one reads.
	key, err := h.Receive("p", clearMsg(t, connect.MsgHello, "commit", c[:]))
	if err != nil {
		t.Fatal(err)
	}
	o := clearBytes(t, key[0].Message, "key")
	_, err = h.Receive("p", clearMsg(t, connect.MsgPoint, "key", append([]byte{0x04}, make([]byte, 64)...)))
	wantCode(t, err, connect.CodeCodePayload)
	home, err := h.Receive("p", clearMsg(t, connect.MsgPoint, "key", eph.Point()))
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := channel.Derive(channel.Code, s.code[:], false, eph, o)
	if body, err := openMsg(t, sess, home[0].Message); err != nil || string(marshal(t, body)) != `{"origin":"https://home.example"}` {
		t.Fatalf("%v %v", body, err)
	}
	did := s.progKey.DID()
	for _, bad := range []*canonical.Object{
		canonical.NewObject("did", did, "proof", "p", "name", strings.Repeat("n", 81)),
		canonical.NewObject("did", "zDnae", "proof", "p"),
		canonical.NewObject("did", did, "proof", strings.Repeat("p", 201)),
		canonical.NewObject("did", did),
		canonical.NewObject("did", did, "proof", "p", "extra", "x"),
		canonical.NewObject("did", did, "proof", 7),
	} {
		_, err := h.Receive("p", sealed(t, sess, connect.MsgAsk, bad))
		wantCode(t, err, connect.CodeCodePayload)
	}
	if h.State() != connect.HomeOpened {
		t.Fatal("an ask out of shape spent the code")
	}
	// A repeat, or one from another peer, is not taken either.
	ask := canonical.NewObject("did", did, "proof", "p")
	other, _ := channel.Derive(channel.Code, s.code[:], false, eph, o)
	_, err = h.Receive("q", sealed(t, other, connect.MsgAsk, ask))
	wantCode(t, err, connect.CodeCodePeer)
	heard, err := h.Receive("p", sealed(t, sess, connect.MsgAsk, ask))
	if err != nil || len(heard) != 1 || h.State() != connect.HomeAsked {
		t.Fatalf("%v %v", heard, err)
	}
	got, _ := h.Asked()
	if got.DID != did || got.Name != "" || got.Check != sess.Check() {
		t.Fatalf("%+v", got)
	}
	_, err = h.Receive("p", sealed(t, sess, connect.MsgAsk, ask))
	wantCode(t, err, connect.CodeCodeSpent)
	_, err = h.Receive("p", clearMsg(t, connect.MsgHello, "commit", c[:]))
	wantCode(t, err, connect.CodeCodeSpent)
	_, err = h.Receive("q", sealed(t, other, connect.MsgDone, canonical.NewObject()))
	wantCode(t, err, connect.CodeCodePeer)
}

// A grant past code:answer's limit is refused before it is sealed, and
// the home can still say no: the count of its messages stays whole.
func TestConnectCode_AnAnswerPastItsLimitIsNotSent(t *testing.T) {
	s := newScene(t)
	p, h := s.program(s.progKey), s.homeSide()
	ask := direct(t, p, h)
	spaces := make([]connect.GrantSpace, 100)
	for i := range spaces {
		spaces[i] = connect.GrantSpace{ID: spaceID(strconv.Itoa(i)), Name: "s", Invite: strings.Repeat("i", 12000)}
	}
	g, err := s.a.home.GrantCode(ctx, ask, connect.GrantOptions{Account: s.a.root, Spaces: spaces, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.Answer(g)
	wantCode(t, err, connect.CodeCodeFrame)
	if len(out) != 0 || h.State() != connect.HomeAsked {
		t.Fatal("an answer past its limit was sent")
	}
	out, err = h.Deny("too large")
	if err != nil {
		t.Fatal(err)
	}
	deliver(t, out, p.Receive, "home")
	if _, err := p.Result(); !isCode(err, connect.CodeCodeDenied) {
		t.Fatalf("the program did not hear no: %v", err)
	}
}
