package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/store"
)

// Every part of --memory has a row in docs/stores.md's table with the
// default the code has, and the default written is one the flag takes.
func TestMemoryTableInDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "stores.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Memory of store import\n")
	if !ok {
		t.Fatal("docs/stores.md has no section \"Memory of store import\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, d := range memoryDefs(&importMemory{}) {
		row := regexp.MustCompile("(?m)^\\| `--memory " + regexp.QuoteMeta(d.name) + "` \\| `" + regexp.QuoteMeta(d.def) + "` \\|")
		if !row.MatchString(section) {
			t.Errorf("docs/stores.md's memory table has no row for --memory %s with default %s (%s)", d.name, d.def, d.what)
		}
		if err := memoryFlag(&importMemory{}).Set(d.name + "=" + d.def); err != nil {
			t.Errorf("--memory %s=%s: %v", d.name, d.def, err)
		}
	}
	rows := regexp.MustCompile("(?m)^\\| `--memory ([a-z-]+)`").FindAllStringSubmatch(section, -1)
	if len(rows) != len(memoryDefs(&importMemory{})) {
		t.Errorf("docs/stores.md's memory table has %d rows, --memory %d parts", len(rows), len(memoryDefs(&importMemory{})))
	}
}

// The defaults are what the table says; --memory sets one part and leaves
// the others; $GOMEMLIMIT stands unless go-heap is given.
func TestImportMemoryDefaults(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	m := newImportMemory()
	if m.goHeap <= 0 || m.store.BlockCache <= 0 || m.store.MemTable <= 0 || m.store.Held <= 0 || m.verdicts <= 0 {
		t.Fatalf("a default is unset: %+v", m)
	}
	f := memoryFlag(m)
	want := *m
	if err := f.Set("held=77"); err != nil {
		t.Fatal(err)
	}
	want.store.Held = 77
	if *m != want {
		t.Fatalf("--memory held=77: %+v, want %+v", *m, want)
	}
	if err := f.Set("block-cache=3MiB"); err != nil || m.store.BlockCache != 3<<20 {
		t.Fatalf("--memory block-cache=3MiB: %v, %d", err, m.store.BlockCache)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	if m := newImportMemory(); m.goHeap != 0 {
		t.Fatalf("with GOMEMLIMIT set the default go-heap is %d, want none (GOMEMLIMIT's)", m.goHeap)
	}
	m = newImportMemory()
	if err := memoryFlag(m).Set("go-heap=96MiB"); err != nil || m.goHeap != 96<<20 {
		t.Fatalf("--memory go-heap=96MiB over GOMEMLIMIT: %v, %d", err, m.goHeap)
	}
}

// A bad --memory is bad usage (exit 2), named.
func TestImportMemoryBadUsage(t *testing.T) {
	dir := t.TempDir()
	in := versionsFile(t, dir, "v.jsonl", 5, 1)
	for _, c := range []struct{ arg, says string }{
		{"held=0", "not a positive count"},
		{"verdicts=x", "verdicts=x"},
		{"block-cache=-1MiB", "not a positive size"},
		{"memtable", "want NAME=VALUE"},
		{"memtable=1", "less than the least, 64KiB"},
		{"cache=1MiB", "go-heap, block-cache, memtable, held, verdicts"},
	} {
		_, errs, code := minca(t, "", "store", "import", "--judge", "roots", "--store", "pebble:"+filepath.Join(dir, "st"), "--memory", c.arg, in)
		if code != exitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("--memory %s: exit %d, want %d naming %q:\n%s", c.arg, code, exitUsage, c.says, errs)
		}
	}
}

// With every part at its smallest — one held version, one verdict, a
// 1 MiB block cache, 256 KiB memtables, the Go heap held tight — an import
// admits exactly what it does with the defaults: the bounds cost work
// (chains read back from the store, memtables flushed often), never an
// answer.
func TestImportMemorySmallestSameOutcomes(t *testing.T) {
	dir := t.TempDir()
	in := versionsFile(t, dir, "v.jsonl", 3000, 7)
	def := mustRun(t, "store", "import", "--judge", "roots", "--store", "pebble:"+filepath.Join(dir, "a"), in)
	small := mustRun(t, "store", "import", "--judge", "roots", "--store", "pebble:"+filepath.Join(dir, "b"), in,
		"--memory", "held=1", "--memory", "verdicts=1", "--memory", "block-cache=1MiB", "--memory", "memtable=256KiB", "--memory", "go-heap=16MiB")
	if def != small {
		t.Fatalf("the outcomes differ:\ndefaults:\n%s\nsmallest:\n%s", head(def), head(small))
	}
	if n := strings.Count(def, "\n"); n != 3000 {
		t.Fatalf("%d outcome lines, want 3000", n)
	}
	if !strings.Contains(def, `"stub"`) || !strings.Contains(def, `"whole"`) {
		t.Fatalf("the corpus made no edits (no stub): the chain checks were not exercised:\n%s", head(def))
	}
	a := (&device{t: t}).exported("pebble:" + filepath.Join(dir, "a"))
	b := (&device{t: t}).exported("pebble:" + filepath.Join(dir, "b"))
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("the two stores export different versions")
	}
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// Every part of serve's --memory has a row in docs/stores.md's table
// (Memory of a node) with the default written there, and that default is
// the node's own.
func TestServeMemoryTableInDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "stores.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Memory of a node\n")
	if !ok {
		t.Fatal("docs/stores.md has no section \"Memory of a node\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var m nodeMemory
	for _, d := range nodeMemoryDefs(&m) {
		row := regexp.MustCompile("(?m)^\\| `--memory " + regexp.QuoteMeta(d.name) + "` \\| `" + regexp.QuoteMeta(d.def) + "` \\|")
		if !row.MatchString(section) {
			t.Errorf("docs/stores.md's node memory table has no row for --memory %s with default %s (%s)", d.name, d.def, d.what)
		}
		if err := nodeMemoryFlag(&m).Set(d.name + "=" + d.def); err != nil {
			t.Errorf("serve --memory %s=%s: %v", d.name, d.def, err)
		}
	}
	if want := (store.Memory{BlockCache: node.DefaultBlockCache, MemTable: node.DefaultMemTable}); m.store != want {
		t.Errorf("serve --memory's defaults as written are %+v, the node's %+v", m.store, want)
	}
	if m.goHeap <= 0 {
		t.Errorf("serve --memory go-heap's default as written sets no limit: %d", m.goHeap)
	}
	rows := regexp.MustCompile("(?m)^\\| `--memory ([a-z-]+)`").FindAllStringSubmatch(section, -1)
	if len(rows) != len(nodeMemoryDefs(&m)) {
		t.Errorf("docs/stores.md's node memory table has %d rows, serve --memory %d parts", len(rows), len(nodeMemoryDefs(&m)))
	}
}

// A bad serve --memory is bad usage (exit 2), named, before the node
// opens.
func TestServeMemoryBadUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ arg, says string }{
		{"block-cache=0", "not a positive size"},
		{"memtable=1", "less than the least, 64KiB"},
		{"held=5", "go-heap, block-cache, memtable"},
		{"go-heap=1x", "not a positive size"},
	} {
		_, errs, code := minca(t, "", "serve", "--dir", filepath.Join(dir, "n"), "--listen", "127.0.0.1:0", "--memory", c.arg)
		if code != exitUsage || !strings.Contains(errs, c.says) {
			t.Errorf("serve --memory %s: exit %d, want %d naming %q:\n%s", c.arg, code, exitUsage, c.says, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); !os.IsNotExist(err) {
		t.Errorf("a serve refused for its flags made its directory: %v", err)
	}
}

// A serve --tidy-files-every that is not a positive duration is bad
// usage (exit 2), named, before the node opens.
func TestServeTidyEveryBadUsage(t *testing.T) {
	dir := t.TempDir()
	for _, arg := range []string{"0s", "-1m"} {
		_, errs, code := minca(t, "", "serve", "--dir", filepath.Join(dir, "n"), "--listen", "127.0.0.1:0", "--tidy-files-every", arg)
		if code != exitUsage || !strings.Contains(errs, "--tidy-files-every") {
			t.Errorf("serve --tidy-files-every %s: exit %d, want %d naming the flag:\n%s", arg, code, exitUsage, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); !os.IsNotExist(err) {
		t.Errorf("a serve refused for its flags made its directory: %v", err)
	}
}

// serve's defaults are what its table says, $GOMEMLIMIT stands unless
// go-heap is given, and --memory sets one part and leaves the others.
func TestNodeMemoryDefaults(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	m := newNodeMemory()
	if m.goHeap <= 0 || m.store.BlockCache != node.DefaultBlockCache || m.store.MemTable != node.DefaultMemTable {
		t.Fatalf("serve's memory defaults: %+v", *m)
	}
	want := *m
	if err := nodeMemoryFlag(m).Set("block-cache=64MiB"); err != nil {
		t.Fatal(err)
	}
	want.store.BlockCache = 64 << 20
	if *m != want {
		t.Fatalf("--memory block-cache=64MiB: %+v, want %+v", *m, want)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if m := newNodeMemory(); m.goHeap != 0 {
		t.Fatalf("with GOMEMLIMIT set serve's default go-heap is %d, want none (GOMEMLIMIT's)", m.goHeap)
	}
}

// The default go-heap makes room for a store's larger import batches
// (SQLite's); a go-heap given by --memory or $GOMEMLIMIT stands.
func TestImportMemoryFollowsBatch(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	def := newImportMemory().goHeap
	m := newImportMemory()
	m.forBatch(engine.DefaultImportBatch)
	if m.goHeap != def {
		t.Fatalf("default batch: go-heap %d, want the default %d", m.goHeap, def)
	}
	m.forBatch(2 * engine.DefaultImportBatch)
	if want := def + engine.DefaultImportBatch*heapPerBatchVersion; m.goHeap != want {
		t.Fatalf("batches of %d: go-heap %d, want %d", 2*engine.DefaultImportBatch, m.goHeap, want)
	}
	m = newImportMemory()
	if err := memoryFlag(m).Set("go-heap=50MiB"); err != nil {
		t.Fatal(err)
	}
	m.forBatch(2 * engine.DefaultImportBatch)
	if m.goHeap != 50<<20 {
		t.Fatalf("--memory go-heap=50MiB, batches of %d: go-heap %d, want 50 MiB", 2*engine.DefaultImportBatch, m.goHeap)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	m = newImportMemory()
	m.forBatch(2 * engine.DefaultImportBatch)
	if m.goHeap != 0 {
		t.Fatalf("with GOMEMLIMIT set, batches of %d: go-heap %d, want none (GOMEMLIMIT's)", 2*engine.DefaultImportBatch, m.goHeap)
	}
}
