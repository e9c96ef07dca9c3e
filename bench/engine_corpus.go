package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/record"
)

// CorpusConfig shapes a corpus of signed versions for the engine's
// benchmarks.
type CorpusConfig struct {
	// Versions is how many versions. Default 100,000.
	Versions int
	// Edits is the average number of versions per record. Default 3.
	Edits float64
	// Spaces is how many spaces they are spread over. Default 4.
	Spaces int
	// Seed makes the record shapes repeatable (keys are new each time).
	Seed uint64
}

// WriteCorpus signs a corpus (on every core, one space per goroutine) and
// writes it to path as JSON lines, each space's versions in writing order.
func WriteCorpus(ctx context.Context, path string, cfg CorpusConfig) error {
	if cfg.Versions <= 0 {
		cfg.Versions = 100_000
	}
	if cfg.Edits <= 0 {
		cfg.Edits = 3
	}
	if cfg.Spaces <= 0 {
		cfg.Spaces = 4
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, cfg.Spaces)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range cfg.Spaces {
		n := cfg.Versions / cfg.Spaces
		if i == 0 {
			n += cfg.Versions % cfg.Spaces
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var buf []byte
			flush := func() error {
				mu.Lock()
				defer mu.Unlock()
				_, err := w.Write(buf)
				buf = buf[:0]
				return err
			}
			errs[i] = corpus.Generate(corpus.SpaceID(fmt.Sprintf("bench-%d-%d", cfg.Seed, i)),
				corpus.Options{Versions: n, Edits: cfg.Edits, Seed: cfg.Seed + uint64(i)},
				func(v *record.Version) error {
					if err := ctx.Err(); err != nil {
						return err
					}
					b, err := v.MarshalJSON()
					if err != nil {
						return err
					}
					buf = append(append(buf, b...), '\n')
					if len(buf) > 1<<20 {
						return flush()
					}
					return nil
				})
			if errs[i] == nil {
				errs[i] = flush()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
