package negentropy_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
	"github.com/minca-go/minca/negentropy/negbench"
)

// refCase is one reconciliation whose messages were recorded from the
// reference C++ and JavaScript implementations driven by their own test
// harness, in testdata/reference-transcripts.txt.
type refCase struct {
	name       string
	spec       gen.Spec
	limA, limB uint64
	jsOK       bool // timestamps below 2^31, which the JavaScript reference needs
}

var refCases = []refCase{
	{"empty", gen.Spec{N: 0}, 0, 0, true},
	{"one-each", gen.Spec{N: 2, OnlyA: 0.5, OnlyB: 0.5, Seed: 1}, 0, 0, true},
	{"disjoint-100", gen.Spec{N: 100, OnlyA: 0.5, OnlyB: 0.5, Timestamps: gen.Spread, Seed: 2}, 0, 0, true},
	{"spread-3000-5pct", gen.Spec{N: 3000, OnlyA: 0.05, OnlyB: 0.05, Timestamps: gen.Spread, Seed: 3}, 0, 0, true},
	{"equal-ts-5000", gen.Spec{N: 5000, OnlyA: 0.03, OnlyB: 0.03, Timestamps: gen.Equal, Seed: 4}, 0, 0, true},
	{"clustered-20000-limit-client", gen.Spec{N: 20000, OnlyA: 0.01, OnlyB: 0.02, Timestamps: gen.Clustered, Seed: 5}, 4096, 60000, true},
	{"spread-20000-limit-server", gen.Spec{N: 20000, OnlyA: 0.1, OnlyB: 0.1, Timestamps: gen.Spread, Seed: 6}, 60000, 4096, true},
	{"subset-30000-limit-both", gen.Spec{N: 30000, OnlyB: 0.2, Timestamps: gen.Spread, Seed: 7}, 5000, 5000, true},
	{"wide-ts-4000", gen.Spec{N: 4000, OnlyA: 0.05, OnlyB: 0.05, Timestamps: gen.Wide, Seed: 8}, 0, 0, false},
	{"wide-ts-20000-limit", gen.Spec{N: 20000, OnlyA: 0.05, OnlyB: 0.05, Timestamps: gen.Wide, Seed: 9}, 4096, 4096, false},
}

const transcriptFile = "testdata/reference-transcripts.txt"

// digest names a message by its length and SHA-256.
func digest(m []byte) string {
	h := sha256.Sum256(m)
	return fmt.Sprintf("%d:%x", len(m), h[:12])
}

func readTranscripts(t *testing.T) map[string][]string {
	f, err := os.Open(transcriptFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, msgs, ok := strings.Cut(sc.Text(), " ")
		if ok && !strings.HasPrefix(name, "#") {
			out[name] = strings.Fields(msgs)
		}
	}
	return out
}

// TestReferenceTranscripts checks our messages are byte-identical to the
// reference implementations' on the recorded cases, over both storages.
func TestReferenceTranscripts(t *testing.T) {
	want := readTranscripts(t)
	for _, c := range refCases {
		t.Run(c.name, func(t *testing.T) {
			a, b := gen.Pair(c.spec)
			va, _ := gen.Vector(a)
			vb, _ := gen.Vector(b)
			ta, _ := gen.Tree(a)
			tb, _ := gen.Tree(b)
			for name, p := range map[string][2]negentropy.Storage{"vector": {va, vb}, "tree": {ta, tb}} {
				if (testing.Short() || race.Enabled) && name == "vector" && c.spec.N > 5000 {
					continue // the tree run checks the same bytes
				}
				tr, err := sync(p[0], p[1], c.limA, c.limB)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range tr.msgs {
					got = append(got, digest(m))
				}
				if !slices.Equal(got, want[c.name]) {
					t.Fatalf("%s: messages %v\nreference  %v", name, got, want[c.name])
				}
			}
		})
	}
}

// TestRecordReference drives reference harness programs over refCases and
// checks they agree with each other and with the recorded file, or rewrites
// the file when NEGENTROPY_REF_WRITE=1. NEGENTROPY_REF_CPP is the path of
// the C++ test/cpp/harness, NEGENTROPY_REF_JS that of test/js/harness.js.
func TestRecordReference(t *testing.T) {
	cpp, js := os.Getenv("NEGENTROPY_REF_CPP"), os.Getenv("NEGENTROPY_REF_JS")
	if cpp == "" {
		t.Skip("NEGENTROPY_REF_CPP not set: no reference harness to record from")
	}
	var lines []string
	recorded := readTranscripts(t)
	for _, c := range refCases {
		a, b := gen.Pair(c.spec)
		peers := [][2]negbench.Peer{{
			{Name: "cpp", Argv: []string{cpp}, Env: limitEnv(c.limA)},
			{Name: "cpp", Argv: []string{cpp}, Env: limitEnv(c.limB)},
		}}
		if js != "" && c.jsOK {
			peers = append(peers, [2]negbench.Peer{
				{Name: "js", Argv: []string{"node", js}, Env: limitEnv(c.limA)},
				{Name: "js", Argv: []string{"node", js}, Env: limitEnv(c.limB)},
			})
		}
		var first []string
		for _, p := range peers {
			var got []string
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			_, err := negbench.DriveRecord(ctx, p[0], p[1], a, b, func(h string) {
				m, _ := hex.DecodeString(h)
				got = append(got, digest(m))
			})
			cancel()
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, p[0].Name, err)
			}
			if first == nil {
				first = got
			} else if !slices.Equal(first, got) {
				t.Fatalf("%s: %s and cpp disagree", c.name, p[0].Name)
			}
		}
		if os.Getenv("NEGENTROPY_REF_WRITE") == "" && !slices.Equal(first, recorded[c.name]) {
			t.Errorf("%s: reference now gives %v, file has %v", c.name, first, recorded[c.name])
		}
		lines = append(lines, c.name+" "+strings.Join(first, " "))
	}
	if os.Getenv("NEGENTROPY_REF_WRITE") != "" {
		head := "# Messages (length:sha256 prefix) of the reference negentropy C++ and JavaScript\n# implementations on refCases, recorded by TestRecordReference.\n"
		if err := os.WriteFile(filepath.FromSlash(transcriptFile), []byte(head+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func limitEnv(l uint64) []string {
	if l == 0 {
		return nil
	}
	return []string{fmt.Sprintf("FRAMESIZELIMIT=%d", l)}
}
