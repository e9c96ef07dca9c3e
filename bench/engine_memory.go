package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

var errorsIs = errors.Is

// MemoryConfig configures [RunMemory].
type MemoryConfig struct {
	// Minca is the path of the minca binary whose `store import` is
	// measured (a child process, so its peak RSS is its own).
	Minca string
	// Store is the store URL scheme and kind: "pebble" (default) or "sqlite".
	Store string
	// Corpus is a file of versions to import; when empty one of
	// CorpusConfig (default 1,000,000 versions) is written to Dir.
	Corpus       string
	CorpusConfig CorpusConfig
	// Dir is where the store and a generated corpus go; default a new
	// temporary directory, removed afterwards.
	Dir string
	// Rounds is how many imports; the median peak is reported. Default 1.
	Rounds int
	// Progress, if set, is told of each step as it starts.
	Progress Progress
}

// MemoryResult is the peak resident memory of `minca store import` of a
// corpus (max RSS of the child process, from the kernel's rusage). Goal:
// under 400 MB for 1,000,000 versions.
type MemoryResult struct {
	Versions  int     `json:"versions"`
	Rounds    int     `json:"rounds"`
	PeakRSSMB float64 `json:"peakRssMB"`
	Seconds   float64 `json:"seconds"`
	PerSec    float64 `json:"versionsPerSecond"`
}

// RunMemory imports a corpus with the minca binary and reports its peak RSS.
func RunMemory(ctx context.Context, cfg MemoryConfig) (MemoryResult, error) {
	var res MemoryResult
	if cfg.Minca == "" {
		return res, errors.New("bench: MemoryConfig.Minca: the minca binary is required")
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 1
	}
	if cfg.Store == "" {
		cfg.Store = "pebble"
	}
	if cfg.CorpusConfig.Versions <= 0 {
		cfg.CorpusConfig.Versions = 1_000_000
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-memory-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	steps := newSteps(cfg.Progress, 1+cfg.Rounds)
	steps.next("corpus")
	corpus, err := corpusIn(ctx, dir, cfg.Corpus, cfg.CorpusConfig)
	if err != nil {
		return res, err
	}
	n, err := countLines(corpus)
	if err != nil {
		return res, err
	}
	res.Versions, res.Rounds = n, cfg.Rounds
	var peaks, secs []float64
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("import %d of %d", r+1, cfg.Rounds))
		store := filepath.Join(dir, fmt.Sprintf("store-%d", r))
		cmd := exec.CommandContext(ctx, cfg.Minca, "store", "import", "--store", cfg.Store+":"+store, corpus)
		cmd.Stdout = io.Discard
		cmd.Stderr = io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return res, fmt.Errorf("bench: %s store import: %w", cfg.Minca, err)
		}
		secs = append(secs, time.Since(start).Seconds())
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			return res, errors.New("bench: no rusage on this system")
		}
		peaks = append(peaks, float64(ru.Maxrss)/1024) // Linux reports KiB
		os.RemoveAll(store)
	}
	res.PeakRSSMB, res.Seconds = median(peaks), median(secs)
	res.PerSec = float64(n) / res.Seconds
	return res, nil
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := f.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
