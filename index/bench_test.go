package index_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// benchStore is a Pebble store of n records in app.item with an index.
func benchStore(b *testing.B, n int) (*engine.Store, *index.Index, string) {
	kv, err := pebble.Open(filepath.Join(b.TempDir(), "p"), nil)
	if err != nil {
		b.Fatal(err)
	}
	st, ix, err := index.Open(kv, &engine.Options{Judge: &judge.Judge{}}, &index.Options{Fields: map[string][]string{"app.item": {"status"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	sp := enginetest.SpaceID("bench")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		b.Fatal(err)
	}
	var vs []*record.Version
	for i := range n {
		v, err := w.First("app.item", canonical.NewObject("status", fmt.Sprintf("s%02d", i%100), "plain", fmt.Sprintf("s%02d", i%100), "text", fmt.Sprint("record ", i)))
		if err != nil {
			b.Fatal(err)
		}
		vs = append(vs, v)
		if len(vs) == 1000 || i == n-1 {
			if _, err := st.Admit(ctx, "b", vs); err != nil {
				b.Fatal(err)
			}
			vs = vs[:0]
		}
	}
	if err := kv.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	return st, ix, sp
}

func BenchmarkFind(b *testing.B) {
	_, ix, sp := benchStore(b, 5000)
	for _, c := range []struct{ name, q string }{
		{"First100", `{"collection":"app.item","limit":100}`},
		{"Indexed", `{"collection":"app.item","where":{"status":"s17"},"limit":20}`},
		{"Unindexed", `{"collection":"app.item","where":{"plain":"s17"},"limit":20}`},
	} {
		q, err := index.Parse([]byte(c.q))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := ix.Find(ctx, sp, q, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// trustJudge lets every version stand, checking nothing: what remains of
// admitting is the store's own work, with or without the index.
type trustJudge struct{}

func (trustJudge) Check(v *record.Version) (engine.Checked, error) {
	return engine.Checked{Root: v.Author}, nil
}

func (trustJudge) Decide(engine.HeldReader, *record.Version, engine.Checked) (engine.Decision, error) {
	return engine.Decision{Verdict: engine.Stands}, nil
}

// BenchmarkAdmit is the store's work a version (no signature checks),
// without and with the index: what keeping the index costs a write.
func BenchmarkAdmit(b *testing.B) {
	sp := enginetest.SpaceID("admit")
	var vs []*record.Version
	if err := enginetest.Corpus(sp, enginetest.CorpusOptions{Versions: 20000, Seed: 4}, func(v *record.Version) error {
		vs = append(vs, v)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, withIndex := range []bool{false, true} {
		name := "Bare"
		if withIndex {
			name = "Indexed"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				kv, err := pebble.Open(filepath.Join(b.TempDir(), "p"), nil)
				if err != nil {
					b.Fatal(err)
				}
				o := &engine.Options{Judge: trustJudge{}}
				if withIndex {
					ix, err := index.New(nil)
					if err != nil {
						b.Fatal(err)
					}
					o.Indexer = ix
				}
				st, err := engine.Open(kv, o)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for i := 0; i < len(vs); i += 1000 {
					if _, err := st.Admit(ctx, "b", vs[i:min(i+1000, len(vs))]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(vs)), "ns/version")
		})
	}
}
