package connect_test

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/connecttest"
	"github.com/minca-go/minca/connect/internal/channel"
	"github.com/minca-go/minca/connect/relayroom"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/transport/transporttest"
)

const homePage = homeOrigin + "/connect"

// join puts a side in room on the relay the tests run over.
func join(t testing.TB, r *connecttest.Relay, room string) connecttest.Peer {
	t.Helper()
	m, err := r.Join(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Leave)
	return m
}

// Relays the exchange tests run over: rooms in memory, where peers see
// each other join, and a real relay (transport.Relay on a loopback port,
// joined through relayroom), where they do not and the program hails.
const (
	inMemory  = "memory"
	overRelay = "relay"
)

// overRelays runs f once over each relay.
func overRelays(t *testing.T, f func(t *testing.T, kind string)) {
	for _, kind := range []string{inMemory, overRelay} {
		t.Run(kind, func(t *testing.T) { f(t, kind) })
	}
}

// newRelay makes a relay of kind for one test: over a real relay, the
// Relay taps what each side sends on its way to the transport's relay.
func newRelay(t testing.TB, kind string) *connecttest.Relay {
	t.Helper()
	if kind == inMemory {
		return &connecttest.Relay{}
	}
	srv := transporttest.StartRelay(t, nil)
	return &connecttest.Relay{Over: func(ctx context.Context, room string) (connecttest.Underlying, error) {
		return relayroom.Join(ctx, srv.URL(), room, nil)
	}}
}

// toAll sends message to every other member of m's room: a hail over a
// real relay, where the others are not known until they speak; to peer in
// memory.
func toAll(t testing.TB, m connecttest.Peer, peer string, message []byte) {
	t.Helper()
	var err error
	if h, ok := m.(connect.Hailer); ok {
		err = h.Hail(ctx, message)
	} else {
		err = m.Send(ctx, peer, message)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// scene is one connecting by code: an account home, a program with its
// key, the code, and a relay.
type scene struct {
	t       testing.TB
	kind    string
	relay   *connecttest.Relay
	a       *account
	code    connect.Code
	progKey *identity.PrivateKey

	mu      sync.Mutex
	ignored map[string][]ignoredMsg // by the side that ignored: "home", "program"
}

type ignoredMsg struct {
	peer string
	err  error
}

// newScene is a scene over rooms in memory.
func newScene(t testing.TB) *scene { return newSceneOver(t, inMemory) }

// newSceneOver is a scene over a relay of kind.
func newSceneOver(t testing.TB, kind string) *scene {
	t.Helper()
	code, err := connect.NewCode()
	if err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, kind: kind, relay: newRelay(t, kind), a: newAccount(t), code: code, progKey: newKey(t), ignored: map[string][]ignoredMsg{}}
}

func (s *scene) program(key *identity.PrivateKey) *connect.Program {
	s.t.Helper()
	p, err := connect.NewProgram(connect.ProgramOptions{Code: s.code, Page: homePage, Key: key, Name: "agent",
		Now: func() time.Time { return now }})
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

func (s *scene) homeSide() *connect.HomeExchange {
	s.t.Helper()
	h, err := connect.NewHomeExchange(s.code, homeOrigin)
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

func (s *scene) opts(side string) *connect.RunOptions {
	return &connect.RunOptions{Wait: 10 * time.Second, Hail: 50 * time.Millisecond, Dropped: func(peer string, err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ignored[side] = append(s.ignored[side], ignoredMsg{peer, err})
	}}
}

func (s *scene) ignoredBy(side string) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []error
	for _, m := range s.ignored[side] {
		out = append(out, m.err)
	}
	return out
}

// ignoredFrom is what side ignored of peer's messages.
func (s *scene) ignoredFrom(side, peer string) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []error
	for _, m := range s.ignored[side] {
		if m.peer == peer {
			out = append(out, m.err)
		}
	}
	return out
}

// allow is a decider that shows the check on shown and grants.
func (s *scene) allow(shown chan<- string) connect.Decider {
	return func(ctx context.Context, ask connect.Ask) (connect.Decision, error) {
		shown <- ask.Check
		g, err := s.a.home.GrantCode(ctx, ask, connect.GrantOptions{Account: s.a.root, Name: "Leif", Now: now,
			AccountKey: []byte("account key, 32 bytes long......")})
		if err != nil {
			return connect.Decision{Denied: err.Error()}, nil
		}
		return connect.Decision{Grant: g}, nil
	}
}

// person gives the program the check the home showed.
func person(shown <-chan string) connect.CheckAsker {
	return func(ctx context.Context, tries int) (string, error) {
		select {
		case c := <-shown:
			return c, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

type result struct {
	grant   *connect.Grant
	progErr error
	homeErr error
}

// run runs both sides to their end over the relay, the home joining
// first, each with its own decider and asker.
func (s *scene) run(p *connect.Program, h *connect.HomeExchange, decide connect.Decider, ask connect.CheckAsker) result {
	s.t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	homeRoom := join(s.t, s.relay, s.code.Room())
	progRoom := join(s.t, s.relay, s.code.Room())
	var r result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.homeErr = connect.RunHome(c, homeRoom, h, decide, s.opts("home"))
	}()
	go func() {
		defer wg.Done()
		r.grant, r.progErr = connect.RunProgram(c, progRoom, p, ask, s.opts("program"))
	}()
	wg.Wait()
	return r
}

// connectOnce runs a whole, honest exchange.
func (s *scene) connectOnce() result {
	shown := make(chan string, 1)
	return s.run(s.program(s.progKey), s.homeSide(), s.allow(shown), person(shown))
}

// msg writes a network message of the channel by hand.
func msg(t testing.TB, typ string, payload any) []byte {
	return marshal(t, canonical.NewObject("type", typ, "from", nil, "payload", payload))
}

func clearMsg(t testing.TB, typ, member string, b []byte) []byte {
	return msg(t, typ, canonical.NewObject(member, base64.RawURLEncoding.EncodeToString(b)))
}

func sealed(t testing.TB, s *channel.Session, typ string, body any) []byte {
	t.Helper()
	env, err := s.Seal(typ, marshal(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return msg(t, typ, base64.RawURLEncoding.EncodeToString(env))
}

// readMsg reads a message's type and payload.
func readMsg(t testing.TB, b []byte) (string, any) {
	t.Helper()
	o := parse(t, string(b)).(*canonical.Object)
	typ, _ := o.Get("type")
	p, _ := o.Get("payload")
	return typ.(string), p
}

// clearBytes reads a clear message's one member as bytes.
func clearBytes(t testing.TB, b []byte, member string) []byte {
	t.Helper()
	_, p := readMsg(t, b)
	v, _ := p.(*canonical.Object).Get(member)
	out, err := base64.RawURLEncoding.DecodeString(v.(string))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openMsg opens a sealed message in s.
func openMsg(t testing.TB, s *channel.Session, b []byte) (*canonical.Object, error) {
	t.Helper()
	typ, p := readMsg(t, b)
	env, err := base64.RawURLEncoding.DecodeString(p.(string))
	if err != nil {
		t.Fatal(err)
	}
	body, err := s.Open(typ, env)
	if err != nil {
		return nil, err
	}
	return parse(t, string(body)).(*canonical.Object), nil
}

// fakeHome is a home written by hand over the channel's primitives, to
// say what an honest home never would. It drives a Program directly.
type fakeHome struct {
	t    testing.TB
	p    *connect.Program
	code connect.Code
	eph  *channel.Ephemeral
	sess *channel.Session
	sent [][]byte // what the program sent, in order
}

const fakePeer = "home"

func newFakeHome(t testing.TB, p *connect.Program, code connect.Code) *fakeHome {
	t.Helper()
	eph, err := channel.NewEphemeral()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeHome{t: t, p: p, code: code, eph: eph}
}

// feed gives the program a message from the fake home, keeps what the
// program sends back, and returns why the program ignored it, if it did.
func (f *fakeHome) feed(b []byte) error {
	f.t.Helper()
	out, err := f.p.Receive(fakePeer, b)
	for _, s := range out {
		if s.Peer != fakePeer {
			f.t.Fatalf("the program sent to %s", s.Peer)
		}
		f.sent = append(f.sent, s.Message)
	}
	return err
}

// handshake runs the exchange up to the program's ask, the home saying it
// lives at origin; it returns the ask's body (nil when the program did not
// ask).
func (f *fakeHome) handshake(origin string) *canonical.Object {
	f.t.Helper()
	for _, s := range f.p.Joined(fakePeer) {
		f.sent = append(f.sent, s.Message)
	}
	if err := f.feed(clearMsg(f.t, connect.MsgKey, "key", f.eph.Point())); err != nil {
		f.t.Fatal(err)
	}
	j := clearBytes(f.t, f.sent[len(f.sent)-1], "key")
	sess, err := channel.Derive(channel.Code, f.code[:], true, f.eph, j)
	if err != nil {
		f.t.Fatal(err)
	}
	f.sess = sess
	n := len(f.sent)
	err = f.feed(sealed(f.t, sess, connect.MsgHome, canonical.NewObject("origin", origin)))
	if len(f.sent) == n {
		if err == nil {
			f.t.Fatal("the program ignored code:home without saying why")
		}
		return nil
	}
	ask, err := openMsg(f.t, sess, f.sent[n])
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.feed(sealed(f.t, sess, connect.MsgHeard, canonical.NewObject())); err != nil {
		f.t.Fatal(err)
	}
	return ask
}

// answer sends code:answer with body.
func (f *fakeHome) answer(body *canonical.Object) error {
	return f.feed(sealed(f.t, f.sess, connect.MsgAnswer, body))
}

// exchangeSeen is what a recording of the room shows of one exchange: the
// two points, and the sealed messages each side sent, in order.
type exchangeSeen struct {
	o, j         []byte
	fromHome     [][]byte
	fromProgram  [][]byte
	homePeer     string
	programPeer  string
	pointsSentTo []string
}

func seen(t testing.TB, rec []connecttest.Recorded) exchangeSeen {
	t.Helper()
	var e exchangeSeen
	for _, r := range rec {
		typ, _ := readMsg(t, r.Message)
		switch typ {
		case connect.MsgKey:
			if e.o == nil {
				e.o, e.homePeer, e.programPeer = clearBytes(t, r.Message, "key"), r.From, r.To
			}
		case connect.MsgPoint:
			e.j = clearBytes(t, r.Message, "key")
			e.pointsSentTo = append(e.pointsSentTo, r.To)
		case connect.MsgHome, connect.MsgHeard, connect.MsgAnswer:
			e.fromHome = append(e.fromHome, r.Message)
		case connect.MsgAsk, connect.MsgDone:
			e.fromProgram = append(e.fromProgram, r.Message)
		}
	}
	if e.o == nil || e.j == nil || len(e.fromHome) == 0 || len(e.fromProgram) == 0 {
		t.Fatalf("the recording does not hold a whole exchange")
	}
	return e
}

// opensAny tries, with the code and everything the room showed, to open
// the recorded sealed messages: as the home toward the program's point and
// as the program toward the home's, with a key of its own, and with the
// shared point guessed from what is public. It reports what opened.
func opensAny(t testing.TB, code connect.Code, e exchangeSeen) []string {
	t.Helper()
	var opened []string
	try := func(name string, mk func() (*channel.Session, error), msgs [][]byte) {
		s, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if _, err := openMsg(t, s, m); err == nil {
				opened = append(opened, name)
			}
		}
	}
	mine, _ := channel.NewEphemeral()
	try("as the home, with a key of its own", func() (*channel.Session, error) {
		return channel.Derive(channel.Code, code[:], true, mine, e.j)
	}, e.fromProgram)
	try("as the program, with a key of its own", func() (*channel.Session, error) {
		return channel.Derive(channel.Code, code[:], false, mine, e.o)
	}, e.fromHome)
	transcript := append(slices.Clone(e.o), e.j...)
	for name, z := range map[string][]byte{
		"no shared point":          nil,
		"a zero shared point":      make([]byte, 32),
		"the home's point's x":     e.o[1:33],
		"the program's point's x":  e.j[1:33],
		"the code as shared point": code[:],
	} {
		m, err := channel.DeriveMaterial(channel.Code, append(slices.Clone(z), code[:]...), transcript)
		if err != nil {
			t.Fatal(err)
		}
		try(name+", for the program's", func() (*channel.Session, error) { return channel.NewSession(channel.Code, m, true) }, e.fromProgram)
		try(name+", for the home's", func() (*channel.Session, error) { return channel.NewSession(channel.Code, m, false) }, e.fromHome)
	}
	return opened
}

func codes(errs []error) []string {
	var out []string
	for _, err := range errs {
		var r *connect.Refusal
		if errors.As(err, &r) {
			out = append(out, r.Code)
		} else {
			out = append(out, err.Error())
		}
	}
	return out
}

func readMsgQuiet(b []byte) (string, error) {
	v, err := canonical.Parse(b)
	if err != nil {
		return "", err
	}
	o, _ := v.(*canonical.Object)
	typ, _ := o.Get("type")
	s, _ := typ.(string)
	return s, nil
}

// direct runs an honest exchange between p and h by hand, up to the ask.
func direct(t testing.TB, p *connect.Program, h *connect.HomeExchange) connect.Ask {
	t.Helper()
	queue := []struct {
		toHome bool
		m      []byte
	}{}
	for _, s := range p.Joined("home") {
		queue = append(queue, struct {
			toHome bool
			m      []byte
		}{true, s.Message})
	}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		var out []connect.Send
		var err error
		if q.toHome {
			out, err = h.Receive("program", q.m)
		} else {
			out, err = p.Receive("home", q.m)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range out {
			queue = append(queue, struct {
				toHome bool
				m      []byte
			}{!q.toHome, s.Message})
		}
	}
	ask, ok := h.Asked()
	if !ok || p.State() != connect.ProgramHeard {
		t.Fatalf("the exchange stopped at %v, %v", h.State(), p.State())
	}
	return ask
}

// deliver hands messages from one side to the other, failing on an
// ignored one.
func deliver(t testing.TB, out []connect.Send, to func(string, []byte) ([]connect.Send, error), from string) []connect.Send {
	t.Helper()
	var back []connect.Send
	for _, s := range out {
		b, err := to(from, s.Message)
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, b...)
	}
	return back
}

// mustSession makes the fake home's session for p by hand: key, point.
func mustSession(t testing.TB, f *fakeHome, p *connect.Program) *channel.Session {
	t.Helper()
	for _, s := range p.Joined(fakePeer) {
		f.sent = append(f.sent, s.Message)
	}
	if err := f.feed(clearMsg(t, connect.MsgKey, "key", f.eph.Point())); err != nil {
		t.Fatal(err)
	}
	sess, err := channel.Derive(channel.Code, f.code[:], true, f.eph, clearBytes(t, f.sent[len(f.sent)-1], "key"))
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// heardFirst reads room's events up to its first message (or fails the
// test past a deadline) and returns the room with them given back first,
// in their order: a run over it starts with that message already come.
func heardFirst(t testing.TB, room connect.Room) connect.Room {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	r := &replayRoom{Room: room}
	for {
		ev, err := room.Next(c)
		if err != nil {
			t.Fatalf("no message came to the room: %v", err)
		}
		r.events = append(r.events, ev)
		if ev.Message != nil {
			return r
		}
	}
}

// replayRoom gives back events read from its room before the room's own.
type replayRoom struct {
	connect.Room
	events []connect.RoomEvent
}

func (r *replayRoom) Next(ctx context.Context) (connect.RoomEvent, error) {
	if len(r.events) > 0 {
		ev := r.events[0]
		r.events = r.events[1:]
		return ev, nil
	}
	return r.Room.Next(ctx)
}
