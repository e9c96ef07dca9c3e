package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
)

// BenchmarkImportPebble imports a corpus of b.N versions into Pebble
// through full admission (for profiling: go test -bench ImportPebble
// -cpuprofile).
func BenchmarkImportPebble(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "corpus.jsonl")
	if err := WriteCorpus(context.Background(), path, CorpusConfig{Versions: b.N}); err != nil {
		b.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	b.ResetTimer()
	if _, err := importRate(context.Background(), lines, 1000, func() (engine.KV, error) {
		return pebble.Open(filepath.Join(dir, "db"), nil)
	}); err != nil {
		b.Fatal(err)
	}
}
