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
