package peers_test

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/node/peers/hostilepeer"
	"github.com/minca-go/minca/transport"
)

// A closed node is let go: once a node serving peers, an attacker that
// opened sessions and never read their answers, and an honest peer that
// synced with it are all closed, the goroutines they started end and
// nothing keeps either node's store or peers reachable. (A feed's linger
// timer once kept both for 30 s past Close, ~13 MiB a node here.)
func TestClosedNodeIsFreed(t *testing.T) {
	// Well under the feeds' 30 s linger, well over the transport's 2 s.
	const within = 10 * time.Second
	freed := make(chan string, 8)
	want := map[string]bool{}
	watch := func(what string) string { want[what] = true; return what }
	before := ourGoroutines()
	t.Run("run", func(t *testing.T) {
		b := newNode(t, &peers.Options{Limits: &peers.Limits{SlowAfter: time.Second}})
		g := shared(t, b)
		fill(t, b, g.ID, 300)
		url := serving(t, b)
		h := attacker(t, url)
		for sid := uint64(1); sid <= 4; sid++ {
			if err := h.Send(context.Background(), hostilepeer.NegOpen(sid, g.ID, false, hostilepeer.SendEverything())); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, patient, "b runs the attacker's sessions", func() bool {
			_, ss := sessionsOf(b, h.Key)
			return len(ss) > 0
		})
		a := newNode(t, nil)
		if err := a.JoinGenesis(context.Background(), g); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), patient)
		defer cancel()
		c, err := transport.Dial(ctx, url, a.topt)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sum, err := a.peers.Sync(ctx, c, []string{g.ID})
		if err != nil || len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone {
			t.Fatalf("the honest sync: %+v, %v", sum, err)
		}
		onFree(b.Store(), watch("b's store"), freed)
		onFree(a.Store(), watch("a's store"), freed)
		onFree(b.peers, watch("b's peers"), freed)
		onFree(a.peers, watch("a's peers"), freed)
		onFree(h, watch("the attacker's connection"), freed)
	})
	// The subtest's cleanups closed the listener, the nodes and the
	// attacker's connection.
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(want) > 0 {
		runtime.GC()
		select {
		case w := <-freed:
			delete(want, w)
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("still reachable %v after the nodes closed: %v", within, keys(want))
		}
	}
	for {
		left := newGoroutines(before)
		if len(left) == 0 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%d goroutines still run %v after the nodes closed:\n%s", len(left), within, strings.Join(left, "\n\n"))
		}
	}
}

// onFree sends what on freed once p is collected.
func onFree[T any](p *T, what string, freed chan<- string) {
	runtime.AddCleanup(p, func(w string) { freed <- w }, what)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var goroutineID = regexp.MustCompile(`^goroutine (\d+) `)

// ourGoroutines is the stacks of the goroutines running the module's
// code, by goroutine id.
func ourGoroutines() map[string]string {
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 2)
	out := map[string]string{}
	for _, g := range strings.Split(buf.String(), "\n\n") {
		m := goroutineID.FindStringSubmatch(g)
		if m == nil || !strings.Contains(g, "github.com/minca-go/minca/") {
			continue
		}
		out[m[1]] = g
	}
	return out
}

// newGoroutines is the stacks of the module's goroutines not running in
// before.
func newGoroutines(before map[string]string) []string {
	var out []string
	for id, g := range ourGoroutines() {
		if _, ok := before[id]; !ok {
			out = append(out, g)
		}
	}
	return out
}
