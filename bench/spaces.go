package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// SpacesConfig configures [RunSpaces]. Zero fields take their defaults.
type SpacesConfig struct {
	Members int // accounts in the space (default 10,000)
	Changes int // access changes, at least Members (default 100,000)
	Records int // records the space holds before the measured import (default 1,000,000; negative for none)
	Import  int // versions in each round's measured import (default 100,000)
	Judged  int // versions judged one by one (default 2,000)
	Rounds  int // rounds; medians are reported (default 3)
	Batch   int // versions per Admit (default 1,000)
	// Dir is where the stores and corpus go; default a new temporary
	// directory, removed afterwards.
	Dir string
}

// SpacesResult is what [RunSpaces] measured, each figure a ratio against a
// bound of the same run, medians of the rounds:
//
//   - Replaying the whole access history from cold, in memory: reading
//     each change (decode, and the body formats) and replaying it, against
//     reading alone; the heap the history keeps, and its peak.
//   - Loading the space from the store from cold, as the full judge does
//     the first time: scanning the space's sync order, reading each access
//     change and replaying it.
//   - Judging a version whose seen is the current state (the judge's
//     Check and Decide) under the full judge, against the same version
//     under the judge that lets every root write. Goal ≤ 1.2×.
//   - Importing the same public versions through the full judge, against
//     that judge, each into a store that holds the space. Goal ≥ 0.9×.
type SpacesResult struct {
	Members  int `json:"members"`
	Changes  int `json:"changes"`
	Records  int `json:"records"`
	Imported int `json:"importedPerRound"`
	Judged   int `json:"judged"`
	Rounds   int `json:"rounds"`
	Cores    int `json:"cores"`

	ReadMs          float64 `json:"readMs"`
	ReplayMs        float64 `json:"replayMs"`
	ReplayRatio     float64 `json:"replayRatio"`
	ReplayUsPer     float64 `json:"replayUsPerChange"`
	HistoryHeapMB   float64 `json:"historyHeapMB"`
	PeakHeapMB      float64 `json:"peakHeapMB"`
	LoadFromStoreMs float64 `json:"loadFromStoreMs"`

	JudgeBaseUs  float64 `json:"judgeBaseUs"`
	JudgeFullUs  float64 `json:"judgeFullUs"`
	JudgeRatio   float64 `json:"judgeRatio"`
	DecideBaseUs float64 `json:"decideBaseUs"`
	DecideFullUs float64 `json:"decideFullUs"`
	DecideRatio  float64 `json:"decideRatio"`

	ImportBasePerSec float64 `json:"importBasePerSec"`
	ImportFullPerSec float64 `json:"importFullPerSec"`
	ImportRatio      float64 `json:"importRatio"`

	// Each round's ratios, for the spread behind the medians.
	JudgeRatios  []float64 `json:"judgeRatios"`
	ImportRatios []float64 `json:"importRatios"`
}

func (c *SpacesConfig) fill() {
	if c.Members <= 0 {
		c.Members = 10_000
	}
	if c.Changes < c.Members+1 {
		c.Changes = max(100_000, c.Members+1)
	}
	if c.Records < 0 {
		c.Records = 0
	} else if c.Records == 0 {
		c.Records = 1_000_000
	}
	if c.Import <= 0 {
		c.Import = 100_000
	}
	if c.Judged <= 0 {
		c.Judged = 2_000
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Batch <= 0 {
		c.Batch = 1000
	}
}

// spaceCorpus is a generated space: its genesis, founder, members, access
// changes as JSON lines, and the heads the last change leaves.
type spaceCorpus struct {
	g       *space.Genesis
	founder *identity.PrivateKey
	members []*identity.PrivateKey
	changes [][]byte
	heads   []string
	last    []*record.Version // each member's last record, in its line
}

// genSpace writes a space of m members and n access changes by its
// founder: a definition, one assignment per member, then changes of
// members' roles, a removal and its undoing now and then, and every 50th
// change concurrent with the one before it.
func genSpace(m, n int) (*spaceCorpus, error) {
	f, err := identity.GenerateKey()
	if err != nil {
		return nil, err
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "bench", Founders: []string{f.DID()}, CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: "bench",
		Roles: map[string][]space.Grant{"writer": {space.MustGrant("/record")}, "reader": {}}})
	if err != nil {
		return nil, err
	}
	sc := &spaceCorpus{g: g, founder: f}
	for range m {
		k, err := identity.GenerateKey()
		if err != nil {
			return nil, err
		}
		sc.members = append(sc.members, k)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	atKey := map[string]*record.Version{}
	logs := map[string]*record.Version{}
	var prev, prev2 *record.Version
	write := func(coll, key string, body any, seen []string) error {
		clock = clock.Add(time.Millisecond)
		d := &record.Draft{Space: g.ID, Collection: coll, CreatedAt: clock, Key: key, After: atKey[key], Log: record.LogAfter(logs[coll]),
			Seen: seen, Retain: true, Body: body}
		v, err := d.Sign(f)
		if err != nil {
			return err
		}
		atKey[key], logs[coll] = v, v
		b, err := v.MarshalJSON()
		if err != nil {
			return err
		}
		sc.changes = append(sc.changes, b)
		prev2, prev = prev, v
		return nil
	}
	seenNow := func(i int) []string {
		switch {
		case prev == nil:
			return nil
		case i%50 == 0 && prev2 != nil:
			return []string{prev2.ID} // concurrent with the one before
		case i%50 == 1 && prev2 != nil:
			return []string{prev2.ID, prev.ID}
		}
		return []string{prev.ID}
	}
	def := canonical.NewObject("name", "app.chat", "version", float64(1), "schema", canonical.NewObject("type", "object"))
	if err := write("sys.collection", "collection:app.chat", def, nil); err != nil {
		return nil, err
	}
	assign := func(k *identity.PrivateKey, i int, roles ...string) error {
		return write("sys.assign", "member:"+record.OwnerPart(k.DID()), canonical.NewObject("member", k.DID(), "roles", strList(roles)), seenNow(i))
	}
	for i, k := range sc.members {
		if err := assign(k, i, "writer"); err != nil {
			return nil, err
		}
	}
	for i := len(sc.changes); i < n; i++ {
		k := sc.members[i%m]
		var err error
		switch {
		case i%997 == 0:
			err = write("sys.remove", "remove:"+record.OwnerPart(k.DID()), canonical.NewObject("member", k.DID()), seenNow(i))
		case (i-1)%997 == 0:
			err = assign(sc.members[(i-1)%m], i, "writer")
		case i%2 == 0:
			err = assign(k, i, "reader", "writer")
		default:
			err = assign(k, i, "writer")
		}
		if err != nil {
			return nil, err
		}
	}
	sc.heads = []string{prev.ID}
	return sc, nil
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// records signs n public versions by the space's members, each at a fresh
// key, as of seen, each member's in its own line, members on every core.
// advance false leaves the members' lines where they were (versions
// judged and never stored).
func (sc *spaceCorpus) records(n int, seen []string, tag string, advance bool) ([]*record.Version, error) {
	m := len(sc.members)
	if sc.last == nil {
		sc.last = make([]*record.Version, m)
	}
	out := make([]*record.Version, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= m {
					return
				}
				k, last := sc.members[j], sc.last[j]
				for i := j; i < n; i += m {
					key, err := record.FreshKey(k.DID())
					if err == nil {
						d := &record.Draft{Space: sc.g.ID, Collection: "app.chat", CreatedAt: base.Add(time.Duration(i) * time.Millisecond), Key: key,
							Log: record.LogAfter(last), Seen: seen, Body: canonical.NewObject("text", fmt.Sprintf("%s message %d", tag, i))}
						out[i], err = d.Sign(k)
						last = out[i]
					}
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
				if advance {
					sc.last[j] = last
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	return out, nil
}

// RunSpaces measures the full judge on a large space (see SpacesResult).
func RunSpaces(ctx context.Context, cfg SpacesConfig) (SpacesResult, error) {
	cfg.fill()
	res := SpacesResult{Members: cfg.Members, Changes: cfg.Changes, Records: cfg.Records, Imported: cfg.Import, Judged: cfg.Judged,
		Rounds: cfg.Rounds, Cores: runtime.GOMAXPROCS(0)}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-spaces-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	sc, err := genSpace(cfg.Members, cfg.Changes)
	if err != nil {
		return res, fmt.Errorf("bench: generating the space: %w", err)
	}
	notes := &identity.Checker{}
	if err := measureReplay(sc, cfg.Rounds, notes, &res); err != nil {
		return res, err
	}

	// Two stores holding the space: one judged fully, one by the judge that
	// lets every root write.
	full := judge.NewSpaceJudge(notes)
	fullSt, err := openBenchStore(filepath.Join(dir, "full"), full)
	if err != nil {
		return res, err
	}
	defer fullSt.Close()
	full.Source = fullSt
	if err := judge.AddGenesis(ctx, fullSt, sc.g); err != nil {
		return res, err
	}
	baseSt, err := openBenchStore(filepath.Join(dir, "base"), &judge.Judge{Notes: notes})
	if err != nil {
		return res, err
	}
	defer baseSt.Close()
	for _, st := range []*engine.Store{fullSt, baseSt} {
		if err := importAll(ctx, st, sc.changes, cfg.Batch, len(sc.changes)); err != nil {
			return res, fmt.Errorf("bench: importing the access history: %w", err)
		}
	}
	for done := 0; done < cfg.Records; done += 100_000 {
		vs, err := sc.records(min(100_000, cfg.Records-done), sc.heads, fmt.Sprint("held ", done), true)
		if err != nil {
			return res, err
		}
		lines, err := marshalAll(vs)
		if err != nil {
			return res, err
		}
		for _, st := range []*engine.Store{fullSt, baseSt} {
			if err := importAll(ctx, st, lines, cfg.Batch, len(lines)); err != nil {
				return res, fmt.Errorf("bench: importing the records held: %w", err)
			}
		}
	}

	// From cold: a new judge reads the space from the store.
	cold := judge.NewSpaceJudge(&identity.Checker{})
	cold.Source = fullSt
	runtime.GC()
	start := time.Now()
	if _, ok, err := cold.History(ctx, sc.g.ID); err != nil || !ok {
		return res, fmt.Errorf("bench: loading the space: %v %v", ok, err)
	}
	res.LoadFromStoreMs = float64(time.Since(start).Microseconds()) / 1000

	if err := measureJudge(ctx, sc, cfg, full, notes, &res); err != nil {
		return res, err
	}

	var basePS, fullPS, ratios []float64
	for r := range cfg.Rounds {
		vs, err := sc.records(cfg.Import, sc.heads, fmt.Sprint("import ", r), true)
		if err != nil {
			return res, err
		}
		lines, err := marshalAll(vs)
		if err != nil {
			return res, err
		}
		// In chunks of ten batches, alternating which store goes first, so
		// both imports see the same machine: it is shared, and its load
		// moves.
		var tb, tf time.Duration
		chunk := 10 * cfg.Batch
		for i := 0; i < len(lines); i += chunk {
			part := lines[i:min(i+chunk, len(lines))]
			for k := range 2 {
				st, t := baseSt, &tb
				if (i/chunk+k)%2 == 1 {
					st, t = fullSt, &tf
				}
				start := time.Now()
				if err := importAll(ctx, st, part, cfg.Batch, len(part)); err != nil {
					return res, err
				}
				*t += time.Since(start)
			}
		}
		b, f := float64(len(lines))/tb.Seconds(), float64(len(lines))/tf.Seconds()
		basePS, fullPS, ratios = append(basePS, b), append(fullPS, f), append(ratios, f/b)
	}
	res.ImportRatios = append([]float64(nil), ratios...)
	res.ImportBasePerSec, res.ImportFullPerSec, res.ImportRatio = median(basePS), median(fullPS), median(ratios)
	return res, nil
}

func openBenchStore(path string, j engine.Judge) (*engine.Store, error) {
	return openBenchStoreWith(path, nil, j)
}

// openBenchStoreWith is openBenchStore with Pebble's options o (nil: its
// defaults).
func openBenchStoreWith(path string, o *pebble.Options, j engine.Judge) (*engine.Store, error) {
	kv, err := pebble.Open(path, o)
	if err != nil {
		return nil, err
	}
	st, err := engine.Open(kv, &engine.Options{Judge: j})
	if err != nil {
		kv.Close()
		return nil, err
	}
	return st, nil
}

func marshalAll(vs []*record.Version) ([][]byte, error) {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		b, err := v.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// importAll imports lines, all of which must stand.
func importAll(ctx context.Context, st *engine.Store, lines [][]byte, batch, want int) error {
	n, err := Import(ctx, st, "bench", lines, batch)
	if err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("%d of %d stood", n, want)
	}
	return nil
}

// measureReplay replays the history in memory from its JSON lines, against
// reading the lines alone, and measures the heap the history keeps.
func measureReplay(sc *spaceCorpus, rounds int, notes record.NoteChecker, res *SpacesResult) error {
	env := space.Env{Notes: notes}
	read := func() ([]*space.Change, error) {
		out := make([]*space.Change, len(sc.changes))
		for i, l := range sc.changes {
			v, err := record.Decode(l)
			if err != nil {
				return nil, err
			}
			if out[i], err = space.ReadChange(sc.g, v, v.Author, env); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var readMs, replayMs, ratios []float64
	for range rounds {
		runtime.GC()
		start := time.Now()
		if _, err := read(); err != nil {
			return err
		}
		r := time.Since(start)
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		peak := sampleHeap()
		start = time.Now()
		cs, err := read()
		if err != nil {
			return err
		}
		h := space.NewHistory(sc.g, env)
		for _, c := range cs {
			if _, err := h.Add(c); err != nil {
				return fmt.Errorf("bench: replaying: %w", err)
			}
		}
		p := time.Since(start)
		peakHeap := peak()
		cs = nil
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		if h.Len() != len(sc.changes) {
			return fmt.Errorf("bench: replayed %d of %d", h.Len(), len(sc.changes))
		}
		res.HistoryHeapMB = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
		res.PeakHeapMB = float64(int64(peakHeap)-int64(before.HeapAlloc)) / 1e6
		runtime.KeepAlive(h)
		readMs, replayMs, ratios = append(readMs, ms(r)), append(replayMs, ms(p)), append(ratios, float64(p)/float64(r))
	}
	res.ReadMs, res.ReplayMs, res.ReplayRatio = median(readMs), median(replayMs), median(ratios)
	res.ReplayUsPer = res.ReplayMs * 1000 / float64(len(sc.changes))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sampleHeap samples the heap in use every 10 ms until the returned func
// is called, which returns the highest seen.
func sampleHeap() func() uint64 {
	var top atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > top.Load() {
				top.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(stop); <-done; return top.Load() }
}

// nothingHeld is a HeldReader for judging first versions, which read
// nothing held.
type nothingHeld struct{}

func (nothingHeld) Held(canonical.ID) (*record.Version, bool, error) { return nil, false, nil }
func (nothingHeld) Standing(canonical.ID) (engine.Verdict, bool, error) {
	return engine.Refused, false, nil
}

// measureJudge judges the same versions, whose seen is the current state,
// under both judges — Check and Decide, and Decide alone — each round with
// new judges, so no verdict cache skips the crypto gate.
func measureJudge(ctx context.Context, sc *spaceCorpus, cfg SpacesConfig, full *judge.SpaceJudge, notes record.NoteChecker, res *SpacesResult) error {
	vs, err := sc.records(cfg.Judged, sc.heads, "judged", false)
	if err != nil {
		return err
	}
	type judger interface {
		Check(*record.Version) (engine.Checked, error)
		Decide(engine.HeldReader, *record.Version, engine.Checked) (engine.Decision, error)
	}
	// Each pass judges fresh copies of the versions.
	fresh := func() ([]*record.Version, error) {
		out := make([]*record.Version, len(vs))
		for i, v := range vs {
			b, err := v.MarshalJSON()
			if err != nil {
				return nil, err
			}
			if out[i], err = record.Decode(b); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// judgeOne judges one version; it returns the time of Check and Decide,
	// and of Decide alone.
	judgeOne := func(j judger, v *record.Version) (time.Duration, time.Duration, error) {
		t0 := time.Now()
		c, err := j.Check(v)
		if err != nil {
			return 0, 0, err
		}
		t1 := time.Now()
		d, err := j.Decide(nothingHeld{}, v, c)
		t2 := time.Now()
		if err != nil {
			return 0, 0, err
		}
		if d.Verdict != engine.Stands {
			return 0, 0, fmt.Errorf("bench: a judged version is %v: %v", d.Verdict, d.Refusal)
		}
		return t2.Sub(t0), t2.Sub(t1), nil
	}
	var bw, fw, bd, fd, wr, dr []float64
	n := float64(len(vs))
	for range cfg.Rounds {
		fullRound := &judge.SpaceJudge{Base: &judge.Judge{Notes: notes}, Source: full.Source}
		if _, ok, err := fullRound.History(ctx, sc.g.ID); err != nil || !ok {
			return fmt.Errorf("bench: loading the space: %v %v", ok, err)
		}
		baseRound := &judge.Judge{Notes: notes}
		forBase, err := fresh()
		if err != nil {
			return err
		}
		forFull, err := fresh()
		if err != nil {
			return err
		}
		// Version by version, alternating which judge goes first, so both
		// see the same machine: it is shared, and its load moves.
		var b1, b2, f1, f2 time.Duration
		for i := range forBase {
			for k := range 2 {
				j, v, w, d := judger(baseRound), forBase[i], &b1, &b2
				if (i+k)%2 == 1 {
					j, v, w, d = fullRound, forFull[i], &f1, &f2
				}
				x, y, err := judgeOne(j, v)
				if err != nil {
					return err
				}
				*w += x
				*d += y
			}
		}
		bw, fw = append(bw, float64(b1.Microseconds())/n), append(fw, float64(f1.Microseconds())/n)
		bd, fd = append(bd, float64(b2.Nanoseconds())/n/1000), append(fd, float64(f2.Nanoseconds())/n/1000)
		wr, dr = append(wr, float64(f1)/float64(b1)), append(dr, float64(f2)/float64(b2))
	}
	res.JudgeRatios = append([]float64(nil), wr...)
	res.JudgeBaseUs, res.JudgeFullUs, res.JudgeRatio = median(bw), median(fw), median(wr)
	res.DecideBaseUs, res.DecideFullUs, res.DecideRatio = median(bd), median(fd), median(dr)
	return nil
}
