package engine_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

func benchCorpus(b *testing.B, n int) []*record.Version {
	vs := enginetest.CorpusVersions(b, enginetest.SpaceID("bench"), enginetest.CorpusOptions{Versions: n, Seed: 1})
	return vs
}

// BenchmarkAdmit admits versions in batches of 1,000 through the node's
// judge on the memory backend: the engine's own cost, without disk.
func BenchmarkAdmit(b *testing.B) {
	vs := benchCorpus(b, b.N)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < len(vs); i += 1000 {
		if _, err := s.Admit(context.Background(), "bench", vs[i:min(i+1000, len(vs))]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCurrentJSON reads records' current versions.
func BenchmarkCurrentJSON(b *testing.B) {
	vs := benchCorpus(b, 2000)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Admit(context.Background(), "bench", vs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		v := vs[i%len(vs)]
		s.CurrentJSON(context.Background(), v.Space, v.Key)
	}
}
