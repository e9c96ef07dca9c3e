package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
)

// BenchmarkSyncInto syncs a corpus of b.N versions (one space) over
// loopback WebSocket from a node holding it into an empty one, as `minca
// bench sync` measures against an import (for profiling: go test -bench
// SyncInto -benchtime 100000x, with MINCA_BENCH_PROFILE=FILE for a CPU
// profile of the sync alone, not of making the corpus and the source).
// Only the sync is timed; both nodes run in this process, as in the
// benchmark.
func BenchmarkSyncInto(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	lines, sp := syncCorpus(b, dir)
	src, err := openSourceStore(b, filepath.Join(dir, "source"))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if err := importAll(ctx, src, lines, 1000, len(lines)); err != nil {
		b.Fatal(err)
	}
	p, err := newPeers(syncHost{src, []string{sp}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	url, stop, err := listenPeers(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	st, err := openBenchStore(filepath.Join(dir, "sync"), &judge.Judge{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	defer profileCPU(b)()
	sum, err := syncOnce(ctx, syncHost{st, []string{sp}}, url)
	// The corpus stays reachable through the sync, as in `minca bench
	// sync` (its rounds import it again) and in BenchmarkSyncImport: its
	// bytes raise the collector's goal alike in both.
	runtime.KeepAlive(lines)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Received != int64(len(lines)) {
		b.Fatalf("received %d of %d versions", sum.Received, len(lines))
	}
}

// openSourceStore opens the store the sync reads from: with Pebble's
// block cache at $MINCA_BENCH_SOURCE_CACHE bytes where it is set (what
// the sender's reads cost with a cache holding more of the store), else
// as openBenchStore does.
func openSourceStore(b *testing.B, path string) (*engine.Store, error) {
	v := os.Getenv("MINCA_BENCH_SOURCE_CACHE")
	if v == "" {
		return openBenchStore(path, &judge.Judge{})
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		b.Fatalf("MINCA_BENCH_SOURCE_CACHE=%q: want a positive byte count", v)
	}
	return openBenchStoreWith(path, &pebble.Options{CacheSize: n}, &judge.Judge{})
}

// BenchmarkSyncImport is BenchmarkSyncInto's bound, as `minca bench sync`
// takes it: the same corpus imported into an empty store (batches of
// 1,000, pipelined), profiled the same way (MINCA_BENCH_PROFILE=FILE).
func BenchmarkSyncImport(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	lines, _ := syncCorpus(b, dir)
	st, err := openBenchStore(filepath.Join(dir, "import"), &judge.Judge{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	defer profileCPU(b)()
	if err := importAll(ctx, st, lines, 1000, len(lines)); err != nil {
		b.Fatal(err)
	}
}

// syncCorpus makes the sync benchmark's corpus of b.N versions in one
// space: its lines and the space.
func syncCorpus(b *testing.B, dir string) ([][]byte, string) {
	path, err := corpusIn(context.Background(), dir, "", CorpusConfig{Versions: b.N, Spaces: 1, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	lines, err := readLines(path)
	if err != nil {
		b.Fatal(err)
	}
	sp, err := spaceOf(lines[0])
	if err != nil {
		b.Fatal(err)
	}
	return lines, sp
}

// profileCPU starts a CPU profile into the file MINCA_BENCH_PROFILE names,
// when it names one, and returns what stops it. With
// MINCA_BENCH_ALLOCS=FILE it also writes the heap profile (allocations
// counted since the process began) to FILE.start here and to FILE when
// stopped: `go tool pprof -sample_index=alloc_space -base FILE.start
// FILE` is what was allocated in between.
func profileCPU(b *testing.B) func() {
	allocs := os.Getenv("MINCA_BENCH_ALLOCS")
	if allocs != "" {
		writeHeap(b, allocs+".start")
	}
	f := os.Getenv("MINCA_BENCH_PROFILE")
	if f == "" {
		return func() {
			if allocs != "" {
				writeHeap(b, allocs)
			}
		}
	}
	out, err := os.Create(f)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
		if allocs != "" {
			writeHeap(b, allocs)
		}
	}
}

// writeHeap writes the heap profile to path, after a collection (the
// profile's counts are as of the last one).
func writeHeap(b *testing.B, path string) {
	runtime.GC()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if err := pprof.Lookup("heap").WriteTo(out, 0); err != nil {
		b.Fatal(err)
	}
}
