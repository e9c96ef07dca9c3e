package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// corpusFile writes a signed corpus as JSON lines and returns its path,
// the space and the versions.
func corpusFile(t *testing.T) (string, string, []*record.Version) {
	t.Helper()
	sp := enginetest.SpaceID("cli")
	var vs []*record.Version
	var buf bytes.Buffer
	err := enginetest.Corpus(sp, enginetest.CorpusOptions{Versions: 120, Seed: 4}, func(v *record.Version) error {
		vs = append(vs, v)
		b, err := v.MarshalJSON()
		buf.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	buf.WriteString("{\"not\":\"a version\"}\n")
	p := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, sp, vs
}

func TestStoreVerbs(t *testing.T) {
	t.Parallel()
	file, sp, vs := corpusFile(t)
	for _, scheme := range []string{"pebble:", "sqlite:", ""} {
		t.Run(scheme, func(t *testing.T) {
			url := scheme + filepath.Join(t.TempDir(), "store")
			// The corpus ends with a line that is no version: refused, exit 1.
			out, errOut, code := minca(t, "", "store", "import", "--judge", "roots", "--store", url, file)
			if code != 1 {
				t.Fatalf("import: %d %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(vs)+1 || !strings.Contains(errOut, "imported 121 versions") {
				t.Fatalf("import printed %d lines; stderr %s", len(lines), errOut)
			}
			var first struct{ ID, Outcome, Stored string }
			json.Unmarshal([]byte(lines[0]), &first)
			if first.ID != vs[0].ID || first.Outcome != "stands" {
				t.Fatalf("first line %s", lines[0])
			}
			if !strings.Contains(lines[len(lines)-1], `"outcome":"refused"`) || !strings.Contains(lines[len(lines)-1], fmt.Sprintf(`"line":%d`, len(vs)+1)) {
				t.Fatalf("a non-version was not refused: %s", lines[len(lines)-1])
			}
			// Each verb below is another run of minca on the same store.
			last := vs[len(vs)-1]
			out, _, code = minca(t, "", "store", "history", "--store", url, sp, last.Key)
			if code != 0 || !strings.HasPrefix(out, `{"standing":"stands","stored":"whole","version":{`) || !strings.Contains(out, last.ID) {
				t.Fatalf("history: %d %s", code, out)
			}
			out, _, code = minca(t, "", "store", "get", "--store", url, sp, last.Key)
			if code != 0 || !strings.Contains(out, `"id":"`+last.ID) {
				t.Fatalf("get: %d %s", code, out)
			}
			if _, _, code = minca(t, "", "store", "get", "--store", url, sp, "nokey"); code != 3 {
				t.Fatalf("get of a record not held: exit %d", code)
			}
			out, _, code = minca(t, "", "store", "export", "--store", url, "--space", sp)
			if code != 0 || strings.Count(out, "\n") != len(vs) {
				t.Fatalf("export: %d, %d lines", code, strings.Count(out, "\n"))
			}
			out, _, code = minca(t, "", "store", "stats", "--store", url)
			var st struct{ Versions, Whole, Stubs, Spaces int }
			if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Versions != len(vs) || st.Spaces != 1 || st.Whole+st.Stubs != len(vs) {
				t.Fatalf("stats: %d %s", code, out)
			}
			if out, errOut, code = minca(t, "", "store", "check", "--judge", "roots", "--store", url); code != 0 || out != "" {
				t.Fatalf("check: %d %s %s", code, out, errOut)
			}
		})
	}
}

func TestStoreCheckFindsProblems(t *testing.T) {
	t.Parallel()
	file, _, _ := corpusFile(t)
	dir := filepath.Join(t.TempDir(), "store")
	if _, e, code := minca(t, "", "store", "import", "--judge", "roots", "--store", "sqlite:"+dir, file); code != 1 {
		t.Fatal(e)
	}
	// Damage the store behind the engine's back: drop the sync order.
	kv, err := sqlite.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := kv.NewBatch()
	it, _ := kv.NewIter([]byte{'o'}, []byte{'p'})
	var ks [][]byte
	for it.Next() {
		ks = append(ks, bytes.Clone(it.Key()))
	}
	it.Close()
	for _, k := range ks {
		b.Delete(k)
	}
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	kv.Close()
	out, _, code := minca(t, "", "store", "check", "--judge", "roots", "--store", "sqlite:"+dir)
	if code != 1 || !strings.Contains(out, "missing from the sync order") {
		t.Fatalf("check of a damaged store: %d %s", code, out)
	}
}

func TestStoreURL(t *testing.T) {
	if _, _, code := minca(t, "", "store", "stats", "--store", "nosuch://x"); code != 2 {
		t.Fatalf("unknown scheme: exit %d", code)
	}
	if _, _, code := minca(t, "", "store", "stats"); code != 2 {
		t.Fatalf("no --store: exit %d", code)
	}
	if out, _, code := minca(t, "", "store", "stats", "--store", "memory:"); code != 0 || !strings.Contains(out, `"versions":0`) {
		t.Fatalf("memory: %d %s", code, out)
	}
}

// A refused line of store import names its line (counting blank lines, so
// `sed -n Np` shows it), and its file when there are several.
func TestImportRefusalsNameTheirLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := versionsFile(t, dir, "good.jsonl", 3, 7)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// Line 1 a version, 2 blank, 3 not JSON, 4 a version, 5 JSON but no version.
	mixed := filepath.Join(dir, "mixed.jsonl")
	os.WriteFile(mixed, []byte(lines[0]+"\n\n{oops\n"+lines[1]+"\n{\"id\":\"x\"}\n"), 0o644)
	out, _, code := minca(t, "", "store", "import", "--judge", "roots", "--store", "memory:", mixed)
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	var refused []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		if o["outcome"] == "refused" {
			refused = append(refused, o)
		} else if _, ok := o["line"]; ok {
			t.Errorf("a line that stands names its line: %s", l)
		}
	}
	if len(refused) != 2 || refused[0]["line"] != 3.0 || refused[0]["reason"] != "json/syntax" || refused[1]["line"] != 5.0 {
		t.Fatalf("refused %v", refused)
	}
	if _, ok := refused[0]["file"]; ok {
		t.Errorf("one input, yet a file: %v", refused[0])
	}
	out, _, _ = minca(t, "", "store", "import", "--judge", "roots", "--store", "memory:", good, mixed)
	if !strings.Contains(out, fmt.Sprintf(`"file":%q,"id":null,"line":3,`, mixed)) {
		t.Fatalf("two inputs: the refused line does not name its file:\n%s", out)
	}
}
