package engine_test

import (
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// batcherKV is a KV that says its import batch.
type batcherKV struct {
	engine.KV
	n int
}

func (b batcherKV) ImportBatch() int { return b.n }

// A store takes a bulk import's batch size from its KV when the KV says
// one, and the default when it does not or says nonsense.
func TestImportBatch(t *testing.T) {
	for _, c := range []struct {
		name string
		kv   engine.KV
		want int
	}{
		{"not said", memory.Open(nil), engine.DefaultImportBatch},
		{"said", batcherKV{memory.Open(nil), 3000}, 3000},
		{"zero", batcherKV{memory.Open(nil), 0}, engine.DefaultImportBatch},
		{"negative", batcherKV{memory.Open(nil), -5}, engine.DefaultImportBatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := engine.Open(c.kv, &engine.Options{Judge: enginetest.Judge{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.ImportBatch(); got != c.want {
				t.Fatalf("ImportBatch %d, want %d", got, c.want)
			}
		})
	}
}
