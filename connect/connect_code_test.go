package connect_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/connecttest"
	"github.com/minca-go/minca/connect/internal/channel"
)

// connect-code.test.ts: "the code alone does not open a recorded exchange"
// (06 §3): someone in the room holding the code, from the start, is
// ignored by both sides once each has taken its one exchange, and opens
// nothing of it.
func TestConnectCode_TheCodeAloneDoesNotOpenARecordedExchange(t *testing.T) {
	overRelays(t, theCodeAloneDoesNotOpenARecordedExchange)
}

func theCodeAloneDoesNotOpenARecordedExchange(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	mallory := join(t, s.relay, s.code.Room())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Mallory waits until the two have each taken the other's point,
		// then says hello to the home and offers the program a key.
		var homePeer, progPeer string
		// Bounded, so that an exchange that never gets as far as the
		// points fails the test rather than leaving it to the timeout.
		deadline := time.Now().Add(30 * time.Second)
		for homePeer == "" {
			if time.Now().After(deadline) {
				t.Error("the two never took each other's point within 30s")
				return
			}
			time.Sleep(time.Millisecond)
			for _, r := range s.relay.Recording() {
				if typ, _ := readMsgQuiet(r.Message); typ == connect.MsgPoint {
					homePeer, progPeer = r.To, r.From
				}
			}
		}
		eph, _ := channel.NewEphemeral()
		c := channel.Commit(eph.Point())
		mallory.Send(ctx, homePeer, clearMsg(t, connect.MsgHello, "commit", c[:]))
		mallory.Send(ctx, progPeer, clearMsg(t, connect.MsgKey, "key", eph.Point()))
	}()
	shown := make(chan string, 1)
	// The person decides once both sides have ignored Mallory.
	decide := func(c context.Context, ask connect.Ask) (connect.Decision, error) {
		for len(s.ignoredFrom("home", mallory.ID())) == 0 || len(s.ignoredFrom("program", mallory.ID())) == 0 {
			select {
			case <-c.Done():
				return connect.Decision{}, c.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return s.allow(shown)(c, ask)
	}
	r := s.run(s.program(s.progKey), s.homeSide(), decide, person(shown))
	<-done
	if r.progErr != nil || r.homeErr != nil || r.grant == nil {
		t.Fatalf("the exchange: %+v", r)
	}
	if !slices.Equal(codes(s.ignoredFrom("home", mallory.ID())), []string{connect.CodeCodeSpent}) || !slices.Equal(codes(s.ignoredFrom("program", mallory.ID())), []string{connect.CodeCodeSpent}) {
		t.Fatalf("Mallory's hello and key were not ignored as later ones: home %v, program %v", codes(s.ignoredBy("home")), codes(s.ignoredBy("program")))
	}
	if opened := opensAny(t, s.code, seen(t, s.relay.Recording())); len(opened) != 0 {
		t.Fatalf("the code opened %v", opened)
	}
}

// connect-code.test.ts: "a recording of the room, and the code learned
// later, open nothing" (06 §3): the recording shows neither the program's
// key nor the grant, and with the code nothing in it opens.
func TestConnectCode_ARecordingOfTheRoomAndTheCodeLearnedLaterOpenNothing(t *testing.T) {
	overRelays(t, aRecordingOfTheRoomAndTheCodeLearnedLaterOpenNothing)
}

func aRecordingOfTheRoomAndTheCodeLearnedLaterOpenNothing(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	r := s.connectOnce()
	if r.progErr != nil || r.homeErr != nil {
		t.Fatalf("%+v", r)
	}
	rec := s.relay.Recording()
	for _, m := range rec {
		for _, secret := range []string{s.progKey.DID(), s.a.root.DID(), "Leif", "agent", homeOrigin} {
			if bytes.Contains(m.Message, []byte(secret)) {
				t.Fatalf("the recording shows %q in %s", secret, m.Message)
			}
		}
	}
	if opened := opensAny(t, s.code, seen(t, rec)); len(opened) != 0 {
		t.Fatalf("the code opened %v", opened)
	}
}

// connect-code.test.ts: "a relay that relabels or repeats messages changes
// nothing" (06 §3): every message arrives after copies of it under every
// other type of its kind, with its count moved on, and carrying the
// sender's previous sealed message, and is then repeated; the exchange
// ends as it would have, and not one copy was taken.
func TestConnectCode_ARelayThatRelabelsOrRepeatsMessagesChangesNothing(t *testing.T) {
	overRelays(t, aRelayThatRelabelsOrRepeatsMessagesChangesNothing)
}

func aRelayThatRelabelsOrRepeatsMessagesChangesNothing(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	clearTypes := []string{connect.MsgHello, connect.MsgKey, connect.MsgPoint}
	sealedTypes := []string{connect.MsgHome, connect.MsgAsk, connect.MsgHeard, connect.MsgAnswer, connect.MsgDone}
	previous := map[string]string{} // the last sealed payload each peer sent
	s.relay.Tamper = func(room, from, to string, m []byte) [][]byte {
		v, _ := canonical.Parse(m)
		o := v.(*canonical.Object)
		tv, _ := o.Get("type")
		typ := tv.(string)
		p, _ := o.Get("payload")
		relabel := func(t2 string, payload any) []byte {
			b, _ := canonical.Marshal(canonical.NewObject("type", t2, "from", nil, "payload", payload))
			return b
		}
		var out [][]byte
		kind := clearTypes
		if slices.Contains(sealedTypes, typ) {
			kind = sealedTypes
			env, _ := base64.RawURLEncoding.DecodeString(p.(string))
			env[3]++
			out = append(out, relabel(typ, base64.RawURLEncoding.EncodeToString(env)))
			if prev, ok := previous[from]; ok {
				out = append(out, relabel(typ, prev))
			}
			previous[from] = p.(string)
		}
		for _, t2 := range kind {
			if t2 != typ {
				out = append(out, relabel(t2, p))
			}
		}
		return append(out, m, m)
	}
	r := s.connectOnce()
	if r.progErr != nil || r.homeErr != nil || r.grant == nil || r.grant.Note.Aud != s.progKey.DID() || r.grant.Home != homePage {
		t.Fatalf("%+v", r)
	}
	ignored := append(s.ignoredBy("home"), s.ignoredBy("program")...)
	if len(ignored) < 20 {
		t.Fatalf("only %d copies were ignored: %v", len(ignored), codes(ignored))
	}
	for _, c := range codes(ignored) {
		if !slices.Contains([]string{connect.CodeCodeSeal, connect.CodeCodePeer, connect.CodeCodeSpent, connect.CodeCodePayload}, c) {
			t.Fatalf("a copy was ignored for %s", c)
		}
	}
	conns, _ := s.a.home.Connections(ctx)
	if len(conns) != 1 {
		t.Fatalf("connections %+v", conns)
	}
}

// connect-code.test.ts: "a code works for one program: a second with the
// same code is not answered" (06 §3).
func TestConnectCode_ACodeWorksForOneProgram(t *testing.T) {
	overRelays(t, aCodeWorksForOneProgram)
}

func aCodeWorksForOneProgram(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	p1, p2 := s.program(s.progKey), s.program(newKey(t))
	h := s.homeSide()
	shown := make(chan string, 1)
	second := make(chan string, 1) // the second program's id in the room, once it joined
	decide := func(c context.Context, ask connect.Ask) (connect.Decision, error) {
		// The person decides once the home has ignored the second
		// program's hello: its own, not any ignored message, as the
		// first program hails until it takes the home's key, and one
		// slow to take it has its later hails ignored first.
		var id2 string
		select {
		case id2 = <-second:
		case <-c.Done():
			return connect.Decision{}, c.Err()
		}
		for len(s.ignoredFrom("home", id2)) == 0 {
			select {
			case <-c.Done():
				return connect.Decision{}, c.Err()
			case <-time.After(time.Millisecond):
			}
		}
		return s.allow(shown)(c, ask)
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	homeRoom, r1 := join(t, s.relay, s.code.Room()), join(t, s.relay, s.code.Room())
	homeErr, p1Err := make(chan error, 1), make(chan error, 1)
	go func() { homeErr <- connect.RunHome(c, homeRoom, h, decide, s.opts("home")) }()
	go func() { _, err := connect.RunProgram(c, r1, p1, person(shown), s.opts("program")); p1Err <- err }()
	for !slices.ContainsFunc(s.relay.Recording(), func(r connecttest.Recorded) bool { typ, _ := readMsgQuiet(r.Message); return typ == connect.MsgKey }) {
		if c.Err() != nil {
			t.Fatal("the home never sent the first program its key")
		}
		time.Sleep(time.Millisecond)
	}
	r2 := join(t, s.relay, s.code.Room())
	second <- r2.ID()
	c2, cancel2 := context.WithCancel(c)
	p2Err := make(chan error, 1)
	go func() {
		_, err := connect.RunProgram(c2, r2, p2, person(make(chan string)), &connect.RunOptions{Hail: 50 * time.Millisecond})
		p2Err <- err
	}()
	if err := <-p1Err; err != nil {
		t.Fatal(err)
	}
	if err := <-homeErr; err != nil {
		t.Fatal(err)
	}
	cancel2()
	if err := <-p2Err; !errors.Is(err, context.Canceled) || p2.State() != connect.ProgramWaiting {
		t.Fatalf("the second program: %v, %v", err, p2.State())
	}
	// The home ignored the second program's hellos (one, or as many hails
	// as came), and nothing else of it.
	id2 := r2.ID()
	if got := codes(s.ignoredFrom("home", id2)); len(got) == 0 || slices.ContainsFunc(got, func(c string) bool { return c != connect.CodeCodeSpent }) {
		t.Fatalf("the home ignored %v of the second program", got)
	}
	e := seen(t, s.relay.Recording())
	for _, r := range s.relay.Recording() {
		if typ, _ := readMsgQuiet(r.Message); r.To == id2 && typ == connect.MsgKey {
			t.Fatal("the second program was answered")
		}
	}
	// The first program sent its point to the home alone, once.
	if !slices.Equal(e.pointsSentTo, []string{e.homePeer}) {
		t.Fatalf("points sent to %v", e.pointsSentTo)
	}
}

// connect-code.test.ts: "saying no reaches the program; a note for another
// key, or for more than records, is refused" (06 §3, §2.6).
func TestConnectCode_SayingNoReachesTheProgramANoteForAnotherKeyOrForMoreThanRecordsIsRefused(t *testing.T) {
	no := func(ctx context.Context, ask connect.Ask) (connect.Decision, error) {
		return connect.Decision{Denied: "not this time"}, nil
	}
	overRelays(t, func(t *testing.T, kind string) {
		s := newSceneOver(t, kind)
		r := s.run(s.program(s.progKey), s.homeSide(), no, person(make(chan string)))
		if !isCode(r.progErr, connect.CodeCodeDenied) || !strings.Contains(r.progErr.Error(), "not this time") || r.grant != nil || r.homeErr != nil {
			t.Fatalf("%+v", r)
		}
	})
	s := newScene(t)

	// An honest home sends no grant for another key, nor for more.
	p, h := s.program(s.progKey), s.homeSide()
	ask := direct(t, p, h)
	other := newApp(t, "")
	wrongKey := other.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) { r.Via, r.RecordsOnly = connect.ViaCode, true })
	g, err := connect.IssueGrant(wrongKey, connect.GrantOptions{Account: s.a.root, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Answer(g)
	wantCode(t, err, connect.CodeGrantAudience)
	more := &connect.ConnectRequest{Audience: ask.DID, Access: connect.AccessWrite, Scope: connect.ScopeAccount}
	g, _ = connect.IssueGrant(more, connect.GrantOptions{Account: s.a.root, Now: now})
	_, err = h.Answer(g)
	wantCode(t, err, connect.CodeHomeRecordsOnly)

	// A home that would is refused by the program, which keeps nothing.
	for _, c := range []struct {
		name string
		g    func(did string) *connect.Grant
		code string
	}{
		{"another key", func(string) *connect.Grant {
			g, _ := connect.IssueGrant(wrongKey, connect.GrantOptions{Account: s.a.root, Now: now})
			return g
		}, connect.CodeGrantAudience},
		{"more than records", func(did string) *connect.Grant {
			g, _ := connect.IssueGrant(&connect.ConnectRequest{Audience: did, Access: connect.AccessWrite, Scope: connect.ScopeAccount}, connect.GrantOptions{Account: s.a.root, Now: now})
			return g
		}, connect.CodeGrantRecordsOnly},
	} {
		p := s.program(s.progKey)
		f := newFakeHome(t, p, s.code)
		f.handshake(homeOrigin)
		n := len(f.sent)
		if err := f.answer(canonical.NewObject("grant", c.g(s.progKey.DID()).Value())); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Result(); !isCode(err, c.code) || p.State() != connect.ProgramRefused {
			t.Fatalf("%s: %v %v", c.name, err, p.State())
		}
		if _, err := p.GiveCheck(f.sess.Check()); err == nil || len(f.sent) != n {
			t.Fatalf("%s: the program went on", c.name)
		}
	}
}

// connect-code.test.ts: "the program asks only the home it opened, and
// keeps that home, whatever the answer names" (06 §3).
func TestConnectCode_TheProgramAsksOnlyTheHomeItOpenedAndKeepsThatHome(t *testing.T) {
	s := newScene(t)
	for _, origin := range []string{"https://evil.example", "https://home.example:444", "https://home.example/", "http://home.example"} {
		p := s.program(s.progKey)
		f := newFakeHome(t, p, s.code)
		if ask := f.handshake(origin); ask != nil || p.State() != connect.ProgramKeyed {
			t.Fatalf("%s: the program asked (%v)", origin, p.State())
		}
	}
	p := s.program(s.progKey)
	f := newFakeHome(t, p, s.code)
	sess := mustSession(t, f, p)
	n := len(f.sent)
	err := f.feed(sealed(t, sess, connect.MsgHome, canonical.NewObject("origin", "https://evil.example")))
	wantCode(t, err, connect.CodeCodeOrigin)
	if len(f.sent) != n {
		t.Fatal("the program asked a home at another origin")
	}

	// At the home it opened, it asks; its proof names that origin; and it
	// keeps the page it opened, whatever the grant names.
	p = s.program(s.progKey)
	f = newFakeHome(t, p, s.code)
	ask := f.handshake(homeOrigin)
	did, _ := ask.Get("did")
	proof, _ := ask.Get("proof")
	if err := (connect.KeyProof{Audience: did.(string), RecordsOnly: true, Origin: homeOrigin}).Check(proof.(string)); err != nil {
		t.Fatal(err)
	}
	pr := &app{key: s.progKey}
	g, err := connect.IssueGrant(pr.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) { r.Via, r.RecordsOnly = connect.ViaCode, true }), connect.GrantOptions{Account: s.a.root, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.answer(canonical.NewObject("grant", g.WithHome("https://evil.example/connect").Value())); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GiveCheck(f.sess.Check()); err != nil {
		t.Fatal(err)
	}
	kept, err := p.Result()
	if err != nil || kept.Home != homePage {
		t.Fatalf("kept %+v %v", kept, err)
	}

	// Over a room: a real home at another origin is never asked, and waits
	// in vain; the program goes on waiting for the home it opened.
	overRelays(t, func(t *testing.T, kind string) {
		s := newSceneOver(t, kind)
		h, err := connect.NewHomeExchange(s.code, "https://evil.example")
		if err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		homeRoom := join(t, s.relay, s.code.Room())
		progRoom := join(t, s.relay, s.code.Room())
		homeErr := make(chan error, 1)
		hc, hcancel := context.WithCancel(c)
		defer hcancel()
		go func() { homeErr <- connect.RunHome(hc, homeRoom, h, s.allow(make(chan string, 1)), s.opts("home")) }()
		p := s.program(s.progKey)
		pc, pcancel := context.WithCancel(c)
		progErr := make(chan error, 1)
		go func() {
			_, err := connect.RunProgram(pc, progRoom, p, person(make(chan string)), s.opts("program"))
			progErr <- err
		}()
		// Both wait until the program has ignored the home's origin (or
		// the run's deadline): the home is then never asked, and the
		// program waits on. A home left to its own Wait would race the
		// exchange's round trips against that clock.
		for !slices.Contains(codes(s.ignoredBy("program")), connect.CodeCodeOrigin) && c.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		hcancel()
		if err := <-homeErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("the home: %v", err)
		}
		pcancel()
		if err := <-progErr; !errors.Is(err, context.Canceled) || p.State() != connect.ProgramKeyed {
			t.Fatalf("the program: %v, %v", err, p.State())
		}
		if !slices.Contains(codes(s.ignoredBy("program")), connect.CodeCodeOrigin) || h.State() != connect.HomeOpened {
			t.Fatalf("the program ignored %v; the home is %v", codes(s.ignoredBy("program")), h.State())
		}
	})
}

// connect-code.test.ts: "a home opened at a link nobody waits on any more
// says so" (06 §3).
func TestConnectCode_AHomeOpenedAtALinkNobodyWaitsOnAnyMoreSaysSo(t *testing.T) {
	overRelays(t, aHomeOpenedAtALinkNobodyWaitsOnAnyMoreSaysSo)
}

func aHomeOpenedAtALinkNobodyWaitsOnAnyMoreSaysSo(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	room := join(t, s.relay, s.code.Room())
	start := time.Now()
	err := connect.RunHome(ctx, room, s.homeSide(), s.allow(make(chan string, 1)), &connect.RunOptions{Wait: 50 * time.Millisecond})
	wantCode(t, err, connect.CodeCodeNobody)
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("said so before waiting")
	}
	// A program that said hello and went: the home is not left waiting.
	s = newSceneOver(t, kind)
	room = join(t, s.relay, s.code.Room())
	gone := join(t, s.relay, s.code.Room())
	eph, _ := channel.NewEphemeral()
	c := channel.Commit(eph.Point())
	toAll(t, gone, room.ID(), clearMsg(t, connect.MsgHello, "commit", c[:]))
	gone.Leave()
	// The hello is in the home's room before the home's wait starts: the
	// relay's delivery is not raced against the 50 ms.
	heard := heardFirst(t, room)
	h := s.homeSide()
	err = connect.RunHome(ctx, heard, h, s.allow(make(chan string, 1)), &connect.RunOptions{Wait: 50 * time.Millisecond})
	wantCode(t, err, connect.CodeCodeNobody)
	if h.State() != connect.HomeKeyed {
		t.Fatalf("the home did not hear the hello: %v", h.State())
	}
}

// connect-code.test.ts: "the program keeps its note only once the person
// gives the code the home shows; a point that breaks its commitment is
// ignored" (06 §3).
func TestConnectCode_TheProgramKeepsItsNoteOnlyOnceThePersonGivesTheCodeTheHomeShows(t *testing.T) {
	s := newScene(t)
	grantFor := func(ask connect.Ask) *connect.Grant {
		g, err := s.a.home.GrantCode(ctx, ask, connect.GrantOptions{Account: s.a.root, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	wrong := func(check string) string {
		if check == "000000" {
			return "000001"
		}
		return "000000"
	}

	// The answer comes first; nothing is kept or said until the check.
	p, h := s.program(s.progKey), s.homeSide()
	ask := direct(t, p, h)
	out, err := h.Answer(grantFor(ask))
	if err != nil {
		t.Fatal(err)
	}
	if back := deliver(t, out, p.Receive, "home"); len(back) != 0 {
		t.Fatal("the program said something before the check")
	}
	if g, err := p.Result(); g != nil || err != nil || !p.AwaitsCheck() {
		t.Fatalf("kept before the check: %v %v", g, err)
	}
	out, err = p.GiveCheck(wrong(ask.Check))
	wantCode(t, err, connect.CodeCodeCheck)
	if len(out) != 0 || p.State() != connect.ProgramHeard {
		t.Fatal("a wrong check moved the program")
	}
	out, err = p.GiveCheck(" " + ask.Check[:3] + " " + ask.Check[3:] + " ")
	if err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	deliver(t, out, h.Receive, "program")
	if g, err := p.Result(); err != nil || g == nil || h.State() != connect.HomeDone {
		t.Fatalf("%v %v %v", g, err, h.State())
	}

	// The check first: the grant is kept as soon as it comes.
	p, h = s.program(newKey(t)), s.homeSide()
	ask = direct(t, p, h)
	if out, err := p.GiveCheck(ask.Check); err != nil || len(out) != 0 {
		t.Fatalf("%v %v", out, err)
	}
	out, _ = h.Answer(grantFor(ask))
	if back := deliver(t, out, p.Receive, "home"); len(back) != 1 || p.State() != connect.ProgramDone {
		t.Fatalf("%v %v", back, p.State())
	}

	// Three wrong checks: nothing is kept, and the grant, when it comes, is
	// ignored.
	p, h = s.program(newKey(t)), s.homeSide()
	ask = direct(t, p, h)
	for i := 0; i < connect.MaxCheckTries; i++ {
		_, err := p.GiveCheck(wrong(ask.Check))
		wantCode(t, err, connect.CodeCodeCheck)
	}
	out, _ = h.Answer(grantFor(ask))
	if _, err := p.Receive("home", out[0].Message); err == nil {
		t.Fatal("a failed program took the answer")
	}
	if g, err := p.Result(); g != nil || !isCode(err, connect.CodeCodeCheck) || p.State() != connect.ProgramFailed {
		t.Fatalf("%v %v", g, err)
	}

	// A point that breaks its commitment is ignored; the committed one is
	// answered.
	p, h = s.program(newKey(t)), s.homeSide()
	hello := p.Joined("home")
	key, err := h.Receive("program", hello[0].Message)
	if err != nil {
		t.Fatal(err)
	}
	point, err := p.Receive("home", key[0].Message)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := channel.NewEphemeral()
	out, err = h.Receive("program", clearMsg(t, connect.MsgPoint, "key", other.Point()))
	wantCode(t, err, connect.CodeCodeCommitment)
	if len(out) != 0 || h.State() != connect.HomeKeyed {
		t.Fatal("the home answered a point that breaks the commitment")
	}
	if out, err = h.Receive("program", point[0].Message); err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}

	// Over the room: a person who keeps giving another check leaves the
	// program with nothing, and the home never hears it is done.
	overRelays(t, func(t *testing.T, kind string) {
		aPersonWhoGivesAnotherCheckLeavesTheProgramWithNothing(t, kind, wrong)
	})
}

func aPersonWhoGivesAnotherCheckLeavesTheProgramWithNothing(t *testing.T, kind string, wrong func(string) string) {
	s2 := newSceneOver(t, kind)
	shown := make(chan string, 1)
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	homeRoom, progRoom := join(t, s2.relay, s2.code.Room()), join(t, s2.relay, s2.code.Room())
	homeErr := make(chan error, 1)
	h2 := s2.homeSide()
	go func() { homeErr <- connect.RunHome(c, homeRoom, h2, s2.allow(shown), nil) }()
	g, err := connect.RunProgram(c, progRoom, s2.program(s2.progKey), func(ctx context.Context, tries int) (string, error) {
		check := <-shown
		shown <- check
		return wrong(check), nil
	}, s2.opts("program"))
	if g != nil || !isCode(err, connect.CodeCodeCheck) {
		t.Fatalf("%v %v", g, err)
	}
	cancel()
	<-homeErr
	if h2.State() == connect.HomeDone {
		t.Fatal("the home heard done")
	}
}

// connect-code.test.ts: "each exchange has keys of its own on both sides,
// so seeing one tells nothing about another" (06 §3).
func TestConnectCode_EachExchangeHasKeysOfItsOwnOnBothSides(t *testing.T) {
	overRelays(t, eachExchangeHasKeysOfItsOwnOnBothSides)
}

func eachExchangeHasKeysOfItsOwnOnBothSides(t *testing.T, kind string) {
	s := newSceneOver(t, kind)
	if r := s.connectOnce(); r.progErr != nil || r.homeErr != nil {
		t.Fatalf("%+v", r)
	}
	first := seen(t, s.relay.Recording())
	// The same code, the same program's key, again.
	s.relay = newRelay(t, kind)
	if r := s.connectOnce(); r.progErr != nil || r.homeErr != nil {
		t.Fatalf("%+v", r)
	}
	second := seen(t, s.relay.Recording())
	if bytes.Equal(first.o, second.o) || bytes.Equal(first.j, second.j) {
		t.Fatal("a side used a point again")
	}
	// Nothing of the first opens in the second, at its place.
	p, h := s.program(s.progKey), s.homeSide()
	hello := p.Joined("home")
	key, _ := h.Receive("program", hello[0].Message)
	point, _ := p.Receive("home", key[0].Message)
	_, err := p.Receive("home", first.fromHome[0])
	wantCode(t, err, connect.CodeCodeSeal)
	h.Receive("program", point[0].Message)
	// And two programs started on one code commit to different points.
	a, b := s.program(s.progKey).Joined("x"), s.program(s.progKey).Joined("x")
	if bytes.Equal(a[0].Message, b[0].Message) {
		t.Fatal("two programs sent the same commitment")
	}
}
