package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/carrier"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// CarryConfig configures [RunCarry]. Zero fields take their defaults.
type CarryConfig struct {
	// Versions is how many versions of a private space are taken in each
	// round (default 5,000), in batches of 256.
	Versions int
	// Rounds is how many times each side runs; medians are reported
	// (default 5).
	Rounds int
	// Dir is where the account's node and the carriers live while it runs
	// (default a new temporary directory, removed after).
	Dir string
}

// CarryResult is what [RunCarry] measured: a carrier taking in a private
// space's versions (06 §4.1: judged as a peer without the key, through
// Carrier.Admit, on a memory: store) against a member's store taking in
// the same versions (judge.PrivateJudge with the space's key: every body
// opened, tags checked), per version. Goal: Ratio ≤ 1 — a carrier does
// less than a member.
type CarryResult struct {
	Versions int     `json:"versions"`
	Rounds   int     `json:"rounds"`
	Member   Measure `json:"member"`
	Carrier  Measure `json:"carrier"`
	Ratio    float64 `json:"ratio"`
	// Each round's ratio, for the spread behind the median.
	Ratios []float64 `json:"ratios"`
}

// carryRings gives a judge one space's keys.
type carryRings map[string]*seal.Keyring

func (r carryRings) Keyring(id string) *seal.Keyring { return r[id] }

// RunCarry measures a carrier's intake against a member's.
func RunCarry(ctx context.Context, cfg CarryConfig) (res CarryResult, err error) {
	if cfg.Versions <= 0 {
		cfg.Versions = 5000
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 5
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "minca-bench-carry-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	acc, err := identity.GenerateKey()
	if err != nil {
		return res, err
	}
	k0 := seal.NewKey()
	g, err := space.NewGenesis(space.GenesisOptions{Name: "bench", Private: true, Founders: []string{acc.DID()},
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: "bench-carry", EncryptionKeyID: k0.ID()})
	if err != nil {
		return res, err
	}
	ring, err := seal.NewKeyring(g.ID, k0.ID())
	if err != nil {
		return res, err
	}
	ring.Offer(k0)
	vs, err := carryVersions(acc, g, k0, cfg.Versions)
	if err != nil {
		return res, err
	}
	// The account's node adds a carrier; each round's carrier takes the
	// grant and the carry space, then the space's versions.
	home, err := node.Open(ctx, &node.Options{Dir: filepath.Join(cfg.Dir, "home"), Store: "memory:", Account: acc, PassKeys: carryRings{g.ID: ring}})
	if err != nil {
		return res, err
	}
	defer home.Close()
	if err := home.JoinGenesis(ctx, g); err != nil {
		return res, err
	}
	res = CarryResult{Versions: cfg.Versions, Rounds: cfg.Rounds}
	var members, carriers []Measure
	for round := range cfg.Rounds {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m, err := timeIntake(func() (intake, func(), error) {
			j := judge.NewPrivateJudge(&identity.Checker{}, carryRings{g.ID: ring})
			st, err := engine.Open(memory.Open(nil), &engine.Options{Judge: j})
			if err != nil {
				return nil, nil, err
			}
			j.Source = st
			if err := judge.AddGenesis(ctx, st, g); err != nil {
				st.Close()
				return nil, nil, err
			}
			return st.Admit, func() { st.Close() }, nil
		}, vs)
		if err != nil {
			return res, fmt.Errorf("the member: %w", err)
		}
		c, err := timeIntake(func() (intake, func(), error) {
			return newBenchCarrier(ctx, home, filepath.Join(cfg.Dir, fmt.Sprintf("carrier-%d", round)), g.ID)
		}, vs)
		if err != nil {
			return res, fmt.Errorf("the carrier: %w", err)
		}
		members, carriers = append(members, m), append(carriers, c)
		res.Ratios = append(res.Ratios, c.NsPerOp/m.NsPerOp)
	}
	res.Member, res.Carrier = medianMeasure(members), medianMeasure(carriers)
	res.Ratio = median(append([]float64(nil), res.Ratios...))
	return res, nil
}

// intake takes versions in, as a store's Admit does.
type intake func(ctx context.Context, from string, vs []*record.Version) ([]engine.Outcome, error)

// timeIntake makes an intake, and times it taking vs in batches of 256;
// every version must stand.
func timeIntake(open func() (intake, func(), error), vs []*record.Version) (Measure, error) {
	in, done, err := open()
	if err != nil {
		return Measure{}, err
	}
	defer done()
	start := time.Now()
	for i := 0; i < len(vs); i += 256 {
		outs, err := in(context.Background(), "bench", vs[i:min(i+256, len(vs))])
		if err != nil {
			return Measure{}, err
		}
		for _, o := range outs {
			if o.Verdict != engine.Stands {
				return Measure{}, fmt.Errorf("version %s: %v %v", o.ID, o.Verdict, o.Refusal)
			}
		}
	}
	return Measure{NsPerOp: float64(time.Since(start).Nanoseconds()) / float64(len(vs))}, nil
}

// newBenchCarrier is a new carrier the account adds, holding its carry
// space and so carrying the space.
func newBenchCarrier(ctx context.Context, home *node.Node, dir, spaceID string) (intake, func(), error) {
	c, err := carrier.Open(ctx, &carrier.Options{Dir: dir, Store: "memory:"})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (intake, func(), error) {
		c.Close()
		return nil, nil, err
	}
	added, err := home.AddCarrier(ctx, c.DID(), "bench")
	if err != nil {
		return fail(err)
	}
	if err := c.Accept(ctx, &connect.CarryGrant{DID: home.Account(), Name: "bench", Space: added.Space, Invite: added.Invite}); err != nil {
		return fail(err)
	}
	var carry []*record.Version
	for v, err := range home.Store().Export(ctx, added.Space) {
		if err != nil {
			return fail(err)
		}
		carry = append(carry, v)
	}
	if _, err := c.Admit(ctx, "home", carry); err != nil {
		return fail(err)
	}
	carried, err := c.Spaces(ctx)
	if err != nil {
		return fail(err)
	}
	found := false
	for _, id := range carried {
		found = found || id == spaceID
	}
	if !found {
		return fail(fmt.Errorf("the carrier does not carry the space after its carry space arrived"))
	}
	return c.Admit, func() { c.Close() }, nil
}

// carryVersions are a private space's versions: a sealed definition of
// app.chat with a topic, then n messages of the founder, sealed, tagged.
func carryVersions(acc *identity.PrivateKey, g *space.Genesis, k *seal.Key, n int) ([]*record.Version, error) {
	dv, err := canonical.Parse([]byte(`{"name":"app.chat","version":1,"schema":{"type":"object"},"topics":["channel"]}`))
	if err != nil {
		return nil, err
	}
	def, err := collection.ParseDefinition(dv)
	if err != nil {
		return nil, err
	}
	sign := func(coll, key string, body any, seen []string, n int64, prev string, tags []string, retain bool) (*record.Version, error) {
		d := &record.Draft{Space: g.ID, Collection: coll, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Key: key,
			Log: record.Log{N: n, Prev: prev}, Retain: retain, Body: body, Tags: tags}
		if len(seen) > 0 {
			d.Seen = seen[:1]
		}
		return d.Sign(acc)
	}
	sd, err := seal.SealBody(k, g.ID, "sys.collection", "collection:app.chat", collection.Content{Body: dv})
	if err != nil {
		return nil, err
	}
	d, err := sign("sys.collection", "collection:app.chat", sd, nil, 0, "", nil, true)
	if err != nil {
		return nil, err
	}
	out := []*record.Version{d}
	prev := ""
	for i := range n {
		key, err := record.FreshKey(acc.DID())
		if err != nil {
			return nil, err
		}
		body := canonical.NewObject("channel", "general", "text", fmt.Sprintf("message %d: milk, bread and a little more text to make it a message", i))
		c := collection.Content{Body: body}
		tags, err := def.Tags(k.TagKey(), c)
		if err != nil {
			return nil, err
		}
		sb, err := seal.SealBody(k, g.ID, "app.chat", key, c)
		if err != nil {
			return nil, err
		}
		v, err := sign("app.chat", key, sb, []string{d.ID}, int64(i), prev, tags, false)
		if err != nil {
			return nil, err
		}
		out, prev = append(out, v), v.ID
	}
	return out, nil
}
