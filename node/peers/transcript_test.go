package peers

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// event is one message the opener sent (out) or received.
type event struct {
	out bool
	m   *message
	raw []byte
}

// causeOf says which earlier message of the opener's an answer of the
// responder's answers (docs/sync.md §7.2): a NEG-MSG answers the session's
// NEG-OPEN or NEG-MSG, ADMITTED a push (VERSIONS flag 2), VERSIONS flag 0
// or 1 a WANT. A message that answers nothing (a push of the responder's,
// a NEG-ERR) has none.
func causeOf(answer, m *message) bool {
	if answer.sid != m.sid {
		return false
	}
	switch answer.typ {
	case msgNegMsg:
		return m.typ == msgNegOpen || m.typ == msgNegMsg
	case msgAdmitted:
		return m.typ == msgVersions && m.flag == 2
	case msgVersions:
		return answer.flag != 2 && m.typ == msgWant
	}
	return false
}

// transcript renders what the opener sent, in the order it sent it, with
// each answer of the responder's right after the message it answers, in
// the order answers came. The opener's sends are one sequence, and an
// answer follows its cause, but when two answers come back, and when an
// answer is traced against the opener's next send, is a race the protocol
// allows (ADMITTED and a WANT's VERSIONS may come in either order); so
// the transcript is the same for every run, and checks both the order of
// what the opener sends and what each answer answers.
func transcript(t *testing.T, events []event) string {
	t.Helper()
	type entry struct {
		e       event
		answers []event
		open    bool // still to be answered: a WANT until VERSIONS flag 1
	}
	var sent []*entry
	var loose []event
	for _, e := range events {
		if e.out {
			sent = append(sent, &entry{e: e, open: true})
		}
	}
	for _, e := range events {
		if e.out {
			continue
		}
		found := false
		for _, x := range sent {
			if x.open && causeOf(e.m, x.e.m) {
				x.answers = append(x.answers, e)
				if x.e.m.typ != msgWant || e.m.flag == 1 {
					x.open = false
				}
				found = true
				break
			}
		}
		if !found {
			if e.m.typ == msgNegMsg || e.m.typ == msgAdmitted || e.m.typ == msgVersions && e.m.flag != 2 {
				t.Fatalf("the responder sent %s answering nothing the opener sent", describe(e.raw))
			}
			loose = append(loose, e)
		}
	}
	var b strings.Builder
	for _, x := range sent {
		b.WriteString("O→R " + describe(x.e.raw) + "\n")
		for _, a := range x.answers {
			b.WriteString("R→O " + describe(a.raw) + "\n")
		}
	}
	for _, e := range loose {
		b.WriteString("R→O " + describe(e.raw) + "\n")
	}
	return b.String()
}

// normalized is a transcript with what differs between runs — keys,
// ids, hashes, negentropy fingerprints, versions' text — replaced by
// placeholders: message types, session ids, flags, counts, sizes and
// codes stay.
func normalized(text string) string {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`\{"author":[^\]]*?…`), "VERSION…"},
		{regexp.MustCompile(`did:key:z[1-9A-HJ-NP-Za-km-z]+`), "DID"},
		{regexp.MustCompile(`"b[a-z2-7]{52}"`), `"ID"`},
		{regexp.MustCompile(`[0-9a-f]{16,}…?`), "HEX"},
	} {
		text = r.re.ReplaceAllString(text, r.with)
	}
	return text
}

// docTranscript is the transcript shown in docs/sync.md §7.6: the lines of
// the first fenced block after its heading.
func docTranscript(doc string) (block string, start, end int, ok bool) {
	h := strings.Index(doc, "### 7.6 A transcript")
	if h < 0 {
		return "", 0, 0, false
	}
	open := strings.Index(doc[h:], "```\n")
	if open < 0 {
		return "", 0, 0, false
	}
	start = h + open + len("```\n")
	n := strings.Index(doc[start:], "```\n")
	if n < 0 {
		return "", 0, 0, false
	}
	return doc[start : start+n], start, start + n, true
}

// TestTranscript runs one reconciliation between two nodes that each hold
// a version the other lacks, and compares what the opener sent and
// received, in order, with testdata/transcript.txt; docs/sync.md §7.6
// shows that file as it is. -update writes both from the run.
func TestTranscript(t *testing.T) {
	ctx := context.Background()
	open := func() (*node.Node, *Peers) {
		acc, err := identity.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "memory:", Account: acc})
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
	g, err := a.CreateSpace(ctx, "transcript", &node.CreateOptions{Founders: []string{b.Account()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, g.ID, "app.notes", map[string]any{"text": "from a"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, g.ID, "app.notes", map[string]any{"text": "from b"}, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []event
	done := make(chan struct{}) // the opener's last message, sync/done, is sent
	pa.trace = func(out bool, raw []byte) {
		m, err := decode(raw)
		if err != nil {
			t.Errorf("the opener traced a message it cannot decode: %v", err)
			return
		}
		mu.Lock()
		events = append(events, event{out: out, m: m, raw: slices.Clone(raw)})
		mu.Unlock()
		if out && m.typ == msgNegErr && m.code == CodeDone {
			close(done)
		}
	}
	ca, cb, _ := transporttest.Pair(t, pa.topt, pb.topt, nil)
	go pb.Serve(ctx, cb, false, "accept")
	sum, err := pa.Sync(ctx, ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sent != 1 || sum.Received != 1 {
		t.Fatalf("sent %d, received %d", sum.Sent, sum.Received)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the opener never sent sync/done")
	}
	mu.Lock()
	got := transcript(t, events)
	mu.Unlock()

	golden := filepath.Join("testdata", "transcript.txt")
	docPath := filepath.Join("..", "..", "docs", "sync.md")
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	block, start, end, ok := docTranscript(string(doc))
	if !ok {
		t.Fatal("docs/sync.md has no transcript block under §7.6")
	}
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(docPath, []byte(string(doc[:start])+got+string(doc[end:])), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if block != string(want) {
		t.Errorf("docs/sync.md §7.6 shows\n%s\nbut %s holds\n%s", block, golden, want)
	}
	if normalized(got) != normalized(string(want)) {
		t.Errorf("a run sends, in order:\n%s\n%s holds:\n%s\n(as compared:\n%s\nand\n%s)", got, golden, want, normalized(got), normalized(string(want)))
	}
}
