package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/minca-go/minca/backends/pebble"
)

var errorsIs = errors.Is

// MemoryConfig configures [RunMemory].
type MemoryConfig struct {
	// Minca is the path of the minca binary whose `store import` is
	// measured (a child process, so its peak RSS is its own).
	Minca string
	// Stores are the backends measured, each "pebble" or "sqlite".
	// Default both.
	Stores []string
	// Corpus is a file of versions to import; when empty one of
	// CorpusConfig (default 1,000,000 versions) is written to Dir.
	Corpus       string
	CorpusConfig CorpusConfig
	// Dir is where the stores and a generated corpus go; default a new
	// temporary directory, removed afterwards.
	Dir string
	// Rounds is how many imports a backend; the medians are reported.
	// Default 1.
	Rounds int
	// Progress, if set, is told of each step as it starts.
	Progress Progress
}

// MemoryResult is, for each backend, the peak resident memory of `minca
// store import --judge roots` of a corpus (max RSS of the child process,
// from the kernel's rusage), its time, and the bytes the store then takes
// on disk against the bytes of versions it holds. Goals: peak RSS at most
// 160 MB for 1,000,000 versions, flat in their number; on disk at most
// 0.5× (Pebble) and 1.0× (SQLite) what is held.
type MemoryResult struct {
	Versions int                     `json:"versions"`
	Rounds   int                     `json:"rounds"`
	Stores   map[string]MemoryFigure `json:"stores"`
}

// MemoryFigure is one backend's figures in a [MemoryResult].
type MemoryFigure struct {
	PeakRSSMB float64 `json:"peakRssMB"`
	// RSSByQuarterMB is the largest resident memory seen in each quarter
	// of the import's time (sampled every 100 ms): flat in the number of
	// versions, the four are alike. PeakAnonMB and PeakFileMB split the
	// largest sample: heaps (Go's, the C allocator's) and file-backed
	// pages (the binary's code and read-only data, shared and
	// reclaimable). Linux only; zero elsewhere.
	RSSByQuarterMB [4]float64 `json:"rssByQuarterMB"`
	PeakAnonMB     float64    `json:"peakAnonMB"`
	PeakFileMB     float64    `json:"peakFileMB"`
	Seconds        float64    `json:"seconds"`
	PerSec         float64    `json:"versionsPerSecond"`
	// CPUMicros is the import's CPU time (user and system) a version:
	// on a loaded machine, steadier than its rate.
	CPUMicros float64 `json:"cpuMicrosPerVersion"`
	// DiskBytes is the size of every file of the store once the import
	// has closed it (logs included); LogicalBytes is what it holds: the
	// envelopes and bodies of its versions as `minca store stats` counts
	// them; DiskRatio is the first over the second.
	DiskBytes    int64   `json:"diskBytes"`
	LogicalBytes int64   `json:"logicalBytes"`
	DiskRatio    float64 `json:"diskRatio"`
	// SettledBytes is the size of a Pebble store once this build has
	// flushed it and compacted its whole key space (every level's
	// files rewritten into the bottom ones); SettledRatio is it over
	// LogicalBytes. DiskBytes is the store as the import left it, which
	// is what a user finds; a store settles toward SettledBytes as later
	// writes compact it. Zero for SQLite, which keeps no levels.
	SettledBytes int64   `json:"settledBytes,omitempty"`
	SettledRatio float64 `json:"settledRatio,omitempty"`
}

// RunMemory imports a corpus with the minca binary into each backend and
// reports its peak RSS and the store's size.
func RunMemory(ctx context.Context, cfg MemoryConfig) (MemoryResult, error) {
	var res MemoryResult
	if cfg.Minca == "" {
		return res, errors.New("bench: MemoryConfig.Minca: the minca binary is required")
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 1
	}
	if len(cfg.Stores) == 0 {
		cfg.Stores = []string{"pebble", "sqlite"}
	}
	if cfg.CorpusConfig.Versions <= 0 {
		cfg.CorpusConfig.Versions = 1_000_000
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-memory-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	steps := newSteps(cfg.Progress, 1+cfg.Rounds*len(cfg.Stores))
	steps.next("corpus")
	corpus, err := corpusIn(ctx, dir, cfg.Corpus, cfg.CorpusConfig)
	if err != nil {
		return res, err
	}
	n, err := countLines(corpus)
	if err != nil {
		return res, err
	}
	res.Versions, res.Rounds, res.Stores = n, cfg.Rounds, map[string]MemoryFigure{}
	for _, kind := range cfg.Stores {
		var peaks, secs, cpus, disk, logical, settled, anons, files []float64
		var quarters [4][]float64
		for r := range cfg.Rounds {
			steps.next(fmt.Sprintf("%s: import %d of %d", kind, r+1, cfg.Rounds))
			m, err := importChild(ctx, cfg.Minca, kind, filepath.Join(dir, fmt.Sprintf("%s-%d", kind, r)), corpus, n)
			if err != nil {
				return res, err
			}
			peaks, secs, cpus = append(peaks, m.PeakRSSMB), append(secs, m.Seconds), append(cpus, m.CPUMicros)
			anons, files = append(anons, m.PeakAnonMB), append(files, m.PeakFileMB)
			for i, q := range m.RSSByQuarterMB {
				quarters[i] = append(quarters[i], q)
			}
			disk, logical = append(disk, float64(m.DiskBytes)), append(logical, float64(m.LogicalBytes))
			settled = append(settled, float64(m.SettledBytes))
		}
		f := MemoryFigure{PeakRSSMB: median(peaks), Seconds: median(secs), CPUMicros: median(cpus), DiskBytes: int64(median(disk)), LogicalBytes: int64(median(logical))}
		f.PerSec = float64(n) / f.Seconds
		f.PeakAnonMB, f.PeakFileMB = median(anons), median(files)
		for i := range quarters {
			f.RSSByQuarterMB[i] = median(quarters[i])
		}
		f.SettledBytes = int64(median(settled))
		if f.LogicalBytes > 0 {
			f.DiskRatio = float64(f.DiskBytes) / float64(f.LogicalBytes)
			f.SettledRatio = float64(f.SettledBytes) / float64(f.LogicalBytes)
		}
		res.Stores[kind] = f
	}
	return res, nil
}

// importChild runs `minca store import` of corpus (of so many versions)
// into a new store of kind under dir, then measures the store and removes
// it.
func importChild(ctx context.Context, minca, kind, dir, corpus string, versions int) (MemoryFigure, error) {
	var f MemoryFigure
	url := kind + ":" + dir
	if kind == "sqlite" {
		url = kind + ":" + filepath.Join(dir, "store.db")
	}
	defer os.RemoveAll(dir)
	// The roots judge: the corpus's spaces have no genesis, and under the
	// full judge every version would wait for one.
	cmd := exec.CommandContext(ctx, minca, "store", "import", "--judge", "roots", "--store", url, corpus)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return f, fmt.Errorf("bench: %s store import: %w", minca, err)
	}
	stop := make(chan struct{})
	sampled := make(chan []rssSample, 1)
	go func() { sampled <- sampleRSS(cmd.Process.Pid, 100*time.Millisecond, stop) }()
	err := cmd.Wait()
	f.Seconds = time.Since(start).Seconds()
	close(stop)
	samples := <-sampled
	if err != nil {
		return f, fmt.Errorf("bench: %s store import: %w: %s", minca, err, lastLine(stderr.Bytes()))
	}
	f.RSSByQuarterMB = rssQuarters(samples)
	f.PeakAnonMB, f.PeakFileMB = rssPeakParts(samples)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return f, errors.New("bench: no rusage on this system")
	}
	f.PeakRSSMB = float64(ru.Maxrss) / 1024 // Linux reports KiB
	f.CPUMicros = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3 / float64(versions)
	if f.DiskBytes, err = dirBytes(dir); err != nil {
		return f, err
	}
	out, err := exec.CommandContext(ctx, minca, "store", "stats", "--store", url).Output()
	if err != nil {
		return f, fmt.Errorf("bench: %s store stats: %w", minca, err)
	}
	var st struct{ EnvelopeBytes, BodyBytes int64 }
	if err := json.Unmarshal(out, &st); err != nil {
		return f, fmt.Errorf("bench: store stats: %w", err)
	}
	f.LogicalBytes = st.EnvelopeBytes + st.BodyBytes
	if kind == "pebble" {
		if f.SettledBytes, err = settledBytes(ctx, dir); err != nil {
			return f, err
		}
	}
	return f, nil
}

// settledBytes flushes and compacts the Pebble store in dir and returns
// the size of its files after.
func settledBytes(ctx context.Context, dir string) (int64, error) {
	kv, err := pebble.Open(dir, &pebble.Options{MustExist: true})
	if err != nil {
		return 0, fmt.Errorf("bench: settle the store: %w", err)
	}
	err = kv.Compact(ctx)
	if err = errors.Join(err, kv.Close()); err != nil {
		return 0, fmt.Errorf("bench: settle the store: %w", err)
	}
	return dirBytes(dir)
}

// dirBytes is the size of every regular file under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
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
