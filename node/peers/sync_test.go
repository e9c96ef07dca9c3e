package peers_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
)

func TestSyncOnceBothWays(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	for i := range 300 {
		a.put(g.ID, "app.notes", i)
	}
	for i := range 50 {
		b.put(g.ID, "app.notes", i)
	}
	ca, cb, _ := pair(t, a, b, nil)
	go b.peers.Serve(context.Background(), cb, false, "accept")
	sum, err := a.peers.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", sum)
	if len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone {
		t.Fatalf("spaces: %+v", sum.Spaces)
	}
	if sum.Received != 50+1 && sum.Received != 50 {
		// b's own access changes are none: the genesis founded both.
		t.Errorf("received %d, want 50", sum.Received)
	}
	if sum.Sent < 300 || sum.Refused != 0 {
		t.Errorf("sent %d refused %d", sum.Sent, sum.Refused)
	}
	ea, eb := a.export(g.ID), b.export(g.ID)
	if !slices.Equal(ea, eb) {
		t.Fatalf("exports differ: %d vs %d", len(ea), len(eb))
	}
	// Again: nothing to send.
	sum, err = a.peers.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 0 || sum.Received != 0 {
		t.Errorf("a second reconciliation carried %d / %d versions", sum.Sent, sum.Received)
	}
}

// serveLive connects a to b, a dialling, and serves the connection on
// both until the test ends.
func serveLive(t *testing.T, a, b *tnode) {
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
}

func TestLivePush(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	a.put(g.ID, "app.notes", 0)
	serveLive(t, a, b)
	eventually(t, 10*time.Second, "the first version reaches b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	for i := 1; i < 20; i++ {
		a.put(g.ID, "app.notes", i)
		b.put(g.ID, "app.notes", 100+i)
	}
	eventually(t, 10*time.Second, "live versions reach both", func() bool { return slices.Equal(a.export(g.ID), b.export(g.ID)) })
	// The node's other spaces (its account's) are opened too, and b
	// refuses them: only g's session is asked to be live.
	st := a.peers.Status()
	if len(st) != 1 {
		t.Fatalf("status: %+v", st)
	}
	i := slices.IndexFunc(st[0].Sessions, func(s peers.SessionStatus) bool { return s.Space == g.ID })
	if i < 0 || st[0].Sessions[i].Phase != peers.PhaseLive {
		t.Fatalf("status: %+v", st)
	}
}

// A live session whose node closes its store ends as closed, not as
// behind (which tells the peer to open it again at once).
func TestLiveSessionOfAClosingStoreEndsClosed(t *testing.T) {
	ends := &sessionEnds{}
	a := newNode(t, nil)
	b := newNode(t, &peers.Options{Logger: slog.New(ends)})
	g := shared(t, a, b)
	a.put(g.ID, "app.notes", 0)
	serveLive(t, a, b)
	eventually(t, 10*time.Second, "a's session of g is live", func() bool {
		for _, st := range a.peers.Status() {
			for _, s := range st.Sessions {
				if s.Space == g.ID && s.Phase == peers.PhaseLive {
					return true
				}
			}
		}
		return false
	})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	var code string
	eventually(t, 10*time.Second, "b's session of g ends", func() bool {
		code = ends.of(g.ID)
		return code != ""
	})
	if code != peers.CodeClosed {
		t.Fatalf("b's live session ended with %q as its store closed, want %q", code, peers.CodeClosed)
	}
}

// sessionEnds is a slog handler keeping the code of the first session
// of each space that ended on this side.
type sessionEnds struct {
	mu    sync.Mutex
	codes map[string]string
}

func (h *sessionEnds) Enabled(context.Context, slog.Level) bool { return true }
func (h *sessionEnds) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *sessionEnds) WithGroup(string) slog.Handler            { return h }

func (h *sessionEnds) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "session ended" {
		return nil
	}
	var space, code string
	remote := false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "space":
			space = a.Value.String()
		case "code":
			code = a.Value.String()
		case "remote":
			remote = a.Value.Bool()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.codes == nil {
		h.codes = map[string]string{}
	}
	if _, seen := h.codes[space]; !seen && !remote {
		h.codes[space] = code
	}
	return nil
}

func (h *sessionEnds) of(space string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.codes[space]
}
