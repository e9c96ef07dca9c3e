package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// PrivateImportConfig configures [RunPrivateImport]. Zero fields take
// their defaults.
type PrivateImportConfig struct {
	Versions int // versions in each import (default 100,000)
	Rounds   int // rounds; medians are reported (default 3)
	Batch    int // versions per Admit (default 1,000)
	// Dir is where the stores go; default a new temporary directory,
	// removed after.
	Dir string
}

// PrivateImportResult is what [RunPrivateImport] measured, medians of the
// rounds: versions imported a second into a node's store (Pebble, the
// node's judge and its index) — a public space's, a private space's by a
// member that opens every body (the judge's body checks, the index over
// opened bodies), and the same private versions by a node without the key.
type PrivateImportResult struct {
	Versions      int       `json:"versions"`
	Rounds        int       `json:"rounds"`
	PublicPerSec  float64   `json:"publicPerSecond"`
	MemberPerSec  float64   `json:"memberPerSecond"`
	KeylessPerSec float64   `json:"keylessPerSecond"`
	MemberRatio   float64   `json:"memberRatio"`  // member / public; goal ≥ 0.9
	KeylessRatio  float64   `json:"keylessRatio"` // keyless / public; goal ≥ 0.9
	MemberRatios  []float64 `json:"memberRatios"`
	KeylessRatios []float64 `json:"keylessRatios"`
	// The same ratios over the process's CPU time (user and system) an
	// import took rather than its wall time: on a shared machine, less
	// moved by what other processes run.
	MemberCPURatio  float64 `json:"memberCpuRatio"`
	KeylessCPURatio float64 `json:"keylessCpuRatio"`
	CorpusDuration  string  `json:"corpusDuration"`
}

func (c *PrivateImportConfig) fill() {
	if c.Versions <= 0 {
		c.Versions = 100_000
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Batch <= 0 {
		c.Batch = 1000
	}
}

// benchRings is the keys of the bench's member: one ring a space.
type benchRings map[string]*seal.Keyring

func (r benchRings) Keyring(id string) *seal.Keyring { return r[id] }

// ringOpener opens sealed bodies for the index, as the node's does.
type ringOpener struct{ rings benchRings }

func (o ringOpener) Open(v *record.Version) (any, []record.Link, bool) {
	r := o.rings[v.Space]
	if r == nil || !seal.IsSealed(v.Body) {
		return nil, nil, false
	}
	op, err := r.OpenVersion(v)
	if err != nil || op == nil {
		return nil, nil, false
	}
	return op.Body, op.Links, true
}

// RunPrivateImport measures importing a private space's versions by a
// member and by a node without the key, against importing the same number
// of a public space's versions, in the same run (issue 16: goal ≥ 0.9×).
// The two corpora are alike: one founder's notes, each a first version at
// a fresh key with a 600-byte body and one link, signed by the founder;
// the private ones sealed under K₀. Each round imports each corpus into a
// new store, in a rotating order.
func RunPrivateImport(ctx context.Context, cfg PrivateImportConfig) (PrivateImportResult, error) {
	cfg.fill()
	res := PrivateImportResult{Versions: cfg.Versions, Rounds: cfg.Rounds}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "minca-bench-private-*")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	start := time.Now()
	founder, err := identity.GenerateKey()
	if err != nil {
		return res, err
	}
	k0 := seal.NewKey()
	mk := func(name string, private bool) (*space.Genesis, error) {
		o := space.GenesisOptions{Name: name, Founders: []string{founder.DID()}, CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: name}
		if private {
			o.Private, o.EncryptionKeyID = true, k0.ID()
		}
		return space.NewGenesis(o)
	}
	pub, err := mk("public", false)
	if err != nil {
		return res, err
	}
	priv, err := mk("private", true)
	if err != nil {
		return res, err
	}
	ring, err := seal.NewKeyring(priv.ID, k0.ID())
	if err != nil {
		return res, err
	}
	ring.Offer(k0)
	pubLines, err := noteCorpus(founder, pub.ID, nil, cfg.Versions)
	if err != nil {
		return res, err
	}
	privLines, err := noteCorpus(founder, priv.ID, k0, cfg.Versions)
	if err != nil {
		return res, err
	}
	res.CorpusDuration = time.Since(start).Round(time.Millisecond).String()

	type subject struct {
		name  string
		g     *space.Genesis
		lines [][]byte
		rings benchRings
	}
	subjects := []subject{
		{"public", pub, pubLines, benchRings{priv.ID: ring}},
		{"member", priv, privLines, benchRings{priv.ID: ring}},
		{"keyless", priv, privLines, benchRings{}},
	}
	var pubPS, memPS, keyPS, memR, keyR, memC, keyC []float64
	for r := 0; r < cfg.Rounds; r++ {
		per, cpu := map[string]float64{}, map[string]float64{}
		for i := range subjects {
			s := subjects[(i+r)%len(subjects)]
			d, c, err := importInto(ctx, filepath.Join(dir, fmt.Sprintf("%s-%d", s.name, r)), s.g, s.rings, s.lines, cfg.Batch)
			if err != nil {
				return res, fmt.Errorf("bench: the %s import: %w", s.name, err)
			}
			per[s.name], cpu[s.name] = float64(len(s.lines))/d.Seconds(), c.Seconds()
		}
		pubPS, memPS, keyPS = append(pubPS, per["public"]), append(memPS, per["member"]), append(keyPS, per["keyless"])
		memR, keyR = append(memR, per["member"]/per["public"]), append(keyR, per["keyless"]/per["public"])
		memC, keyC = append(memC, cpu["public"]/cpu["member"]), append(keyC, cpu["public"]/cpu["keyless"])
	}
	res.MemberCPURatio, res.KeylessCPURatio = median(memC), median(keyC)
	res.MemberRatios, res.KeylessRatios = append([]float64(nil), memR...), append([]float64(nil), keyR...)
	res.PublicPerSec, res.MemberPerSec, res.KeylessPerSec = median(pubPS), median(memPS), median(keyPS)
	res.MemberRatio, res.KeylessRatio = median(memR), median(keyR)
	return res, nil
}

// importInto imports lines into a new Pebble store at path holding g,
// under the node's judge with rings and the node's index with an opener,
// and returns how long the import took, in wall time and in the process's
// CPU time. Every version must stand.
func importInto(ctx context.Context, path string, g *space.Genesis, rings benchRings, lines [][]byte, batch int) (wall, cpu time.Duration, err error) {
	kv, err := pebble.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	ix, err := index.New(&index.Options{Opener: ringOpener{rings}})
	if err != nil {
		kv.Close()
		return 0, 0, err
	}
	j := judge.NewPrivateJudge(&identity.Checker{}, rings)
	st, err := engine.Open(kv, &engine.Options{Judge: j, Indexer: ix})
	if err != nil {
		kv.Close()
		return 0, 0, err
	}
	defer st.Close()
	j.Source = st
	ix.Attach(st)
	if err := judge.AddGenesis(ctx, st, g); err != nil {
		return 0, 0, err
	}
	runtime.GC()
	t0, c0 := time.Now(), cputime.Process()
	if err := importAll(ctx, st, lines, batch, len(lines)); err != nil {
		return 0, 0, err
	}
	return time.Since(t0), cputime.Process() - c0, nil
}

// noteCorpus is n first versions of notes by one key in one space, as
// JSON lines: a 600-byte body and one link, sealed under k when not nil.
// Signed on every core.
func noteCorpus(signer *identity.PrivateKey, spaceID string, k *seal.Key, n int) ([][]byte, error) {
	keys := make([]string, n)
	for i := range keys {
		key, err := record.FreshKey(signer.DID())
		if err != nil {
			return nil, err
		}
		keys[i] = key
	}
	// The log chain needs each version's id before the next: presign in
	// order (cheap), then sign on every core.
	pres := make([]*record.Presigned, n)
	prev := ""
	text := strings.Repeat("a note that is about six hundred bytes long. ", 12)
	for i := range n {
		body := canonical.NewObject("title", fmt.Sprintf("note %d", i), "text", text, "done", i%2 == 0)
		links := []record.Link{{Rel: "in", To: "list.groceries"}}
		d := &record.Draft{Space: spaceID, Collection: "app.note", CreatedAt: time.Date(2026, 9, 26, 12, 0, 0, 0, time.UTC), Key: keys[i],
			Log: record.Log{N: int64(i), Prev: prev}, Body: body, Links: links}
		if k != nil {
			b, err := seal.SealBody(k, spaceID, "app.note", keys[i], collection.Content{Body: body, Links: links})
			if err != nil {
				return nil, err
			}
			d.Body, d.Links = b, nil
		}
		p, err := d.Presign(signer)
		if err != nil {
			return nil, err
		}
		pres[i], prev = p, p.ID()
	}
	lines := make([][]byte, n)
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += len(errs) {
				v, err := pres[i].Sign()
				if err == nil {
					lines[i], err = v.MarshalJSON()
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return lines, nil
}
