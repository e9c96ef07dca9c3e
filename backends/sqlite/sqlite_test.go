package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

func TestSuite(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.KV {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, enginetest.Reopen(func(path string) (engine.KV, error) { return sqlite.Open(path, nil) }))
}

// A bulk import into a SQLite store takes batches larger than the
// engine's default (fewer log pages a version).
func TestImportBatch(t *testing.T) {
	kv, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Open(kv, nil)
	if err != nil {
		kv.Close()
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ImportBatch(); got <= engine.DefaultImportBatch {
		t.Fatalf("ImportBatch %d, want more than the default %d", got, engine.DefaultImportBatch)
	}
}
