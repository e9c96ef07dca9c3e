package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// ReadConfig configures [RunRead].
type ReadConfig struct {
	// CorpusConfig shapes the versions imported. Default 20,000 versions.
	CorpusConfig CorpusConfig
	// Dir is where the stores go; default a new temporary directory.
	Dir string
	// Rounds is how many times each read is measured; medians reported.
	// Default 5.
	Rounds int
	// CacheSize is each Pebble store's block cache in bytes; default
	// Pebble's backend default (64 MiB).
	CacheSize int64
	// Progress, if set, is told of each step as it starts.
	Progress Progress
}

// ReadResult compares reading a record's current version (the engine's
// CurrentJSON: one point read of the record's head, which carries the
// version that reads) with a bare Pebble point read of one value of the
// same size, on stores holding the same versions. Goal: Ratio ≤ 3.
type ReadResult struct {
	Records  int     `json:"records"`
	Rounds   int     `json:"rounds"`
	Current  Measure `json:"current"`
	BareRead Measure `json:"bareRead"`
	Ratio    float64 `json:"ratio"`
}

// RunRead measures reads of current versions against bare point reads.
func RunRead(ctx context.Context, cfg ReadConfig) (ReadResult, error) {
	var res ReadResult
	if cfg.Rounds <= 0 {
		cfg.Rounds = 5
	}
	if cfg.CorpusConfig.Versions <= 0 {
		cfg.CorpusConfig.Versions = 20_000
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-read-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	steps := newSteps(cfg.Progress, 3+cfg.Rounds)
	steps.next("corpus")
	corpus, err := corpusIn(ctx, dir, "", cfg.CorpusConfig)
	if err != nil {
		return res, err
	}
	data, err := os.ReadFile(corpus)
	if err != nil {
		return res, err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	kv, err := pebble.Open(filepath.Join(dir, "engine"), &pebble.Options{CacheSize: cfg.CacheSize})
	if err != nil {
		return res, err
	}
	st, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		kv.Close()
		return res, err
	}
	defer st.Close()
	steps.next("import")
	if _, err := Import(ctx, st, "bench", lines, 1000); err != nil {
		return res, err
	}
	steps.next("bare store and compaction")
	bare, err := pebble.Open(filepath.Join(dir, "bare"), &pebble.Options{CacheSize: cfg.CacheSize})
	if err != nil {
		return res, err
	}
	defer bare.Close()
	type rec struct{ space, key string }
	seen := map[rec]bool{}
	var recs []rec
	var bareKeys [][]byte
	b, _ := bare.NewBatch()
	for _, l := range lines {
		v, err := record.Decode(l)
		if err != nil {
			return res, err
		}
		if r := (rec{v.Space, v.Key}); !seen[r] {
			seen[r] = true
			recs = append(recs, r)
		}
		d, _ := v.Digest()
		k := append([]byte(nil), d[:]...)
		bareKeys = append(bareKeys, k)
		if err := b.Set(k, l); err != nil {
			return res, err
		}
	}
	if err := b.Commit(engine.Sync); err != nil {
		return res, err
	}
	b.Close()
	// Both stores settled: the engine's just took a long import, the bare
	// one a single batch.
	if err := kv.Compact(ctx); err != nil {
		return res, err
	}
	if err := bare.Compact(ctx); err != nil {
		return res, err
	}
	for _, r := range recs[:min(len(recs), 100)] {
		if _, err := st.CurrentJSON(ctx, r.space, r.key); err != nil && !isNotFound(err) {
			return res, fmt.Errorf("bench: read %s: %w", r.key, err)
		}
	}
	res.Records, res.Rounds = len(recs), cfg.Rounds
	var cur, raw []Measure
	var ratios []float64
	for i := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d of %d", i+1, cfg.Rounds))
		r := rand.New(rand.NewPCG(1, 2))
		c := measure(func(b *B) {
			for range b.N {
				x := recs[r.IntN(len(recs))]
				st.CurrentJSON(ctx, x.space, x.key)
			}
		})
		w := measure(func(b *B) {
			for range b.N {
				bare.Get(bareKeys[r.IntN(len(bareKeys))])
			}
		})
		cur, raw = append(cur, c), append(raw, w)
		ratios = append(ratios, c.NsPerOp/w.NsPerOp)
	}
	res.Current, res.BareRead, res.Ratio = medianMeasure(cur), medianMeasure(raw), median(ratios)
	return res, nil
}

func isNotFound(err error) bool { return err != nil && errorsIs(err, engine.ErrNotFound) }
