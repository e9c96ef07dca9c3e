package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// MirrorConfig configures [RunMirror].
type MirrorConfig struct {
	// Versions in the store backed up. Default 100,000.
	Versions int
	// Edits is the average number of versions per record. Default 3.
	Edits float64
	// Segments is how many segments the listing benchmark puts in a
	// folder. Default 10,000.
	Segments int
	// Rounds: each measurement is taken this many times; medians are
	// reported. Default 3.
	Rounds int
	// Dir holds the stores and folders; default a new temporary directory,
	// removed afterwards.
	Dir string
	// S3 is an S3 store URL (s3://BUCKET/PREFIX?endpoint=…, credentials
	// from the environment) with nothing under its prefix: the backup is
	// also made there and restored from it, counting requests. Default ""
	// leaves the S3 figures out. The suite starts no S3 server of its own,
	// so the minca binary links no fake one; its test runs one in process.
	S3 string
	// S3Options open the S3 store (timeouts, a logger for retries); Create
	// is set. Default nil: the s3 package's defaults.
	S3Options *s3.Options
	// Progress, if set, is told of each step as it starts.
	Progress Progress
}

// MirrorResult is what [RunMirror] measured (issue 6, Performance).
type MirrorResult struct {
	Versions int `json:"versions"`
	Rounds   int `json:"rounds"`
	// RawBytes is the size of the held versions as JSON lines (`store
	// export`): the bound segment bytes are compared with.
	RawBytes     int64   `json:"rawBytes"`
	SegmentBytes int64   `json:"segmentBytes"`
	Segments     int     `json:"segments"`
	BytesRatio   float64 `json:"bytesRatio"` // SegmentBytes / RawBytes; goal ≤ 0.35
	// Requests per 1,000 versions made to the S3 store of
	// MirrorConfig.S3 (counted by the client, retries not counted) by a
	// backup and by a restore; absent without one.
	BackupRequestsPer1k  float64 `json:"backupRequestsPer1k,omitempty"`
	RestoreRequestsPer1k float64 `json:"restoreRequestsPer1k,omitempty"`
	// Restore from a folder into a new Pebble store, against importing the
	// same versions from a local JSON-lines file into a new Pebble store as
	// `minca store import` does, in the same batches; medians. Goal ≤ 1.3.
	RestoreSeconds    float64 `json:"restoreSeconds"`
	FileImportSeconds float64 `json:"fileImportSeconds"`
	RestoreRatio      float64 `json:"restoreRatio"`
	// Listing a folder of Segments segments (every name, as the mirror's
	// full rescan does), against a bare filepath.WalkDir of the same tree.
	ListSegments int     `json:"listSegments"`
	ListMillis   float64 `json:"listMs"`
	WalkMillis   float64 `json:"walkMs"`
	ListRatio    float64 `json:"listRatio"`
}

func (c *MirrorConfig) defaults() {
	if c.Versions <= 0 {
		c.Versions = 100_000
	}
	if c.Edits <= 0 {
		c.Edits = 3
	}
	if c.Segments <= 0 {
		c.Segments = 10_000
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
}

// RunMirror measures backups and restores through segments.
func RunMirror(ctx context.Context, cfg MirrorConfig) (MirrorResult, error) {
	cfg.defaults()
	res := MirrorResult{Rounds: cfg.Rounds, ListSegments: cfg.Segments}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-mirror-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	steps := newSteps(cfg.Progress, 5+2*cfg.Rounds)
	steps.next("filling the store")
	src, err := openBenchStore(filepath.Join(dir, "src"), &judge.Judge{})
	if err != nil {
		return res, err
	}
	defer src.Close()
	if err := fillStore(ctx, src, cfg); err != nil {
		return res, err
	}
	// The held versions as a local file: the raw bound and the baseline.
	steps.next("export to a file")
	held := filepath.Join(dir, "held.jsonl")
	if err := exportFile(ctx, src, held); err != nil {
		return res, err
	}
	fi, err := os.Stat(held)
	if err != nil {
		return res, err
	}
	res.RawBytes = fi.Size()

	// Backup to a folder: what a version costs in segments.
	steps.next("backup to a folder")
	fb, err := folder.Open(filepath.Join(dir, "folder"), &folder.Options{Create: true})
	if err != nil {
		return res, err
	}
	out, err := backup(ctx, src, fb)
	if err != nil {
		return res, err
	}
	res.Versions, res.Segments, res.SegmentBytes = out.Versions, len(out.Segments), out.Bytes
	res.BytesRatio = float64(out.Bytes) / float64(res.RawBytes)

	// Backup to and restore from S3, counting requests.
	if cfg.S3 != "" {
		steps.next("backup to and restore from S3")
		if err := s3Requests(ctx, src, cfg.S3, cfg.S3Options, &res); err != nil {
			return res, err
		}
	}

	var rs, fs, ratios []float64
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d of %d: restore", r+1, cfg.Rounds))
		t, err := timed(func() error { return restoreInto(ctx, filepath.Join(dir, fmt.Sprint("restore-", r)), fb) })
		if err != nil {
			return res, fmt.Errorf("bench: restore: %w", err)
		}
		steps.next(fmt.Sprintf("round %d of %d: file import", r+1, cfg.Rounds))
		f, err := timed(func() error { return importFile(ctx, filepath.Join(dir, fmt.Sprint("file-", r)), held) })
		if err != nil {
			return res, fmt.Errorf("bench: file import: %w", err)
		}
		rs, fs, ratios = append(rs, t), append(fs, f), append(ratios, t/f)
		os.RemoveAll(filepath.Join(dir, fmt.Sprint("restore-", r)))
		os.RemoveAll(filepath.Join(dir, fmt.Sprint("file-", r)))
	}
	res.RestoreSeconds, res.FileImportSeconds, res.RestoreRatio = median(rs), median(fs), median(ratios)

	steps.next("listing")
	if err := listing(ctx, filepath.Join(dir, "many"), cfg, &res); err != nil {
		return res, err
	}
	return res, nil
}

// fillStore admits a corpus: records edited Edits times on average, some
// deleted, over 4 spaces.
func fillStore(ctx context.Context, st *engine.Store, cfg MirrorConfig) error {
	var batch []*record.Version
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := st.Admit(ctx, "bench", batch)
		batch = batch[:0]
		return err
	}
	for sp := range 4 {
		n := cfg.Versions / 4
		err := corpus.Generate(corpus.SpaceID(fmt.Sprint("mirror bench ", sp)), corpus.Options{Versions: n, Edits: cfg.Edits, Seed: uint64(sp + 1)}, func(v *record.Version) error {
			batch = append(batch, v)
			if len(batch) == 2000 {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return flush()
}

func exportFile(ctx context.Context, st *engine.Store, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for b, err := range st.ExportJSON(ctx, "") {
		if err != nil {
			f.Close()
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func backup(ctx context.Context, st *engine.Store, b engine.Blobs) (mirror.ExportResult, error) {
	m, err := mirror.New(st, b, nil)
	if err != nil {
		return mirror.ExportResult{}, err
	}
	defer m.Close()
	return m.Export(ctx)
}

func restoreInto(ctx context.Context, path string, b engine.Blobs) error {
	st, err := openBenchStore(path, &judge.Judge{})
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := mirror.New(st, b, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = m.Import(ctx)
	return err
}

// importFile admits the versions of a JSON-lines file into a new store as
// `minca store import` does ([Import]: decoding and the judge's checks of
// the next batch overlap the commit of this one), in the batches the
// mirror uses.
func importFile(ctx context.Context, path, file string) error {
	st, err := openBenchStore(path, &judge.Judge{})
	if err != nil {
		return err
	}
	defer st.Close()
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	_, err = Import(ctx, st, "file", bytes.Split(bytes.TrimSpace(data), []byte("\n")), 2000)
	return err
}

func timed(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return time.Since(start).Seconds(), err
}

func s3Requests(ctx context.Context, src *engine.Store, url string, opts *s3.Options, res *MirrorResult) error {
	var o s3.Options
	if opts != nil {
		o = *opts
	}
	o.Create = true
	b, err := s3.Open(ctx, url, &o)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// A prefix holding segments already would add their reads to the
	// restore's count, and mix another store's versions into this one's.
	if l, err := b.List(ctx, "segments/", "", 1); err != nil {
		return fmt.Errorf("bench: %w", err)
	} else if len(l) > 0 {
		return fmt.Errorf("bench: %s already holds %s: give the S3 suite an empty prefix", url, l[0].Name)
	}
	requests := func() int64 {
		c := b.Counts()
		return c.List.Load() + c.Get.Load() + c.Head.Load() + c.Put.Load() + c.Delete.Load()
	}
	start := requests()
	out, err := backup(ctx, src, b)
	if err != nil {
		return err
	}
	res.BackupRequestsPer1k = float64(requests()-start) * 1000 / float64(out.Versions)
	dst, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		return err
	}
	defer dst.Close()
	m, err := mirror.New(dst, b, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	start = requests()
	if _, err := m.Import(ctx); err != nil {
		return err
	}
	res.RestoreRequestsPer1k = float64(requests()-start) * 1000 / float64(out.Versions)
	return nil
}

// listing fills a folder with Segments small segment files over 8 writers
// and times a full listing against a bare directory walk.
func listing(ctx context.Context, root string, cfg MirrorConfig, res *MirrorResult) error {
	b, err := folder.Open(root, &folder.Options{Create: true})
	if err != nil {
		return err
	}
	for i := 0; i < cfg.Segments; i++ {
		w := fmt.Sprintf("writer%cabcdefghijklm", 'a'+i%8) // a writer id: 20 of [a-z2-7]
		name := fmt.Sprintf("segments/%s/%012d-%032x.seg", w, i+1, i)
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			return err
		}
	}
	var ls, ws, ratios []float64
	for range cfg.Rounds {
		n := 0
		l, err := timed(func() error {
			after := ""
			for {
				page, err := b.List(ctx, "segments/", after, 1000)
				if err != nil {
					return err
				}
				n += len(page)
				if len(page) < 1000 {
					return nil
				}
				after = page[len(page)-1].Name
			}
		})
		if err != nil {
			return err
		}
		if n != cfg.Segments {
			return fmt.Errorf("bench: listed %d of %d segments", n, cfg.Segments)
		}
		w, err := timed(func() error { return walk(root) })
		if err != nil {
			return err
		}
		ls, ws, ratios = append(ls, l*1000), append(ws, w*1000), append(ratios, l/w)
	}
	res.ListMillis, res.WalkMillis, res.ListRatio = median(ls), median(ws), median(ratios)
	return nil
}

// walk visits every file under root, as the bound for listing.
func walk(root string) error {
	n := 0
	return filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
}
