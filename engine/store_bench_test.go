package engine_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/internal/cputime"
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

// BenchmarkAdmitDecided is BenchmarkAdmit with the batches prepared (the
// judge's Check, signatures verified, and their encodings) before the
// timer: the decisions and commits alone, the engine's own write path,
// with the CPU time they take a version (cpu-ns/op), which the load on a
// shared machine moves less than the time.
func BenchmarkAdmitDecided(b *testing.B) {
	ctx := context.Background()
	vs := benchCorpus(b, b.N)
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var ps []*engine.Prepared
	for i := 0; i < len(vs); i += 1000 {
		p, err := s.Prepare(ctx, vs[i:min(i+1000, len(vs))])
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, p)
	}
	cpu := cputime.Process()
	b.ResetTimer()
	for _, p := range ps {
		if _, err := s.AdmitPrepared(ctx, "bench", p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if c := cputime.Process(); c > 0 {
		b.ReportMetric(float64(c-cpu)/float64(b.N), "cpu-ns/op")
	}
}
