package peers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// wsNode is a node listening for peers on a loopback WebSocket.
type wsNode struct {
	*tnode
	addr string
	mu   sync.Mutex
	srv  *transport.Server
	ln   *transport.Listener
}

func (w *wsNode) url() string { return "ws://" + w.addr + transport.PathPeer }

// listen starts (or starts again) the node's listener on its address.
func (w *wsNode) listen(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	srv, err := w.peers.Handler(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(transport.PathPeer, srv)
	var ln *transport.Listener
	for range 100 {
		if ln, err = transport.Listen(w.addr, mux, nil); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.srv, w.ln, w.addr = srv, ln, ln.Addr().String()
}

// stop closes the listener and every connection it accepted.
func (w *wsNode) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ln != nil {
		w.ln.Close()
		w.srv.Close()
		w.ln, w.srv = nil, nil
	}
}

// Three nodes over loopback WebSocket, each dialling the next with
// peers.Run; one node's listener goes away and comes back while all
// write.
func TestThreeNodesConvergeOverWebSocket(t *testing.T) {
	addrs := make([]string, 3)
	base := []*tnode{newNode(t, nil), newNode(t, nil), newNode(t, nil)}
	g := shared(t, base...)
	ws := make([]*wsNode, 3)
	for i := range ws {
		ws[i] = &wsNode{tnode: base[i], addr: "127.0.0.1:0"}
		ws[i].listen(t)
		t.Cleanup(ws[i].stop)
		addrs[i] = ws[i].url()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i, w := range ws {
		p, err := peers.New(peers.NodeHost(w.Node), &peers.Options{
			Transport: w.topt, Peers: []string{addrs[(i+1)%3]},
			Redial: &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 200 * time.Millisecond},
			Reopen: 50 * time.Millisecond, Rescan: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		w.peers = p // its accepted connections and its dials share one Peers
		w.stop()
		w.listen(t)
		wg.Add(1)
		go func() { defer wg.Done(); p.Run(ctx) }()
	}
	var writers sync.WaitGroup
	for k, w := range ws {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 40 {
				w.put(g.ID, "app.notes", k*1000+i)
				time.Sleep(3 * time.Millisecond)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	ws[1].stop()
	time.Sleep(100 * time.Millisecond)
	ws[1].listen(t)
	writers.Wait()
	eventually(t, 30*time.Second, "three nodes converge over WebSocket", func() bool { return converged(base, g.ID) })
	// Convergence can come round the ring (1 → 2 → 0) before node 0's own
	// dial to node 1 is back: wait for that redial too.
	eventually(t, 10*time.Second, "node 0's status shows its dialled peer connected again", func() bool {
		for _, s := range ws[0].peers.Status() {
			if s.Via == "dial "+addrs[1] && s.State == "connected" {
				return true
			}
		}
		return false
	})
}

// Three nodes that reach one relay meet there and sync over WebRTC data
// channels; the relay restarts on the way, and direct channels go on.
func TestThreeNodesConvergeOverWebRTC(t *testing.T) {
	relay := transporttest.StartRelay(t, nil)
	ns := []*tnode{newNode(t, nil), newNode(t, nil), newNode(t, nil)}
	g := shared(t, ns...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for _, n := range ns {
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
	for k, n := range ns {
		for i := range 20 {
			n.put(g.ID, "app.notes", k*1000+i)
		}
	}
	eventually(t, 60*time.Second, "three nodes converge over WebRTC", func() bool { return converged(ns, g.ID) })
	if err := relay.Restart(); err != nil {
		t.Fatal(err)
	}
	for k, n := range ns {
		for i := range 10 {
			n.put(g.ID, "app.notes", k*1000+100+i)
		}
	}
	eventually(t, 60*time.Second, "they converge again after the relay restarted", func() bool { return converged(ns, g.ID) })
	webrtc := 0
	for _, s := range ns[0].peers.Status() {
		if len(s.Via) > 6 && s.Via[:6] == "webrtc" {
			webrtc++
		}
	}
	if webrtc != 2 {
		t.Errorf("node 0 has %d WebRTC connections, want 2: %+v", webrtc, ns[0].peers.Status())
	}
}
