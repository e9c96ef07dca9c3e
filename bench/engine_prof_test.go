package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
)

// corpusLines returns n versions: the first n lines of the corpus file
// named by MINCA_BENCH_CORPUS (so a profile runs on the report's corpus
// without signing it again), or a new corpus of n.
func corpusLines(b *testing.B, dir string, n int) [][]byte {
	path := os.Getenv("MINCA_BENCH_CORPUS")
	if path == "" {
		path = filepath.Join(dir, "corpus.jsonl")
		if err := WriteCorpus(context.Background(), path, CorpusConfig{Versions: n}); err != nil {
			b.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	return lines[:min(n, len(lines))]
}

// BenchmarkImportPebble imports a corpus of b.N versions into Pebble
// through full admission (for profiling: go test -bench ImportPebble
// -benchtime 100000x -cpuprofile; MINCA_BENCH_CORPUS=FILE to reuse a
// corpus).
func BenchmarkImportPebble(b *testing.B) {
	dir := b.TempDir()
	lines := corpusLines(b, dir, b.N)
	b.ResetTimer()
	if _, _, err := importRate(context.Background(), lines, 0, func() (engine.KV, error) {
		return pebble.Open(filepath.Join(dir, "db"), nil)
	}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkImportSQLite is BenchmarkImportPebble on SQLite.
func BenchmarkImportSQLite(b *testing.B) {
	dir := b.TempDir()
	lines := corpusLines(b, dir, b.N)
	b.ResetTimer()
	if _, _, err := importRate(context.Background(), lines, 0, func() (engine.KV, error) {
		return sqlite.Open(filepath.Join(dir, "db"), nil)
	}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCheckPebble imports a corpus of b.N versions into Pebble,
// closes and opens the store again (as `minca store check` finds it), and
// times its Check alone (for profiling: go test -bench CheckPebble
// -benchtime 100000x -cpuprofile; MINCA_BENCH_CORPUS=FILE to reuse a
// corpus).
func BenchmarkCheckPebble(b *testing.B) {
	dir := b.TempDir()
	lines := corpusLines(b, dir, b.N)
	path := filepath.Join(dir, "db")
	if _, _, err := importRate(context.Background(), lines, 0, func() (engine.KV, error) {
		return pebble.Open(path, nil)
	}); err != nil {
		b.Fatal(err)
	}
	kv, err := pebble.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := engine.Open(kv, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	probs, err := st.Check(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(probs) > 0 {
		b.Fatalf("%d problems, the first: %s", len(probs), probs[0])
	}
}
