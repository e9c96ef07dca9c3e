package bench

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/internal/p256"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// ImportConfig configures [RunImport].
type ImportConfig struct {
	// Corpus is the file of versions (JSON lines) to import; when empty a
	// corpus of CorpusConfig is written to Dir first.
	Corpus       string
	CorpusConfig CorpusConfig
	// Dir is where stores (and a generated corpus) go; default a new
	// temporary directory, removed afterwards.
	Dir string
	// Rounds is how many imports per backend, and bound measurements; the
	// medians are reported. Default 3.
	Rounds int
	// Batch is how many versions one Admit takes. Default (0) each
	// backend's own (engine.Store.ImportBatch), as `minca store import`
	// takes: 1,000 on Pebble, 2,000 on SQLite.
	Batch int
	// Stores are the backends imported into, each "pebble" or "sqlite";
	// default both. A backend left out reports zero figures.
	Stores []string
	// Progress, if set, is told of each step as it starts.
	Progress Progress
}

// ImportResult is what [RunImport] measured: versions per second through
// full admission (parse, the judge's checks on every core, decide, synced
// commit) on Pebble and SQLite, against the rate of bare ECDSA verifies of
// the same versions on every core (SHA-256 of the signed part and
// crypto/ecdsa.Verify), measured in the same run; and against the same
// verifies by the engine's own verifier (internal/p256, each author's
// table built beforehand, as a long import has them). Goals: Pebble ≥
// 0.80, SQLite ≥ 0.45 of the crypto/ecdsa bound.
type ImportResult struct {
	Versions        int     `json:"versions"`
	Cores           int     `json:"cores"`
	Rounds          int     `json:"rounds"`
	BoundPerSec     float64 `json:"boundPerSecond"`     // versions/s, crypto/ecdsa
	FastBoundPerSec float64 `json:"fastBoundPerSecond"` // versions/s, internal/p256
	PebblePerS      float64 `json:"pebblePerSecond"`    // versions/s
	SQLitePerS      float64 `json:"sqlitePerSecond"`    // versions/s
	PebbleRatio     float64 `json:"pebbleRatio"`        // against crypto/ecdsa
	SQLiteRatio     float64 `json:"sqliteRatio"`
	PebbleFastRatio float64 `json:"pebbleFastRatio"` // against internal/p256
	SQLiteFastRatio float64 `json:"sqliteFastRatio"`
	// The CPU time (every thread, user and system) a bare crypto/ecdsa
	// verify takes over the CPU time an import takes a version: what the
	// ratio would be were every core busy with the import, as they are
	// with the bound; a shared machine's load moves it much less.
	PebbleCPURatio float64 `json:"pebbleCpuRatio"`
	SQLiteCPURatio float64 `json:"sqliteCpuRatio"`
	// CPU time a version: the bound's verifies and the imports.
	BoundCPUMicros     float64 `json:"boundCpuMicros"`
	FastBoundCPUMicros float64 `json:"fastBoundCpuMicros"`
	PebbleCPUMicros    float64 `json:"pebbleCpuMicros"`
	SQLiteCPUMicros    float64 `json:"sqliteCpuMicros"`
}

// RunImport measures import throughput against the verify bound.
func RunImport(ctx context.Context, cfg ImportConfig) (ImportResult, error) {
	var res ImportResult
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	usePebble, useSQLite, err := importStores(cfg.Stores)
	if err != nil {
		return res, err
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-import-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	perRound := 1
	for _, use := range []bool{usePebble, useSQLite} {
		if use {
			perRound++
		}
	}
	steps := newSteps(cfg.Progress, 1+perRound*cfg.Rounds)
	steps.next("corpus")
	corpus, err := corpusIn(ctx, dir, cfg.Corpus, cfg.CorpusConfig)
	if err != nil {
		return res, err
	}
	data, err := os.ReadFile(corpus)
	if err != nil {
		return res, err
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	res.Versions, res.Cores, res.Rounds = len(lines), runtime.GOMAXPROCS(0), cfg.Rounds
	jobs, err := verifyJobs(lines)
	if err != nil {
		return res, err
	}
	var bound, fast, peb, sql, pr, sr, pfr, sfr []float64
	var bcpu, fcpu, pcpu, scpu, pcr, scr []float64
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d of %d: bare verify", r+1, cfg.Rounds))
		b, bc, err := bareVerifyRate(jobs, false)
		if err != nil {
			return res, err
		}
		f, fc, err := bareVerifyRate(jobs, true)
		if err != nil {
			return res, err
		}
		bound, fast, bcpu, fcpu = append(bound, b), append(fast, f), append(bcpu, bc), append(fcpu, fc)
		if usePebble {
			steps.next(fmt.Sprintf("round %d of %d: Pebble import", r+1, cfg.Rounds))
			p, pc, err := importRate(ctx, lines, cfg.Batch, func() (engine.KV, error) {
				return pebble.Open(filepath.Join(dir, fmt.Sprintf("pebble-%d", r)), nil)
			})
			if err != nil {
				return res, fmt.Errorf("bench: pebble import: %w", err)
			}
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("pebble-%d", r)))
			peb, pr, pfr, pcpu, pcr = append(peb, p), append(pr, p/b), append(pfr, p/f), append(pcpu, pc), append(pcr, bc/pc)
		}
		if useSQLite {
			steps.next(fmt.Sprintf("round %d of %d: SQLite import", r+1, cfg.Rounds))
			s, sc, err := importRate(ctx, lines, cfg.Batch, func() (engine.KV, error) {
				return sqlite.Open(filepath.Join(dir, fmt.Sprintf("sqlite-%d", r), "store.db"), nil)
			})
			if err != nil {
				return res, fmt.Errorf("bench: sqlite import: %w", err)
			}
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("sqlite-%d", r)))
			sql, sr, sfr, scpu, scr = append(sql, s), append(sr, s/b), append(sfr, s/f), append(scpu, sc), append(scr, bc/sc)
		}
	}
	res.PebbleCPURatio, res.SQLiteCPURatio = median(pcr), median(scr)
	res.BoundCPUMicros, res.FastBoundCPUMicros = median(bcpu), median(fcpu)
	res.PebbleCPUMicros, res.SQLiteCPUMicros = median(pcpu), median(scpu)
	res.BoundPerSec, res.FastBoundPerSec, res.PebblePerS, res.SQLitePerS = median(bound), median(fast), median(peb), median(sql)
	res.PebbleRatio, res.SQLiteRatio = median(pr), median(sr)
	res.PebbleFastRatio, res.SQLiteFastRatio = median(pfr), median(sfr)
	return res, nil
}

// importStores says which backends ImportConfig.Stores names: both when
// it is empty.
func importStores(stores []string) (usePebble, useSQLite bool, err error) {
	if len(stores) == 0 {
		return true, true, nil
	}
	for _, s := range stores {
		switch s {
		case "pebble":
			usePebble = true
		case "sqlite":
			useSQLite = true
		default:
			return false, false, fmt.Errorf("bench: ImportConfig.Stores: %q is not pebble or sqlite", s)
		}
	}
	return usePebble, useSQLite, nil
}

type verifyJob struct {
	pub     *ecdsa.PublicKey
	fast    *p256.PublicKey
	payload []byte
	sig     []byte
	r, s    *big.Int
}

func verifyJobs(lines [][]byte) ([]verifyJob, error) {
	jobs := make([]verifyJob, len(lines))
	type key struct {
		pub  *ecdsa.PublicKey
		fast *p256.PublicKey
	}
	keys := map[string]key{}
	for i, l := range lines {
		v, err := record.Decode(l)
		if err != nil {
			return nil, err
		}
		k, ok := keys[v.Author]
		if !ok {
			id, err := identity.ParseDID(v.Author)
			if err != nil {
				return nil, err
			}
			k.pub = id.ECDSA()
			b, err := k.pub.Bytes()
			if err != nil {
				return nil, err
			}
			if k.fast, err = p256.Precompute(b); err != nil {
				return nil, err
			}
			keys[v.Author] = k
		}
		payload, err := v.SignedPart()
		if err != nil {
			return nil, err
		}
		sig, err := base64.RawURLEncoding.DecodeString(v.Signature)
		if err != nil || len(sig) != 64 {
			return nil, fmt.Errorf("bench: signature of %s", v.ID)
		}
		jobs[i] = verifyJob{k.pub, k.fast, payload, sig, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])}
	}
	return jobs, nil
}

// bareVerifyRate verifies every version's signature (SHA-256 of the signed
// part, crypto/ecdsa.Verify, or with fast internal/p256's Verify and the
// author's table) on GOMAXPROCS goroutines; versions per second. A
// signature that does not verify is an error: the corpus is not what the
// suite made.
func bareVerifyRate(jobs []verifyJob, fast bool) (rate, cpuMicros float64, err error) {
	var next atomic.Int64
	var bad atomic.Int64
	var wg sync.WaitGroup
	start, cpu := time.Now(), cputime.Process()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				j := &jobs[i]
				d := sha256.Sum256(j.payload)
				if fast && !j.fast.Verify(d[:], j.sig) || !fast && !ecdsa.Verify(j.pub, d[:], j.r, j.s) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		return 0, 0, fmt.Errorf("bench: %d corpus signatures do not verify", n)
	}
	return float64(len(jobs)) / time.Since(start).Seconds(), micros(cputime.Process()-cpu, len(jobs)), nil
}

// micros is d a version, in µs.
func micros(d time.Duration, versions int) float64 {
	return float64(d.Microseconds()) / float64(versions)
}

// importRate imports lines into a new store the way `minca store import`
// does — decode on one goroutine, the judge's checks of the next batch on
// every core while this one is decided and committed — and returns
// versions per second, from the first line read to the last commit, and
// the process's CPU time a version meanwhile.
func importRate(ctx context.Context, lines [][]byte, batch int, open func() (engine.KV, error)) (rate, cpuMicros float64, err error) {
	kv, err := open()
	if err != nil {
		return 0, 0, err
	}
	st, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		kv.Close()
		return 0, 0, err
	}
	defer st.Close()
	if batch <= 0 {
		batch = st.ImportBatch()
	}
	start, cpu := time.Now(), cputime.Process()
	n, err := Import(ctx, st, "bench", lines, batch)
	if err != nil {
		return 0, 0, err
	}
	rate = float64(len(lines)) / time.Since(start).Seconds()
	cpuMicros = micros(cputime.Process()-cpu, len(lines))
	if n != len(lines) {
		return 0, 0, fmt.Errorf("%d of %d versions stood", n, len(lines))
	}
	return rate, cpuMicros, nil
}

// Import admits JSON lines into st in batches, pipelined as the import verb
// does (engine.Pipeline: decode and check the next batch on every core,
// decide one while the one before commits), and returns how many stood.
func Import(ctx context.Context, st *engine.Store, from string, lines [][]byte, batch int) (int, error) {
	stood := 0
	p := engine.NewPipeline(ctx, st, from, engine.Stages[[][]byte]{
		Versions: func(_ context.Context, ls [][]byte) ([]*record.Version, error) {
			vs := make([]*record.Version, 0, len(ls))
			for _, l := range ls {
				v, err := record.Decode(l)
				if err != nil {
					return nil, err
				}
				vs = append(vs, v)
			}
			return vs, nil
		},
		Done: func(_ [][]byte, r engine.Result) error {
			for _, o := range r.Outcomes {
				if o.Verdict == engine.Stands {
					stood++
				}
			}
			return r.Err
		},
	})
	for i := 0; i < len(lines); i += batch {
		if err := p.Add(ctx, lines[i:min(i+batch, len(lines))]); err != nil {
			p.Close()
			return stood, err
		}
	}
	err := p.Close()
	return stood, err
}
