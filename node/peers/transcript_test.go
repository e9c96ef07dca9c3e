package peers

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

var update = flag.Bool("update", false, "write testdata/transcript.txt")

// describe renders one message for the transcript in docs/sync.md §7.6.
func describe(b []byte) string {
	m, err := decode(b)
	if err != nil {
		return "?? " + err.Error()
	}
	short := func(s string, n int) string {
		if len(s) > n {
			return s[:n] + "…"
		}
		return s
	}
	name := msgNames[m.typ]
	switch m.typ {
	case msgNegOpen:
		return fmt.Sprintf("%s %d %s neg=%s", name, m.sid, openJSON(m.open), short(hex.EncodeToString(m.body), 48))
	case msgNegMsg:
		return fmt.Sprintf("%s %d neg=%s (%d bytes)", name, m.sid, short(hex.EncodeToString(m.body), 48), len(m.body))
	case msgNegClose:
		return fmt.Sprintf("%s %d", name, m.sid)
	case msgNegErr:
		return fmt.Sprintf("%s %d {\"code\":%q,\"message\":%q}", name, m.sid, m.code, m.text)
	case msgWant:
		ids := make([]string, len(m.ids))
		for i, d := range m.ids {
			ids[i] = short(hex.EncodeToString(d[:]), 16)
		}
		return fmt.Sprintf("%s %d flag=%d [%s]", name, m.sid, m.flag, strings.Join(ids, " "))
	case msgVersions:
		vs := make([]string, len(m.versions))
		for i, v := range m.versions {
			vs[i] = short(string(v), 72)
		}
		return fmt.Sprintf("%s %d flag=%d [%s]", name, m.sid, m.flag, strings.Join(vs, ", "))
	case msgAdmitted:
		return fmt.Sprintf("%s %d stored=%d later=%d refused=%d held=%d", name, m.sid, m.counts.Stored, m.counts.Later, m.counts.Refused, m.counts.Held)
	}
	return name
}

func openJSON(p *openParams) string {
	s := fmt.Sprintf(`{"space":%q`, p.Space)
	if len(p.Collections) > 0 {
		s += fmt.Sprintf(`,"collections":["%s"]`, strings.Join(p.Collections, `","`))
	}
	return s + fmt.Sprintf(`,"live":%v}`, p.Live)
}

// TestTranscript runs one reconciliation between two nodes that each hold
// a version the other lacks, and writes what the opener sent and
// received; docs/sync.md §7.6 shows such a run, and must show the same
// messages.
func TestTranscript(t *testing.T) {
	open := func() (*node.Node, *Peers) {
		acc, _ := identity.GenerateKey()
		dir := t.TempDir()
		n, err := node.Open(context.Background(), &node.Options{Dir: dir, Store: "memory:", Account: acc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		p, err := New(NodeHost(n), &Options{Transport: &transport.Options{Self: NodeSelf(n)}})
		if err != nil {
			t.Fatal(err)
		}
		return n, p
	}
	a, pa := open()
	b, pb := open()
	g, err := a.CreateSpace(context.Background(), "transcript", &node.CreateOptions{Founders: []string{b.Account()}})
	if err != nil {
		t.Fatal(err)
	}
	b.JoinGenesis(context.Background(), g)
	a.Put(context.Background(), g.ID, "app.notes", map[string]any{"text": "from a"}, nil)
	b.Put(context.Background(), g.ID, "app.notes", map[string]any{"text": "from b"}, nil)
	var mu sync.Mutex
	var lines []string
	pa.trace = func(out bool, msg []byte) {
		mu.Lock()
		defer mu.Unlock()
		dir := "R→O"
		if out {
			dir = "O→R"
		}
		lines = append(lines, dir+" "+describe(msg))
	}
	ca, cb, _ := transporttest.Pair(t, pa.topt, pb.topt, nil)
	go pb.Serve(context.Background(), cb, false, "accept")
	sum, err := pa.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 1 || sum.Received != 1 {
		t.Fatalf("sent %d, received %d", sum.Sent, sum.Received)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	got := strings.Join(lines, "\n") + "\n"
	mu.Unlock()
	if *update {
		os.WriteFile(filepath.Join("testdata", "transcript.txt"), []byte(got), 0o644)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "sync.md"))
	if err != nil {
		t.Fatal(err)
	}
	shape := func(text string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && (f[0] == "O→R" || f[0] == "R→O") {
				out = append(out, f[0]+" "+f[1])
			}
		}
		slices.Sort(out)
		return out
	}
	if want, have := shape(got), shape(string(doc)); !slices.Equal(want, have) {
		t.Errorf("docs/sync.md's transcript shows %v; a run sends %v\n%s", have, want, got)
	}
}
