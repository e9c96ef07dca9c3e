package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/internal/longtest"
)

func startRelay(t *testing.T, ro *RelayOptions) (*Relay, string) {
	t.Helper()
	return startRelayWith(t, &Options{Self: Carrier(newKey(t))}, ro)
}

func startRelayWith(t *testing.T, o *Options, ro *RelayOptions) (*Relay, string) {
	t.Helper()
	r, err := NewRelay(o, ro)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(PathRelay, r)
	l, err := Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); r.Close() })
	return r, l.URL(PathRelay)
}

// rm is a test member of a relay, speaking relay messages by hand.
type rm struct {
	t   *testing.T
	c   *Conn
	did string
	in  chan *relayMsg
}

func joinRelay(t *testing.T, url string) *rm {
	t.Helper()
	key := newKey(t)
	// A relay sends no frame larger than its own limit, MinFrame, so a
	// member takes none larger, as the relay's own links do: a member's
	// reads then take no large pooled buffer, and what a test measures of
	// the heap is the relay's and the messages', not read buffers.
	c, err := Dial(context.Background(), url, &Options{Self: Carrier(key), MaxFrame: MinFrame})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := &rm{t: t, c: c, did: key.DID(), in: make(chan *relayMsg, 1024)}
	return m
}

// reading starts a goroutine that decodes every message into m.in.
func (m *rm) reading() *rm {
	go func() {
		defer close(m.in)
		for {
			b, err := m.c.Recv(context.Background())
			if err != nil {
				return
			}
			msg, err := decodeRelay(b)
			if err != nil {
				m.t.Errorf("the relay sent %s: %v", b, err)
				return
			}
			m.in <- msg
		}
	}()
	return m
}

func (m *rm) send(msg *relayMsg) {
	if err := m.c.Send(context.Background(), msg.encode()); err != nil {
		m.t.Fatalf("sending %s: %v", msg.Type, err)
	}
}

func (m *rm) join(room string, intro bool) {
	m.send(&relayMsg{Type: relayJoin, Room: room, Intro: &intro})
	m.expect(relayJoined, room)
}

// expect waits for the next message and requires its type and room.
func (m *rm) expect(typ, room string) *relayMsg {
	m.t.Helper()
	select {
	case msg, ok := <-m.in:
		if !ok {
			m.t.Fatalf("connection ended (%v) waiting for %s", m.c.Err(), typ)
		}
		if msg.Type != typ || msg.Room != room {
			m.t.Fatalf("got %+v, want %s in %s", msg, typ, room)
		}
		return msg
	case <-time.After(time.Minute):
		m.t.Fatalf("no %s in %s", typ, room)
	}
	return nil
}

// quiet requires that nothing arrives for a while.
func (m *rm) quiet() {
	m.t.Helper()
	select {
	case msg := <-m.in:
		m.t.Fatalf("unexpected %+v", msg)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRelayIntroductions(t *testing.T) {
	_, url := startRelay(t, nil)
	a, b, c := joinRelay(t, url).reading(), joinRelay(t, url).reading(), joinRelay(t, url).reading()
	a.join("space1", true)
	a.quiet()
	b.join("space1", true)
	if got := b.expect(relayIntro, "space1").Peer; got != a.did {
		t.Fatalf("b was introduced to %s, want a", got)
	}
	if got := a.expect(relayIntro, "space1").Peer; got != b.did {
		t.Fatalf("a was introduced to %s, want b", got)
	}
	// c asks for no introductions: nobody hears of it, it hears of nobody.
	c.join("space1", false)
	a.quiet()
	b.quiet()
	c.quiet()

	a.send(&relayMsg{Type: relaySignal, Room: "space1", To: b.did, Payload: json.RawMessage(`{"kind":"offer","sdp":"v=0"}`)})
	if s := b.expect(relaySignal, "space1"); s.From != a.did || string(s.Payload) != `{"kind":"offer","sdp":"v=0"}` {
		t.Fatalf("b got %+v", s)
	}
	// A forward with no recipient reaches every other member, c included.
	c.send(&relayMsg{Type: relayForward, Room: "space1", Payload: json.RawMessage(`"opaque"`)})
	for _, m := range []*rm{a, b} {
		if f := m.expect(relayForward, "space1"); f.From != c.did || string(f.Payload) != `"opaque"` {
			t.Fatalf("forward arrived as %+v", f)
		}
	}
	c.quiet()
	a.send(&relayMsg{Type: relayLeave, Room: "space1"})
	if l := b.expect(relayLeft, "space1"); l.Peer != a.did {
		t.Fatalf("left %+v", l)
	}
	c.quiet()
	// a is out of the room: a message for it is refused, and a's own too.
	a.send(&relayMsg{Type: relayForward, Room: "space1", Payload: json.RawMessage(`"x"`)})
	if e := a.expect(relayError, "space1"); e.Code != CodeRelayNoRoom {
		t.Fatalf("error %+v", e)
	}
	b.send(&relayMsg{Type: relaySignal, Room: "space1", To: a.did, Payload: json.RawMessage(`{}`)})
	if e := b.expect(relayError, "space1"); e.Code != CodeRelayNoPeer {
		t.Fatalf("error %+v", e)
	}
}

// 06 §3: a code room has introductions off; its two sides find each other
// by what they forward.
func TestRelayCodeRoomIntroductionsOff(t *testing.T) {
	_, url := startRelay(t, nil)
	program, home := joinRelay(t, url).reading(), joinRelay(t, url).reading()
	const room = "bihn55ne2az53tlealtmk3ervpyk6xa6364ii25ogc7xv54zkjszq"
	program.join(room, false)
	home.join(room, false)
	program.quiet()
	home.quiet()
	program.send(&relayMsg{Type: relayForward, Room: room, Payload: json.RawMessage(`{"type":"code:hello","from":null,"payload":{"commit":"x"}}`)})
	hello := home.expect(relayForward, room)
	home.send(&relayMsg{Type: relayForward, Room: room, To: hello.From, Payload: json.RawMessage(`{"type":"code:key"}`)})
	if k := program.expect(relayForward, room); k.From != home.did {
		t.Fatalf("key from %s", k.From)
	}
}

func TestRelayLimits(t *testing.T) {
	_, url := startRelay(t, &RelayOptions{MaxRooms: 2, MaxMembers: 2})
	a, b, c := joinRelay(t, url).reading(), joinRelay(t, url).reading(), joinRelay(t, url).reading()
	a.join("r1", true)
	a.join("r2", true)
	a.send(&relayMsg{Type: relayJoin, Room: "r3", Intro: new(bool)})
	if e := a.expect(relayError, "r3"); e.Code != CodeRelayRooms {
		t.Fatalf("%+v", e)
	}
	b.join("r1", false)
	c.send(&relayMsg{Type: relayJoin, Room: "r1", Intro: new(bool)})
	if e := c.expect(relayError, "r1"); e.Code != CodeRelayFull {
		t.Fatalf("%+v", e)
	}
	// A malformed message ends the sender's connection; the rest go on.
	c.c.Send(context.Background(), []byte(`{"type":"join","room":"no spaces allowed","intro":true}`))
	<-c.c.Done()
	wantCode(t, c.c.Err(), CodeRelayShape, true)
	a.send(&relayMsg{Type: relaySignal, Room: "r1", To: b.did, Payload: json.RawMessage(`{}`)})
	b.expect(relaySignal, "r1")
}

// The same key joining on a new connection replaces the old membership.
func TestRelayRejoinReplaces(t *testing.T) {
	_, url := startRelay(t, nil)
	key := newKey(t)
	dial := func() *rm {
		c, err := Dial(context.Background(), url, &Options{Self: Carrier(key)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return (&rm{t: t, c: c, did: key.DID(), in: make(chan *relayMsg, 64)}).reading()
	}
	other := joinRelay(t, url).reading()
	other.join("r", true)
	old := dial()
	old.join("r", true)
	other.expect(relayIntro, "r")
	old.expect(relayIntro, "r")
	fresh := dial()
	fresh.join("r", true)
	if e := old.expect(relayError, "r"); e.Code != CodeRelayReplace {
		t.Fatalf("%+v", e)
	}
	other.expect(relayLeft, "r")
	other.expect(relayIntro, "r")
	fresh.expect(relayIntro, "r")
}

// A flooding member is ended; honest members of its room go on.
func TestRelayFloodDropped(t *testing.T) {
	r, url := startRelay(t, nil)
	a, b := joinRelay(t, url).reading(), joinRelay(t, url).reading()
	flood := joinRelay(t, url)
	go func() {
		for { // drain until it ends
			if _, err := flood.c.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
	a.join("room", true)
	b.join("room", true)
	a.expect(relayIntro, "room")
	b.expect(relayIntro, "room")
	flood.send(&relayMsg{Type: relayJoin, Room: "room", Intro: new(bool)})
	payload := json.RawMessage(`"` + strings.Repeat("f", 60<<10) + `"`)
	for i := 0; i < 1000; i++ {
		if flood.c.Send(context.Background(), (&relayMsg{Type: relayForward, Room: "room", Payload: payload}).encode()) != nil {
			break
		}
	}
	<-flood.c.Done()
	wantCode(t, flood.c.Err(), CodeRelayRate, true)
	if r.Stats().Flooded != 1 {
		t.Fatalf("stats %+v", r.Stats())
	}
	// b got some of the flood before it was cut off, and nothing else;
	// past it, a and b still talk.
	a.send(&relayMsg{Type: relaySignal, Room: "room", To: b.did, Payload: json.RawMessage(`{"still":"here"}`)})
	for {
		msg := within(t, b.in, "a's signal after the flood")
		if msg == nil {
			t.Fatalf("b's connection ended: %v", b.c.Err())
		}
		if msg.Type == relayForward {
			continue
		}
		if msg.Type != relaySignal || msg.Room != "room" || string(msg.Payload) != `{"still":"here"}` {
			t.Fatalf("b got %+v, want the flood's forwards and then a's signal", msg)
		}
		break
	}
}

// A member that does not read is ended once QueueBytes wait for it and it
// has taken nothing for SlowAfter; the relay's memory stays bounded however
// much the room carries; a member that reads gets every forward. The
// relay's clock stands still until the test moves it, so only the member
// that does not read can be judged slow, and only once the test says
// SlowAfter has passed.
func TestRelaySlowMemberDroppedMemoryBounded(t *testing.T) {
	const queue = 1 << 20
	// 24 times the queue shows it bounded; the soak carries twice that.
	total := 24 << 20
	if longtest.Enabled() {
		total = 48 << 20
	}
	clk := newFakeClock()
	const slowAfter = 500 * time.Millisecond
	// The clock stands still, so the rate's bucket never fills again: a
	// burst that covers the whole test.
	r, url := startRelayWith(t, &Options{Self: Carrier(newKey(t)), clock: clk},
		&RelayOptions{Rate: 1 << 30, Burst: 1 << 30, QueueBytes: queue, MaxRoomQueue: 1 << 20, SlowAfter: slowAfter})
	sender, reader := joinRelay(t, url), joinRelay(t, url)
	slow := joinRelay(t, url)
	intro := false
	sender.send(&relayMsg{Type: relayJoin, Room: "room", Intro: &intro})
	sender.send(&relayMsg{Type: relayJoin, Room: "room2", Intro: &intro})
	reader.send(&relayMsg{Type: relayJoin, Room: "room", Intro: &intro})
	slow.send(&relayMsg{Type: relayJoin, Room: "room2", Intro: &intro})
	waitFor(t, "all three in their rooms", func() bool { st := r.Stats(); return st.Rooms == 2 && st.Members == 3 })
	// The reader counts forwards as they come; the sender counts those
	// refused, in each room, because a member's queue was full.
	var got, busy, busy2 atomic.Int64
	go func() {
		for {
			b, err := sender.c.Recv(context.Background())
			if err != nil {
				return
			}
			if m, err := decodeRelay(b); err == nil && m.Type == relayError && m.Code == CodeRelayBusy {
				if m.Room == "room" {
					busy.Add(1)
				} else {
					busy2.Add(1)
				}
			}
		}
	}()
	go func() {
		for {
			b, err := reader.c.Recv(context.Background())
			if err != nil {
				return
			}
			if strings.Contains(string(b[:min(len(b), 40)]), `"forward"`) {
				got.Add(1)
			}
		}
	}()
	// Sample the heap and the relay's queues while the room carries total.
	base := heldHeap()
	var peak atomic.Uint64
	var maxQueued atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			// What the relay holds, not garbage a collector starved of
			// CPU has yet to reclaim, nor what was allocated while it
			// marked, nor buffers idle in a sync.Pool.
			if l := heldHeap(); l > peak.Load() {
				peak.Store(l)
			}
			if q := int64(r.Stats().QueuedBytes); q > maxQueued.Load() {
				maxQueued.Store(q)
			}
		}
	}()
	payload := json.RawMessage(`"` + strings.Repeat("p", 60<<10) + `"`)
	n := total / len(payload)
	// The sender keeps at most window forwards ahead of the reader, fewer
	// than its queue holds, so none is refused for want of reading.
	const window = 8
	for i := 0; i < n; i++ {
		if i >= window {
			waitFor(t, "the reader to keep up", func() bool { return got.Load()+busy.Load() > int64(i-window) })
		}
		sender.send(&relayMsg{Type: relayForward, Room: "room", Payload: payload})
		sender.send(&relayMsg{Type: relayForward, Room: "room2", Payload: payload})
	}
	waitFor(t, "every forward to the reader", func() bool { return got.Load()+busy.Load() == int64(n) })
	waitFor(t, "every forward past the full queue refused", func() bool { return busy2.Load() > int64(n/2) })
	if st := r.Stats(); got.Load() != int64(n) || st.Slow != 0 || st.Members != 3 {
		t.Fatalf("of %d forwards the reading member got %d (%d refused as busy); relay %+v: nobody is slow while the clock stands still", n, got.Load(), busy.Load(), st)
	}
	// SlowAfter passes with the member still not reading: the next
	// message for it ends it.
	clk.Advance(slowAfter)
	sender.send(&relayMsg{Type: relayForward, Room: "room2", Payload: payload})
	waitFor(t, "the member that does not read to be ended and let go", func() bool { st := r.Stats(); return st.Slow == 1 && st.Members == 2 })
	close(stop)
	wg.Wait()
	// It learns when it reads at last: a member that did not read could
	// not be told why, so its link simply broke.
	var err error
	for err == nil {
		_, err = slow.c.Recv(context.Background())
	}
	if c := Code(err); c != CodeBroken && c != CodeRelaySlow {
		t.Fatalf("the slow member ended with %v", err)
	}
	// Three members, each with at most QueueBytes waiting (and one message
	// past it).
	if q := maxQueued.Load(); q > int64(3*(queue+len(payload)+64)) {
		t.Fatalf("the relay queued %d bytes at once; the bound is %d", q, 3*queue)
	}
	growth := int64(peak.Load()) - int64(base)
	t.Logf("%d forwards; %d to the member that does not read refused as busy; carried %d MiB; heap grew by at most %.1f MiB; at most %.1f MiB queued", n, busy2.Load(), total>>20, float64(growth)/(1<<20), float64(maxQueued.Load())/(1<<20))
	if growth > int64(total/3) {
		t.Fatalf("the heap grew by %d bytes while the room carried %d: not bounded", growth, total)
	}
}

// heldHeap is the heap held: the bytes a collection found live, after
// two, since a buffer idle in a sync.Pool (the transport's frame buffers)
// outlives one in the pool's victim cache and is a cache the second
// frees, not memory held.
func heldHeap() uint64 {
	runtime.GC()
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// waitFor polls cond until it holds, failing the test if it does not
// within a minute: a guard against a hang, never a measurement.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within a minute", what)
		}
		time.Sleep(time.Millisecond)
	}
}
