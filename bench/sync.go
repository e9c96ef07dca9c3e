package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/store"
	"github.com/minca-go/minca/transport"
)

// SyncConfig configures [RunSync].
type SyncConfig struct {
	// Dir is where the stores go; default a new temporary directory.
	Dir string
	// Versions is how many versions sync into an empty node, against
	// importing them. Default 100,000.
	Versions int
	// Big is how many versions each of two stores holds, 1% of them
	// different, for the wire-bytes measure. Default 200,000.
	Big int
	// Live is how many versions the push latency is measured on.
	// Default 300.
	Live int
	// Peers and Writers shape the fan-out case: one server, Peers
	// connected, Writers of them writing PerWriter versions each.
	// Defaults 200, 20, 25.
	Peers, Writers, PerWriter int
	// Rounds is how many rounds of the first measure; medians. Default 3.
	Rounds int
	// Progress, if set, is told as each step starts.
	Progress Progress
}

// SyncResult is what [RunSync] measured.
type SyncResult struct {
	Cores int `json:"cores"`
	// Versions into an empty node over loopback WebSocket (minca sync's
	// path: negentropy, WANT, VERSIONS, the judge, synced commits),
	// against importing the same versions into an empty store in the same
	// run (goal: sync time ≤ 1.25 × import time).
	Versions      int     `json:"versions"`
	ImportSeconds float64 `json:"importSeconds"`
	SyncSeconds   float64 `json:"syncSeconds"`
	SyncRatio     float64 `json:"syncOverImport"`
	// The same in CPU seconds of the process (both nodes' when syncing),
	// medians: on a machine others load, what the work cost rather than
	// how long it waited for a core.
	ImportCPUSeconds float64 `json:"importCPUSeconds"`
	SyncCPUSeconds   float64 `json:"syncCPUSeconds"`
	SyncCPURatio     float64 `json:"syncOverImportCPU"`
	// Two stores of Big versions each, 1% different: the bytes on the
	// wire both ways against negentropy's own bytes plus the missing
	// versions' bytes (goal ≤ 1.1), and how long it took.
	Big          int     `json:"big"`
	Missing      int     `json:"missing"`
	WireBytes    int64   `json:"wireBytes"`
	NegBytes     int64   `json:"negentropyBytes"`
	MissingBytes int64   `json:"missingBytes"`
	WireRatio    float64 `json:"wireRatio"`
	DiffSeconds  float64 `json:"diffSeconds"`
	DiffRounds   int64   `json:"diffRounds"`
	// Live push: from a version committed on one node to the event of
	// its commit on the other.
	LiveWSP50Ms     float64 `json:"liveWebSocketP50Ms"`
	LiveWSP99Ms     float64 `json:"liveWebSocketP99Ms"`
	LiveWebRTCP50Ms float64 `json:"liveWebRTCP50Ms"`
	LiveWebRTCP99Ms float64 `json:"liveWebRTCP99Ms"`
	// One server, Peers connected, Writers writing: versions the server
	// took in a second, copies delivered to every peer a second, CPU
	// seconds for each wall second and the peak heap — of the whole
	// process, the peers' stores and sessions included.
	Peers            int     `json:"peers"`
	Writers          int     `json:"writers"`
	FanoutVersions   int     `json:"fanoutVersions"`
	ServerPerSecond  float64 `json:"serverVersionsPerSecond"`
	DeliveredPerSec  float64 `json:"deliveredPerSecond"`
	FanoutSeconds    float64 `json:"fanoutSeconds"`
	CPUPerWallSecond float64 `json:"cpuPerWallSecond"`
	PeakHeapMiB      float64 `json:"peakHeapMiB"`
	// BaseHeapMiB is the heap with every store open and every session
	// up, before the writes: the peers' stores (memory: stores, a
	// memtable each) are most of it.
	BaseHeapMiB float64 `json:"baseHeapMiB"`
}

func (c *SyncConfig) fill() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.Versions, 100_000)
	def(&c.Big, 200_000)
	def(&c.Live, 300)
	def(&c.Peers, 200)
	def(&c.Writers, 20)
	def(&c.PerWriter, 25)
	def(&c.Rounds, 3)
}

// syncHost is a bench store as a sync host: every peer may read its
// spaces, which are fixed.
type syncHost struct {
	st     *engine.Store
	spaces []string
}

func (h syncHost) Store() *engine.Store                                          { return h.st }
func (h syncHost) Spaces(context.Context) ([]string, error)                      { return h.spaces, nil }
func (h syncHost) MayRead(context.Context, string, transport.Peer) (bool, error) { return true, nil }

func newPeers(h peers.Host, relays []string) (*peers.Peers, error) {
	k, err := identity.GenerateKey()
	if err != nil {
		return nil, err
	}
	return peers.New(h, &peers.Options{Transport: &transport.Options{Self: transport.Carrier(k)}, Relays: relays,
		WebRTC: &transport.WebRTCOptions{LoopbackOnly: true},
		Redial: &transport.RedialOptions{Min: 10 * time.Millisecond, Max: 500 * time.Millisecond},
		Reopen: 50 * time.Millisecond, Rescan: 200 * time.Millisecond})
}

// listenPeers serves p's endpoint on a loopback port, for as many peers
// on this one machine (one address) as the fan-out case runs.
func listenPeers(ctx context.Context, p *peers.Peers) (string, func(), error) {
	srv, err := p.Handler(ctx, &transport.ServerOptions{MaxConns: 4096, MaxConnsPerAddr: 4096, MaxHandshakes: 1024, MaxHandshakesPerAddr: 1024, ConnBurstPerAddr: 4096})
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(transport.PathPeer, srv)
	ln, err := transport.Listen("127.0.0.1:0", mux, &transport.ListenOptions{MaxConns: 8192, MaxConnsPerAddr: 8192})
	if err != nil {
		srv.Close()
		return "", nil, err
	}
	return ln.URL(transport.PathPeer), func() { ln.Close(); srv.Close() }, nil
}

func readLines(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return bytes.Split(bytes.TrimSpace(data), []byte("\n")), nil
}

func spaceOf(line []byte) (string, error) {
	v, err := record.Decode(line)
	if err != nil {
		return "", err
	}
	return v.Space, nil
}

// RunSync measures sync between nodes.
func RunSync(ctx context.Context, cfg SyncConfig) (SyncResult, error) {
	cfg.fill()
	res := SyncResult{Cores: runtime.GOMAXPROCS(0), Versions: cfg.Versions, Big: cfg.Big, Peers: cfg.Peers, Writers: cfg.Writers}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-sync-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	steps := newSteps(cfg.Progress, 4+2*cfg.Rounds+4)
	steps.next("corpus")
	path, err := corpusIn(ctx, dir, "", CorpusConfig{Versions: cfg.Versions, Spaces: 1, Seed: 1})
	if err != nil {
		return res, err
	}
	lines, err := readLines(path)
	if err != nil {
		return res, err
	}
	sp, err := spaceOf(lines[0])
	if err != nil {
		return res, err
	}
	src, err := freshBenchStore(filepath.Join(dir, "source"), &judge.Judge{})
	if err != nil {
		return res, err
	}
	defer src.Close()
	if err := importAll(ctx, src, lines, 1000, len(lines)); err != nil {
		return res, err
	}
	sp0, err := newPeers(syncHost{src, []string{sp}}, nil)
	if err != nil {
		return res, err
	}
	defer sp0.Close() // before the store it serves
	url, stop, err := listenPeers(ctx, sp0)
	if err != nil {
		return res, err
	}
	defer stop()
	var imps, syncs, ratios, impCPUs, syncCPUs, cpuRatios []float64
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d of %d: import", r+1, cfg.Rounds))
		st, err := freshBenchStore(filepath.Join(dir, fmt.Sprintf("import-%d", r)), &judge.Judge{})
		if err != nil {
			return res, err
		}
		start, cpu := time.Now(), cputime.Process().Seconds()
		err = importAll(ctx, st, lines, 1000, len(lines))
		imp, impCPU := time.Since(start).Seconds(), cputime.Process().Seconds()-cpu
		st.Close()
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("import-%d", r)))
		if err != nil {
			return res, err
		}
		steps.next(fmt.Sprintf("round %d of %d: sync", r+1, cfg.Rounds))
		st, err = freshBenchStore(filepath.Join(dir, fmt.Sprintf("sync-%d", r)), &judge.Judge{})
		if err != nil {
			return res, err
		}
		start, cpu = time.Now(), cputime.Process().Seconds()
		sum, err := syncOnce(ctx, syncHost{st, []string{sp}}, url)
		sy, syCPU := time.Since(start).Seconds(), cputime.Process().Seconds()-cpu
		st.Close()
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("sync-%d", r)))
		if err != nil {
			return res, err
		}
		if sum.Received != int64(len(lines)) {
			return res, fmt.Errorf("bench: sync received %d of %d versions", sum.Received, len(lines))
		}
		imps, syncs, ratios = append(imps, imp), append(syncs, sy), append(ratios, sy/imp)
		impCPUs, syncCPUs, cpuRatios = append(impCPUs, impCPU), append(syncCPUs, syCPU), append(cpuRatios, syCPU/impCPU)
	}
	res.ImportSeconds, res.SyncSeconds, res.SyncRatio = median(imps), median(syncs), median(ratios)
	res.ImportCPUSeconds, res.SyncCPUSeconds, res.SyncCPURatio = median(impCPUs), median(syncCPUs), median(cpuRatios)

	steps.next("two stores 1% different")
	if err := diffCase(ctx, dir, cfg, &res); err != nil {
		return res, err
	}
	steps.next("live push over WebSocket")
	if res.LiveWSP50Ms, res.LiveWSP99Ms, err = liveCase(ctx, dir, cfg, false); err != nil {
		return res, err
	}
	steps.next("live push over WebRTC")
	if res.LiveWebRTCP50Ms, res.LiveWebRTCP99Ms, err = liveCase(ctx, dir, cfg, true); err != nil {
		return res, err
	}
	steps.next(fmt.Sprintf("one server, %d peers, %d writing", cfg.Peers, cfg.Writers))
	if err := fanoutCase(ctx, dir, cfg, &res); err != nil {
		return res, err
	}
	return res, nil
}

// syncOnce dials url and runs one reconciliation of h's spaces.
func syncOnce(ctx context.Context, h syncHost, url string) (peers.Summary, error) {
	p, err := newPeers(h, nil)
	if err != nil {
		return peers.Summary{}, err
	}
	defer p.Close()
	c, err := transport.Dial(ctx, url, p.TransportOptions())
	if err != nil {
		return peers.Summary{}, err
	}
	defer c.Close()
	sum, err := p.Sync(ctx, c, nil)
	if err == nil {
		for _, s := range sum.Spaces {
			if s.Code != peers.CodeDone {
				err = fmt.Errorf("bench: space %s ended %s: %s", s.Space, s.Code, s.Message)
			}
		}
	}
	return sum, err
}

func diffCase(ctx context.Context, dir string, cfg SyncConfig, res *SyncResult) error {
	extra := cfg.Big / 100
	path, err := corpusIn(ctx, filepath.Join(dir), "", CorpusConfig{Versions: cfg.Big + extra, Spaces: 1, Seed: 2})
	if err != nil {
		return err
	}
	lines, err := readLines(path)
	if err != nil {
		return err
	}
	os.Remove(path)
	sp, err := spaceOf(lines[0])
	if err != nil {
		return err
	}
	a, err := freshBenchStore(filepath.Join(dir, "diff-a"), &judge.Judge{})
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := freshBenchStore(filepath.Join(dir, "diff-b"), &judge.Judge{})
	if err != nil {
		return err
	}
	defer b.Close()
	// A holds the first Big versions, B the last Big: each lacks 1%. The
	// corpus writes each record's versions in order, so either end's
	// share has whole chains but at its edge, which waits (later).
	if _, err := Import(ctx, a, "bench", lines[:cfg.Big], 1000); err != nil {
		return err
	}
	if _, err := Import(ctx, b, "bench", lines[extra:], 1000); err != nil {
		return err
	}
	// What negentropy finds: the versions one store's sync order holds
	// and the other's does not (one waiting for what it lacks is not in
	// its order), and their bytes as kept.
	missing, count, err := symmetricDifference(ctx, a, b, sp)
	if err != nil {
		return err
	}
	pa, err := newPeers(syncHost{a, []string{sp}}, nil)
	if err != nil {
		return err
	}
	defer pa.Close()
	url, stop, err := listenPeers(ctx, pa)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	sum, err := syncOnce(ctx, syncHost{b, []string{sp}}, url)
	if err != nil {
		return err
	}
	res.DiffSeconds = time.Since(start).Seconds()
	res.Missing = count
	res.WireBytes = sum.WireSent + sum.WireReceived
	res.NegBytes, res.MissingBytes, res.DiffRounds = sum.NegBytes, missing, sum.Rounds
	res.WireRatio = float64(res.WireBytes) / float64(res.NegBytes+missing)
	return nil
}

// liveCase measures push latency between two stores kept in sync live,
// over a WebSocket, or over WebRTC through a relay.
func liveCase(ctx context.Context, dir string, cfg SyncConfig, webrtc bool) (p50, p99 float64, err error) {
	tag := "ws"
	if webrtc {
		tag = "rtc"
	}
	path, err := corpusIn(ctx, filepath.Join(dir), "", CorpusConfig{Versions: cfg.Live, Spaces: 1, Seed: 3})
	if err != nil {
		return 0, 0, err
	}
	lines, err := readLines(path)
	if err != nil {
		return 0, 0, err
	}
	os.Remove(path)
	sp, err := spaceOf(lines[0])
	if err != nil {
		return 0, 0, err
	}
	a, err := freshBenchStore(filepath.Join(dir, "live-a-"+tag), &judge.Judge{})
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	b, err := freshBenchStore(filepath.Join(dir, "live-b-"+tag), &judge.Judge{})
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var relays []string
	if webrtc {
		r, err := transport.NewRelay(&transport.Options{Self: transport.Carrier(mustBenchKey())}, nil)
		if err != nil {
			return 0, 0, err
		}
		defer r.Close()
		mux := http.NewServeMux()
		mux.Handle(transport.PathRelay, r)
		ln, err := transport.Listen("127.0.0.1:0", mux, nil)
		if err != nil {
			return 0, 0, err
		}
		defer ln.Close()
		relays = []string{ln.URL(transport.PathRelay)}
	}
	pa, err := newPeers(syncHost{a, []string{sp}}, relays)
	if err != nil {
		return 0, 0, err
	}
	defer pa.Close()
	pb, err := newPeers(syncHost{b, []string{sp}}, relays)
	if err != nil {
		return 0, 0, err
	}
	defer pb.Close()
	if webrtc {
		for _, p := range []*peers.Peers{pa, pb} {
			wg.Add(1)
			go func() { defer wg.Done(); p.Run(lctx) }()
		}
	} else {
		url, stop, err := listenPeers(lctx, pa)
		if err != nil {
			return 0, 0, err
		}
		defer stop()
		c, err := transport.Dial(ctx, url, pb.TransportOptions())
		if err != nil {
			return 0, 0, err
		}
		wg.Add(1)
		go func() { defer wg.Done(); pb.Serve(lctx, c, true, "dial") }()
	}
	sub := b.Subscribe(sp, 1<<14)
	defer sub.Close()
	// Wait for the session: the first version is taken, and not timed.
	var lats []float64
	for i, l := range lines {
		v, err := record.Decode(l)
		if err != nil {
			return 0, 0, err
		}
		if _, err := a.Admit(ctx, "bench", []*record.Version{v}); err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		timeout := time.After(30 * time.Second)
	wait:
		for {
			select {
			case ev := <-sub.Events():
				if ev.Kind == engine.EventAdmitted && ev.ID == v.ID {
					break wait
				}
			case <-timeout:
				return 0, 0, fmt.Errorf("bench: live push (%s): version %d did not arrive", tag, i)
			}
		}
		if i > 0 {
			lats = append(lats, ms(time.Since(t0)))
		}
	}
	slices.Sort(lats)
	return lats[len(lats)/2], lats[len(lats)*99/100], nil
}

func mustBenchKey() *identity.PrivateKey {
	k, err := identity.GenerateKey()
	if err != nil {
		panic(err)
	}
	return k
}

// fanoutCase: one server, Peers peers on memory stores connected live,
// Writers of them each writing PerWriter versions as fast as they commit.
func fanoutCase(ctx context.Context, dir string, cfg SyncConfig, res *SyncResult) error {
	n := cfg.Writers * cfg.PerWriter
	path, err := corpusIn(ctx, filepath.Join(dir), "", CorpusConfig{Versions: n, Spaces: 1, Seed: 4})
	if err != nil {
		return err
	}
	lines, err := readLines(path)
	if err != nil {
		return err
	}
	os.Remove(path)
	sp, err := spaceOf(lines[0])
	if err != nil {
		return err
	}
	res.FanoutVersions = len(lines)
	// One verdict cache for every store: each signature is checked once
	// in the process, as the peers would each on their own machines.
	vf := &record.Verifier{Cache: &record.VerdictCache{}}
	open := func() (*store.Store, error) {
		return store.Open(ctx, "memory:", &store.Options{Create: true, Judge: &judge.Judge{Verifier: vf}})
	}
	srvStore, err := open()
	if err != nil {
		return err
	}
	defer srvStore.Close()
	ps, err := newPeers(syncHost{srvStore.Engine(), []string{sp}}, nil)
	if err != nil {
		return err
	}
	defer ps.Close()
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	url, stop, err := listenPeers(lctx, ps)
	if err != nil {
		return err
	}
	defer stop()
	clients := make([]*engine.Store, cfg.Peers)
	var delivered atomic.Int64
	for i := range clients {
		st, err := open()
		if err != nil {
			return err
		}
		defer st.Close()
		clients[i] = st.Engine()
		p, err := newPeers(syncHost{st.Engine(), []string{sp}}, nil)
		if err != nil {
			return err
		}
		defer p.Close() // before st's Close, deferred above
		c, err := transport.Dial(ctx, url, p.TransportOptions())
		if err != nil {
			return err
		}
		sub := st.Engine().Subscribe(sp, 1<<16)
		wg.Add(2)
		go func() { defer wg.Done(); p.Serve(lctx, c, true, "dial") }()
		go func() {
			defer wg.Done()
			defer sub.Close()
			for {
				select {
				case <-lctx.Done():
					return
				case ev, ok := <-sub.Events():
					if !ok {
						return
					}
					if ev.Kind == engine.EventAdmitted {
						delivered.Add(1)
					}
				}
			}
		}()
	}
	srvSub := srvStore.Engine().Subscribe(sp, 1<<16)
	defer srvSub.Close()
	time.Sleep(500 * time.Millisecond) // sessions open
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.BaseHeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	peak := sampleHeap()
	cpu0, start := cputime.Process().Seconds(), time.Now()
	var werr atomic.Value
	var writers sync.WaitGroup
	for w := range cfg.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			st := clients[w]
			for _, l := range lines[w*cfg.PerWriter : (w+1)*cfg.PerWriter] {
				v, err := record.Decode(l)
				if err == nil {
					_, err = st.Admit(ctx, "bench", []*record.Version{v})
				}
				if err != nil {
					werr.Store(err)
					return
				}
			}
		}()
	}
	got := 0
	deadline := time.After(5 * time.Minute)
	for got < len(lines) {
		select {
		case ev := <-srvSub.Events():
			if ev.Kind == engine.EventAdmitted {
				got++
			}
		case <-deadline:
			return fmt.Errorf("bench: fan-out: the server took %d of %d versions", got, len(lines))
		}
	}
	serverT := time.Since(start).Seconds()
	writers.Wait()
	if e, ok := werr.Load().(error); ok {
		return e
	}
	want := int64(len(lines)) * int64(cfg.Peers)
	for delivered.Load() < want {
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("bench: fan-out: %d of %d copies delivered", delivered.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	allT := time.Since(start).Seconds()
	res.CPUPerWallSecond = (cputime.Process().Seconds() - cpu0) / allT
	res.PeakHeapMiB = float64(peak()) / (1 << 20)
	res.ServerPerSecond = float64(len(lines)) / serverT
	res.DeliveredPerSec = float64(want) / allT
	res.FanoutSeconds = allT
	return nil
}

func symmetricDifference(ctx context.Context, a, b *engine.Store, sp string) (bytes int64, n int, err error) {
	held := func(st *engine.Store) (map[engine.SyncKey]bool, error) {
		m := map[engine.SyncKey]bool{}
		for it, err := range st.SyncOrder(ctx, sp, engine.SyncKey{}) {
			if err != nil {
				return nil, err
			}
			m[engine.SyncKey{Millis: it.Millis, Digest: it.Digest}] = true
		}
		return m, nil
	}
	ha, err := held(a)
	if err != nil {
		return 0, 0, err
	}
	hb, err := held(b)
	if err != nil {
		return 0, 0, err
	}
	for _, x := range []struct {
		from  *engine.Store
		have  map[engine.SyncKey]bool
		other map[engine.SyncKey]bool
	}{{a, ha, hb}, {b, hb, ha}} {
		for k := range x.have {
			if x.other[k] {
				continue
			}
			raw, err := x.from.VersionJSON(ctx, k.Digest)
			if err != nil {
				return 0, 0, err
			}
			bytes += int64(len(raw))
			n++
		}
	}
	return bytes, n, nil
}

// freshBenchStore opens an empty store at path, removing what an earlier
// run into the same --dir left there: every figure is of a store this run
// filled, and a second run into one directory measures as the first did.
func freshBenchStore(path string, j engine.Judge) (*engine.Store, error) {
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("bench: clear %s: %w", path, err)
	}
	return openBenchStore(path, j)
}
