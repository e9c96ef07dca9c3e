package peers_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/internal/longtest"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/node/peers/hostilepeer"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// The attacks of docs/sync.md's Limits, each from a hostile peer on
// another loopback address (127.0.0.2) against a node's real listener,
// while an honest peer on 127.0.0.1 syncs: each bound holds, and the
// honest sync goes on.

// serving is a node listening for peers on loopback; it returns the URL.
func serving(t testing.TB, n *tnode) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := n.peers.Handler(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(transport.PathPeer, srv)
	ln, err := transport.Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); ln.Close(); srv.Close() })
	return ln.URL(transport.PathPeer)
}

// fill writes count notes into the space on n.
func fill(t testing.TB, n *tnode, spaceID string, count int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < count; i += 4 {
				if _, err := n.Put(context.Background(), spaceID, "app.notes", map[string]any{"text": fmt.Sprintf("note %d", i)}, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// attacker connects from 127.0.0.2.
func attacker(t testing.TB, url string) *hostilepeer.Peer {
	t.Helper()
	p, err := hostilepeer.Dial(context.Background(), url, &hostilepeer.Options{From: "127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// honestSync runs one reconciliation of the space from a fresh node on
// 127.0.0.1 and requires it to finish.
func honestSync(t testing.TB, url string, g *space.Genesis, within time.Duration) {
	t.Helper()
	spaceID := g.ID
	h := newNode(t, nil)
	if err := h.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := transport.Dial(ctx, url, h.topt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sum, err := h.peers.Sync(ctx, c, []string{spaceID})
	if err != nil || len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone {
		t.Fatalf("the honest sync: %+v, %v", sum, err)
	}
}

// memInUse is the heap and the goroutine stacks in use, after a GC.
func memInUse() uint64 {
	// Two collections: a buffer idle in a sync.Pool (the transport's
	// receive buffers) is a cache the second one frees, not memory held.
	runtime.GC()
	runtime.GC()
	// The bytes the collection found live, not whole spans kept in use
	// by one object each nor what was allocated while it marked.
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64() + m[1].Value.Uint64()
}

// sessionsOf is the node's sessions on connections from key.
func sessionsOf(n *tnode, key string) (conns int, sessions []peers.SessionStatus) {
	for _, st := range n.peers.Status() {
		if st.Peer == key {
			conns++
			sessions = append(sessions, st.Sessions...)
		}
	}
	return conns, sessions
}

// 1. A peer that asks and does not read is not answered further: each of
// its sessions holds at most one answer unwritten, nothing more of its
// NEG-MSGs is handled, the bytes held stay bounded, and after SlowAfter
// its connection ends (sync/slow). An honest sync meanwhile finishes.
func TestHostileAnswersNobodyReads(t *testing.T) {
	b := newNode(t, &peers.Options{Limits: &peers.Limits{SlowAfter: 2 * time.Second}})
	g := shared(t, b)
	fill(t, b, g.ID, 1500)
	url := serving(t, b)
	h := attacker(t, url)
	// The loop below ends when b no longer lists the attacker's
	// connection: it starts once b lists it, so a connection not listed
	// yet is not taken for one already ended.
	eventually(t, patient, "b lists the attacker's connection", func() bool {
		conns, _ := sessionsOf(b, h.Key)
		return conns > 0
	})
	// What b holds, not what it allocates: HeapInuse after a collection
	// also counts what b and the attacker allocated while it ran and
	// since (on a loaded machine 15 MiB more than the live heap, at the
	// burst of the first answers), and a sync.Pool's idle buffers.
	before := memInUse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent atomic.Int64
	go func() {
		for sid := uint64(1); sid <= 8; sid++ {
			if h.Send(ctx, hostilepeer.NegOpen(sid, g.ID, false, hostilepeer.SendEverything())) != nil {
				return
			}
		}
		for i := 0; ; i++ {
			if h.Send(ctx, hostilepeer.NegMsg(uint64(1+i%8), hostilepeer.SendEverything())) != nil {
				return
			}
			sent.Add(1)
		}
	}()
	var peak uint64
	var rounds int64
	deadline := time.Now().Add(15 * time.Second)
	for {
		conns, ss := sessionsOf(b, h.Key)
		if conns > 0 {
			rounds = 0
			for _, s := range ss {
				rounds += s.Rounds
			}
		}
		peak = max(peak, memInUse())
		if conns == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection of a peer that does not read was not ended; heap %d MiB → %d MiB", before>>20, peak>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// What was handled is what the sockets' buffers took of the answers
	// (a few MiB of 48 KB answers), not what the peer sent.
	t.Logf("heap before %d MiB, peak %d MiB; NEG-MSGs sent %d, handled %d", before>>20, peak>>20, sent.Load(), rounds)
	if rounds > 400 || rounds > sent.Load()/4 {
		t.Errorf("%d of the %d NEG-MSGs of a peer that read none of the answers were handled", rounds, sent.Load())
	}
	if peak > before+32<<20 {
		t.Errorf("heap grew from %d MiB to %d MiB", before>>20, peak>>20)
	}
	honestSync(t, url, g, 30*time.Second)
}

// 2. Live sessions share one feed per space and cost little each; a peer
// has a share of them by key and by address, past which NEG-OPEN gets
// sync/sessions.
func TestHostileLiveSessionsBounded(t *testing.T) {
	const share = 96
	b := newNode(t, &peers.Options{Limits: &peers.Limits{LiveSessions: share, OpenBurst: 4096}})
	g := shared(t, b)
	fill(t, b, g.ID, 1500) // so each session's first answer is a real one
	url := serving(t, b)
	before := memInUse()
	accepted, refused := 0, 0
	var hs []*hostilepeer.Peer
	for range 4 { // four connections, each a throwaway key, one address
		h := attacker(t, url)
		hs = append(hs, h)
		for sid := uint64(1); sid <= 64; sid++ {
			if err := h.Send(context.Background(), hostilepeer.NegOpen(sid, g.ID, true, hostilepeer.EmptySet())); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for n := 0; n < 64; {
			m, err := h.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch typ, _, body, _ := hostilepeer.Parse(m); typ {
			case hostilepeer.NegMsgType:
				accepted++
				n++
			case hostilepeer.NegErrType:
				if code, _ := hostilepeer.NegErr(body); code != peers.CodeTooMany {
					t.Fatalf("refused with %s, want %s", code, peers.CodeTooMany)
				}
				refused++
				n++
			}
		}
		cancel()
	}
	if accepted != share || refused != 4*64-share {
		t.Fatalf("%d live sessions taken, %d refused; want %d taken from one address", accepted, refused, share)
	}
	grown := int64(memInUse()) - int64(before)
	t.Logf("%d live sessions: heap and stacks grew %d KiB, %d KiB each", accepted, grown>>10, grown/int64(accepted)>>10)
	if grown > int64(accepted)*64<<10 {
		t.Errorf("each live session costs %d KiB", grown/int64(accepted)>>10)
	}
	// Every one of them still hears what the node writes.
	b.put(g.ID, "app.notes", 1)
	for _, h := range hs[:2] {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for {
			m, err := h.Recv(ctx)
			if err != nil {
				t.Fatalf("no push on a live session: %v", err)
			}
			if typ, _, _, _ := hostilepeer.Parse(m); typ == hostilepeer.VersionsType {
				break
			}
		}
		cancel()
	}
}

// 2, 3. The first answer to a NEG-OPEN is small whatever the opener
// holds, and the answers after it larger: a peer that opens sessions and
// drops them, or holds many open, gets little for each, while a
// reconciliation that goes on gets every id within a few rounds.
func TestHostileFirstAnswerSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3,000 versions first; run without -short")
	}
	b := newNode(t, nil)
	g := shared(t, b)
	fill(t, b, g.ID, 3000) // 96 KB of ids
	url := serving(t, b)
	h := attacker(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	empty := negentropy.NewVector(0)
	empty.Seal()
	cl, err := negentropy.NewClient(empty, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	first, err := cl.Initiate()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Send(ctx, hostilepeer.NegOpen(1, g.ID, false, first)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	ids := 0
	for {
		m, err := h.Recv(ctx)
		if err != nil {
			t.Fatalf("after answers of %v bytes: %v", sizes, err)
		}
		typ, _, body, _ := hostilepeer.Parse(m)
		if typ != hostilepeer.NegMsgType {
			t.Fatalf("message type 0x%02x, want NEG-MSG", typ)
		}
		sizes = append(sizes, len(body))
		r, err := cl.Reconcile(body)
		if err != nil {
			t.Fatal(err)
		}
		ids += len(r.Need)
		if r.Next == nil {
			break
		}
		if err := h.Send(ctx, hostilepeer.NegMsg(1, r.Next)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("answers of %v bytes, %d ids", sizes, ids)
	if sizes[0] > 64<<10 {
		t.Errorf("the first answer to an empty set holds %d bytes, want at most 64 KiB", sizes[0])
	}
	if len(sizes) > 2 {
		t.Errorf("answers of %v bytes: the rest of the ids did not come in the second", sizes)
	}
	if ids < 3000 {
		t.Errorf("the reconciliation found %d ids, want every one of the space's", ids)
	}
}

// 3. A NEG-OPEN for a session id already open ends the connection with
// sync/malformed; opens past the peer's rate get sync/rate, and an open
// on an unchanged space reuses the sync-order index.
func TestHostileSessionChurn(t *testing.T) {
	b := newNode(t, &peers.Options{Limits: &peers.Limits{OpenRate: 5, OpenBurst: 40}})
	g := shared(t, b)
	fill(t, b, g.ID, 300)
	url := serving(t, b)

	h := attacker(t, url)
	h.Send(context.Background(), hostilepeer.NegOpen(1, g.ID, false, hostilepeer.EmptySet()))
	h.Send(context.Background(), hostilepeer.NegOpen(1, g.ID, false, hostilepeer.EmptySet()))
	h.Drain()
	select {
	case <-h.Conn.Done():
	case <-time.After(time.Minute):
		t.Fatal("a NEG-OPEN on an open session was taken")
	}
	if code := transport.Code(h.Conn.Err()); code != peers.CodeMalformed {
		t.Fatalf("a NEG-OPEN on an open session: %s, want %s", code, peers.CodeMalformed)
	}

	// The first open answered builds the index, or finds it built by the
	// open above (when that one got so far before its connection ended):
	// the builds are counted from there.
	var builds int64
	h = attacker(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	answered, limited := 0, 0
	start := time.Now()
	for sid := uint64(1); sid <= 100; sid++ {
		if err := h.Send(ctx, hostilepeer.NegOpen(sid, g.ID, false, hostilepeer.EmptySet())); err != nil {
			t.Fatal(err)
		}
		for done := false; !done; {
			m, err := h.Recv(ctx)
			if err != nil {
				t.Fatalf("open %d (%d answered, %d limited): %v", sid, answered, limited, err)
			}
			typ, s, body, _ := hostilepeer.Parse(m)
			if s != sid {
				continue
			}
			switch typ {
			case hostilepeer.NegMsgType:
				if answered++; answered == 1 {
					builds = peers.IndexBuilds(b.peers)
				}
				// The opener ends it at once: churn.
				h.Send(ctx, hostilepeer.NegErrMsg(sid, "sync/closed", "churn"))
				done = true
			case hostilepeer.NegErrType:
				code, _ := hostilepeer.NegErr(body)
				if code != peers.CodeRate {
					t.Fatalf("open %d refused with %s", sid, code)
				}
				limited++
				done = true
			}
		}
	}
	// The bucket holds the burst (less the two opens above, from the same
	// address) and fills at the rate while the opens go on, however long
	// a loaded machine makes that.
	elapsed := time.Since(start)
	most := 40 + int(math.Ceil(5*elapsed.Seconds()))
	if answered < 40-2 || answered > most || answered+limited != 100 {
		t.Fatalf("%d opens answered, %d refused for the rate in %v; want from the burst less two to %d (the burst and the rate)", answered, limited, elapsed, most)
	}
	if n := peers.IndexBuilds(b.peers) - builds; n > 0 {
		t.Fatalf("%d opens of an unchanged space after the first built its sync-order index %d times, want none: the one built at the first open serves", answered-1, n)
	}
	// A write changes the order: the next open builds again, once.
	b.put(g.ID, "app.notes", 1)
	time.Sleep(200 * time.Millisecond)
	builds = peers.IndexBuilds(b.peers)
	honestSync(t, url, g, 30*time.Second)
	honestSync(t, url, g, 30*time.Second)
	if n := peers.IndexBuilds(b.peers) - builds; n != 1 {
		t.Fatalf("after a write, two syncs built %d indexes, want 1", n)
	}
}

// 7. A peer whose versions fail the crypto gate is ended with
// sync/forged after a few, and its address is refused for a while, even
// with a new key; another address is served.
func TestHostileForgerRefused(t *testing.T) {
	b := newNode(t, nil)
	g := shared(t, b)
	forger, err := hostilepeer.NewForger(g.ID)
	if err != nil {
		t.Fatal(err)
	}
	url := serving(t, b)
	h := attacker(t, url)
	h.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.Send(ctx, hostilepeer.NegOpen(1, g.ID, false, hostilepeer.EmptySet()))
	for i := 0; i < 20; i++ {
		batch := make([][]byte, 0, 256)
		for range 256 {
			batch = append(batch, forger.Next())
		}
		if h.Send(ctx, hostilepeer.Versions(1, hostilepeer.FlagPush, batch...)) != nil {
			break
		}
	}
	select {
	case <-h.Conn.Done():
	case <-ctx.Done():
		t.Fatalf("the forger was not ended: %+v %+v", b.peers.Totals(), b.peers.Status())
	}
	if code := transport.Code(h.Conn.Err()); code != peers.CodeForged {
		t.Fatalf("the forger ended with %s, want %s", code, peers.CodeForged)
	}
	tot := b.peers.Totals()
	t.Logf("versions refused before the forger was ended: %d", tot.Refused)
	if tot.Refused > 2*256 {
		t.Errorf("%d forged versions were checked; want the forger cut off within its credit", tot.Refused)
	}
	if _, err := hostilepeer.Dial(ctx, url, &hostilepeer.Options{From: "127.0.0.2"}); err == nil {
		t.Fatal("the forger's address connected again with a new key")
	}
	honestSync(t, url, g, 30*time.Second)
}

// 8. A member of a relay room that floods a node with forwards nobody
// reads does not cut it off: the node stays in its rooms, and a peer that
// comes later meets it there and syncs.
func TestHostileRelayForwardFlood(t *testing.T) {
	relay := transporttest.StartRelay(t, &transport.RelayOptions{QueueBytes: 8 << 10, SlowAfter: 300 * time.Millisecond})
	b, c := newNode(t, nil), newNode(t, nil)
	g := shared(t, b, c)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	run := func(n *tnode) {
		p, err := peers.New(peers.NodeHost(n.Node), &peers.Options{
			Transport: n.topt, Relays: []string{relay.URL()},
			WebRTC: &transport.WebRTCOptions{LoopbackOnly: true},
			Redial: &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 200 * time.Millisecond},
			Reopen: 50 * time.Millisecond, Rescan: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		n.peers = p
		wg.Add(1)
		go func() { defer wg.Done(); p.Run(ctx) }()
	}
	run(b)
	room := peers.RoomOf(g.ID)
	m, err := hostilepeer.JoinRelay(ctx, relay.URL(), room)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Conn.Close()
	// The flood starts once b is in the room with the flooder.
	eventually(t, time.Minute, "b joins the relay's room", func() bool { return relay.Relay().Stats().Members >= 2 })
	for i := range 400 {
		if err := m.Forward(ctx, room, "", fmt.Sprintf("flood %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // past the relay's SlowAfter
	run(c)
	c.put(g.ID, "app.notes", 1)
	eventually(t, 30*time.Second, "a node flooded with forwards still meets a newcomer at the relay", func() bool {
		return converged([]*tnode{b, c}, g.ID)
	})
}

// Every attack at once, each from an address of its own, for -long (two
// minutes, or -long=DURATION), against a node that syncs live with an
// honest peer meanwhile: memory stays bounded and the honest pair keeps
// converging.
func TestHostileSoak(t *testing.T) {
	soak := longtest.Duration(2 * time.Minute)
	if soak == 0 {
		t.Skip("a soak: run with -long, or -long=DURATION")
	}
	a := newNode(t, nil)
	b := newNode(t, &peers.Options{Limits: &peers.Limits{SlowAfter: 5 * time.Second}})
	g := shared(t, a, b)
	fill(t, b, g.ID, 2000)
	url := serving(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), soak)
	defer cancel()
	ca, err := transport.Dial(ctx, url, a.topt)
	if err != nil {
		t.Fatal(err)
	}
	go a.peers.Serve(ctx, ca, true, "dial")
	forger, err := hostilepeer.NewForger(g.ID)
	if err != nil {
		t.Fatal(err)
	}
	attack := func(from string, one func(h *hostilepeer.Peer) error) {
		for ctx.Err() == nil {
			h, err := hostilepeer.Dial(ctx, url, &hostilepeer.Options{From: from})
			if err == nil {
				one(h)
				h.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	var wg sync.WaitGroup
	for i, one := range []func(h *hostilepeer.Peer) error{
		func(h *hostilepeer.Peer) error { // asks, reads nothing
			for sid := uint64(1); sid <= 8; sid++ {
				h.Send(ctx, hostilepeer.NegOpen(sid, g.ID, false, hostilepeer.SendEverything()))
			}
			for i := 0; ; i++ {
				if err := h.Send(ctx, hostilepeer.NegMsg(uint64(1+i%8), hostilepeer.SendEverything())); err != nil {
					return err
				}
			}
		},
		func(h *hostilepeer.Peer) error { // live sessions
			h.Drain()
			for sid := uint64(1); sid <= 256; sid++ {
				h.Send(ctx, hostilepeer.NegOpen(sid, g.ID, true, hostilepeer.EmptySet()))
			}
			<-h.Conn.Done()
			return nil
		},
		func(h *hostilepeer.Peer) error { // churn
			for sid := uint64(1); ; sid = sid%1024 + 1 {
				if err := h.Send(ctx, hostilepeer.NegOpen(sid, g.ID, false, hostilepeer.EmptySet())); err != nil {
					return err
				}
				if _, err := h.Recv(ctx); err != nil {
					return err
				}
				h.Send(ctx, hostilepeer.NegErrMsg(sid, "sync/closed", "churn"))
			}
		},
		func(h *hostilepeer.Peer) error { // forgeries
			h.Drain()
			h.Send(ctx, hostilepeer.NegOpen(1, g.ID, false, hostilepeer.EmptySet()))
			for {
				if err := h.Send(ctx, hostilepeer.Versions(1, hostilepeer.FlagPush, forger.Next(), forger.Next())); err != nil {
					return err
				}
			}
		},
	} {
		wg.Add(1)
		go func() { defer wg.Done(); attack(fmt.Sprintf("127.0.0.%d", 10+i), one) }()
	}
	before := heap()
	var peak uint64
	for n := 0; ctx.Err() == nil; n++ {
		b.put(g.ID, "app.notes", 100000+n)
		a.put(g.ID, "app.notes", 200000+n)
		time.Sleep(500 * time.Millisecond)
		peak = max(peak, heap())
	}
	wg.Wait()
	t.Logf("heap before %d MiB, peak %d MiB", before>>20, peak>>20)
	if peak > before+256<<20 {
		t.Errorf("heap grew from %d MiB to %d MiB", before>>20, peak>>20)
	}
	eventually(t, 30*time.Second, "the honest pair converges after the soak", func() bool { return converged([]*tnode{a, b}, g.ID) })
}
