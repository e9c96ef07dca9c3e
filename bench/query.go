package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/judge"
)

// QueryConfig configures [RunQuery].
type QueryConfig struct {
	// Records is how many records the collection holds. Default 1,000,000.
	Records int
	// Rounds is how many times each query is measured; medians reported.
	// Default 5.
	Rounds int
	// Dir is where the stores go, kept for a later run with as many
	// records; default a new temporary directory, removed after.
	Dir string
	// CacheSize is each Pebble store's block cache in bytes; default the
	// backend's (64 MiB).
	CacheSize int64
}

// QueryResult compares queries on a collection of Records records (one
// version each, about 600 bytes, in one space, on Pebble) with a bare
// Pebble range scan of 100 keys holding the same versions: each query's
// time over the scan's, medians of the rounds. Goal: First ≤ 3.
type QueryResult struct {
	Records int `json:"records"`
	Rounds  int `json:"rounds"`
	// BareScan is reading 100 consecutive keys and their values.
	BareScan Measure `json:"bareScan"`
	// First is the first 100 records in the default order (@createdAt),
	// handed to the caller as they are read (index.Scan: what a server
	// writes out).
	First      Measure `json:"first"`
	FirstRatio float64 `json:"firstRatio"`
	// FirstPage is the same gathered in a page the caller keeps
	// (index.Find: each version copied).
	FirstPage      Measure `json:"firstPage"`
	FirstPageRatio float64 `json:"firstPageRatio"`
	// Indexed is the first 100 whose declared field status is one of 100
	// values (1% of the records pass).
	Indexed      Measure `json:"indexed"`
	IndexedRatio float64 `json:"indexedRatio"`
	// Unindexed is the same where on a field no index is kept of.
	Unindexed      Measure `json:"unindexed"`
	UnindexedRatio float64 `json:"unindexedRatio"`
	// Newest is the first 100 by @createdAt descending.
	Newest      Measure `json:"newest"`
	NewestRatio float64 `json:"newestRatio"`
}

const queryCollection = "bench.item"

// RunQuery fills a store and a bare Pebble store with the same versions and
// measures the queries against the scan.
func RunQuery(ctx context.Context, cfg QueryConfig) (QueryResult, error) {
	var res QueryResult
	if cfg.Rounds <= 0 {
		cfg.Rounds = 5
	}
	if cfg.Records <= 0 {
		cfg.Records = 1_000_000
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-query-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	kv, err := pebble.Open(filepath.Join(dir, "engine"), &pebble.Options{CacheSize: cfg.CacheSize})
	if err != nil {
		return res, err
	}
	st, ix, err := index.Open(kv, &engine.Options{Judge: &judge.Judge{}}, &index.Options{Fields: map[string][]string{queryCollection: {"status"}}})
	if err != nil {
		kv.Close()
		return res, err
	}
	defer st.Close()
	bare, err := pebble.Open(filepath.Join(dir, "bare"), &pebble.Options{CacheSize: cfg.CacheSize})
	if err != nil {
		return res, err
	}
	defer bare.Close()
	space := corpus.SpaceID("bench-query")
	// A directory named by the caller keeps its stores: a later run with
	// as many records measures them again without filling them.
	filled := filepath.Join(dir, "filled")
	if b, err := os.ReadFile(filled); err != nil || string(b) != strconv.Itoa(cfg.Records) {
		if err := fillQueryStores(ctx, st, bare, space, cfg.Records); err != nil {
			return res, err
		}
		if err := kv.Compact(ctx); err != nil {
			return res, err
		}
		if err := bare.Compact(ctx); err != nil {
			return res, err
		}
		if err := os.WriteFile(filled, []byte(strconv.Itoa(cfg.Records)), 0o644); err != nil {
			return res, err
		}
	}
	queries := map[string]*index.Query{}
	for name, q := range map[string]string{
		"first":     `{"collection":"bench.item","limit":100}`,
		"indexed":   `{"collection":"bench.item","where":{"status":"s17"},"limit":100}`,
		"unindexed": `{"collection":"bench.item","where":{"plain":"s17"},"limit":100}`,
		"newest":    `{"collection":"bench.item","order":{"by":"@createdAt","dir":"desc"},"limit":100}`,
	} {
		if queries[name], err = index.Parse([]byte(q)); err != nil {
			return res, err
		}
		p, err := ix.Find(ctx, space, queries[name], "")
		if err != nil {
			return res, err
		}
		want := min(100, cfg.Records)
		if name == "indexed" || name == "unindexed" { // status s17: i % 100 == 17
			want = min(100, cfg.Records/100+min(1, max(0, cfg.Records%100-17)))
		}
		if len(p.Entries) != want {
			return res, fmt.Errorf("bench: query %s answered %d records, not %d", name, len(p.Entries), want)
		}
	}
	var firstErr error
	run := func(name string) func(b *B) {
		return func(b *B) {
			size := 0
			for range b.N {
				_, err := ix.Scan(ctx, space, queries[name], "", func(r index.Row) bool { size += len(r.JSON()); return true })
				if err != nil && firstErr == nil {
					firstErr = err
				}
			}
		}
	}
	page := func(b *B) {
		for range b.N {
			if _, err := ix.Find(ctx, space, queries["first"], ""); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	scan := func(b *B) {
		for range b.N {
			it, err := bare.NewIter(nil, nil)
			if err != nil {
				firstErr = err
				return
			}
			n, size := 0, 0
			for n < 100 && it.Next() {
				size += len(it.Key()) + len(it.Value())
				n++
			}
			it.Close()
			if n != 100 {
				firstErr = fmt.Errorf("bench: the bare scan read %d keys", n)
			}
		}
	}
	res.Records, res.Rounds = cfg.Records, cfg.Rounds
	ms := map[string][]Measure{}
	ratios := map[string][]float64{}
	for range cfg.Rounds {
		b := measure(scan)
		ms["bare"] = append(ms["bare"], b)
		m := measure(page)
		ms["page"] = append(ms["page"], m)
		ratios["page"] = append(ratios["page"], m.NsPerOp/b.NsPerOp)
		for _, name := range []string{"first", "indexed", "unindexed", "newest"} {
			m := measure(run(name))
			ms[name] = append(ms[name], m)
			ratios[name] = append(ratios[name], m.NsPerOp/b.NsPerOp)
		}
		if firstErr != nil {
			return res, firstErr
		}
	}
	res.BareScan = medianMeasure(ms["bare"])
	res.First, res.FirstRatio = medianMeasure(ms["first"]), median(ratios["first"])
	res.FirstPage, res.FirstPageRatio = medianMeasure(ms["page"]), median(ratios["page"])
	res.Indexed, res.IndexedRatio = medianMeasure(ms["indexed"]), median(ratios["indexed"])
	res.Unindexed, res.UnindexedRatio = medianMeasure(ms["unindexed"]), median(ratios["unindexed"])
	res.Newest, res.NewestRatio = medianMeasure(ms["newest"]), median(ratios["newest"])
	return res, nil
}

// fillQueryStores signs n first versions in one collection (four writers,
// one goroutine each), admits them through the judge and the index, and
// writes the same JSON under 16-byte keys into the bare store, in order.
func fillQueryStores(ctx context.Context, st *engine.Store, bare *pebble.Store, space string, n int) error {
	const writers, chunk = 4, 20_000
	ws := make([]*corpus.Writer, writers)
	for i := range ws {
		w, err := corpus.NewWriter(space)
		if err != nil {
			return err
		}
		ws[i] = w
	}
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 12)
	for from := 0; from < n; from += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		to := min(from+chunk, n)
		lines := make([][]byte, to-from)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + g; i < to; i += writers {
					status := fmt.Sprintf("s%02d", i%100)
					body := canonical.NewObject("text", fmt.Sprintf("record %d: %s", i, pad), "status", status, "plain", status, "n", float64(i))
					v, err := ws[g].First(queryCollection, body)
					if err == nil {
						lines[i-from], err = v.MarshalJSON()
					}
					if err != nil {
						errs[g] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		stood, err := Import(ctx, st, "bench", lines, 1000)
		if err != nil {
			return err
		}
		if stood != len(lines) {
			return fmt.Errorf("bench: %d of %d versions stood", stood, len(lines))
		}
		b, err := bare.NewBatch()
		if err != nil {
			return err
		}
		for i, l := range lines {
			k := binary.BigEndian.AppendUint64(make([]byte, 8, 16), uint64(from+i))
			if err := b.Set(k, l); err != nil {
				b.Close()
				return err
			}
		}
		if err := b.Commit(engine.Sync); err != nil {
			return err
		}
		b.Close()
	}
	return nil
}
