// Package negbench measures negentropy reconciliation of two large sets
// (issue 7, Performance): round trips, bytes each way against the ideal of
// 32 bytes per differing id, and time on each side against building the
// fingerprint tree once.
package negbench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/minca-go/minca/negentropy"
	"github.com/minca-go/minca/negentropy/internal/gen"
)

// Config says what to measure. It is printed with the result, in the
// command line's JSON style (camelCase).
type Config struct {
	// N is the number of items on each side, about.
	N int `json:"n"`
	// Diffs are the shares of the union held by one side only.
	Diffs []float64 `json:"diffs"`
	// Runs is how many times each case runs; the report gives medians.
	Runs int `json:"runs"`
	// Storage is "tree" (built in one pass), "tree-insert" (built by
	// inserts) or "vector".
	Storage string `json:"storage"`
	// FrameSizeLimit applies to both sides; 0 for none.
	FrameSizeLimit uint64 `json:"frameSizeLimit"`
	// Seed fixes the data.
	Seed uint64 `json:"seed"`
	// Progress, if set, is told of each run as it starts: its name and
	// how many of all the runs are done.
	Progress func(step string, done, total int) `json:"-"`
}

// DefaultConfig is the case: 1,000,000 items a side at 0.1%, 1% and
// 10% difference, three runs, tree storage.
func DefaultConfig() Config {
	return Config{N: 1_000_000, Diffs: []float64{0.001, 0.01, 0.1}, Runs: 3, Storage: "tree", Seed: 1}
}

// Row is one case's medians. Its JSON form gives times in milliseconds,
// in members named …Ms.
type Row struct {
	Diff       float64
	SizeA      int
	SizeB      int
	Rounds     int           // round trips
	BytesUp    int           // client to server
	BytesDown  int           // server to client
	IdealBytes int           // differing ids x 32
	Client     time.Duration // time in the client (initiate and reconcile)
	Server     time.Duration // time in the server
	Build      time.Duration // building one side's storage from sorted items
}

// Result is a whole run.
type Result struct {
	Config Config `json:"config"`
	Rows   []Row  `json:"rows"`
}

// MarshalJSON writes a row in camelCase, its times as milliseconds.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Diff       float64 `json:"diff"`
		SizeA      int     `json:"sizeA"`
		SizeB      int     `json:"sizeB"`
		Rounds     int     `json:"roundTrips"`
		BytesUp    int     `json:"bytesUp"`
		BytesDown  int     `json:"bytesDown"`
		IdealBytes int     `json:"idealBytes"`
		WireRatio  float64 `json:"wireRatio"` // (up + down) / ideal
		ClientMs   float64 `json:"clientMs"`
		ServerMs   float64 `json:"serverMs"`
		BuildMs    float64 `json:"buildMs"`
		BuildRatio float64 `json:"buildRatio"` // (client + server) / build
	}{r.Diff, r.SizeA, r.SizeB, r.Rounds, r.BytesUp, r.BytesDown, r.IdealBytes,
		float64(r.BytesUp+r.BytesDown) / float64(max(r.IdealBytes, 1)),
		ms(r.Client), ms(r.Server), ms(r.Build), float64(r.Client+r.Server) / float64(max(r.Build, 1))})
}

// Data returns the two sorted sides for a difference share.
func Data(cfg Config, diff float64) (a, b []negentropy.Item) {
	n := int(float64(cfg.N) / (1 - diff/2))
	return gen.Pair(gen.Spec{N: n, OnlyA: diff / 2, OnlyB: diff / 2, Timestamps: gen.Spread, Seed: cfg.Seed})
}

// Run measures every case of cfg.
func Run(cfg Config) (Result, error) {
	res := Result{Config: cfg, Rows: []Row{}}
	done, total := 0, len(cfg.Diffs)*max(cfg.Runs, 1)
	for _, d := range cfg.Diffs {
		a, b := Data(cfg, d)
		var runs []Row
		for i := range max(cfg.Runs, 1) {
			if cfg.Progress != nil {
				cfg.Progress(fmt.Sprintf("difference %g, run %d of %d", d, i+1, max(cfg.Runs, 1)), done, total)
			}
			done++
			r, err := once(cfg, a, b)
			if err != nil {
				return res, fmt.Errorf("negbench: diff %g: %w", d, err)
			}
			r.Diff = d
			runs = append(runs, r)
		}
		res.Rows = append(res.Rows, median(runs))
	}
	return res, nil
}

func build(kind string, items []negentropy.Item) (negentropy.Storage, error) {
	switch kind {
	case "vector":
		return gen.Vector(items)
	case "tree-insert":
		t := negentropy.NewTree()
		for _, it := range items {
			if err := t.Insert(it); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	return gen.Tree(items)
}

func once(cfg Config, a, b []negentropy.Item) (Row, error) {
	r := Row{SizeA: len(a), SizeB: len(b)}
	t0 := time.Now()
	sa, err := build(cfg.Storage, a)
	if err != nil {
		return r, err
	}
	r.Build = time.Since(t0)
	sb, err := build(cfg.Storage, b)
	if err != nil {
		return r, err
	}
	c, err := negentropy.NewClient(sa, cfg.FrameSizeLimit)
	if err != nil {
		return r, err
	}
	s, err := negentropy.NewServer(sb, cfg.FrameSizeLimit)
	if err != nil {
		return r, err
	}
	t0 = time.Now()
	q, err := c.Initiate()
	r.Client += time.Since(t0)
	if err != nil {
		return r, err
	}
	diffs := 0
	for q != nil {
		r.Rounds++
		r.BytesUp += len(q)
		t0 = time.Now()
		ans, err := s.Reconcile(q)
		r.Server += time.Since(t0)
		if err != nil {
			return r, err
		}
		r.BytesDown += len(ans)
		t0 = time.Now()
		round, err := c.Reconcile(ans)
		r.Client += time.Since(t0)
		if err != nil {
			return r, err
		}
		diffs += len(round.Have) + len(round.Need)
		q = round.Next
	}
	r.IdealBytes = 32 * symDiff(a, b)
	if cfg.FrameSizeLimit == 0 && diffs != r.IdealBytes/32 {
		return r, fmt.Errorf("found %d differing ids, want %d", diffs, r.IdealBytes/32)
	}
	return r, nil
}

func symDiff(a, b []negentropy.Item) int {
	i, j, same := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch c := a[i].Compare(b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			same++
			i++
			j++
		}
	}
	return len(a) + len(b) - 2*same
}

func median(rows []Row) Row {
	m := rows[0]
	pick := func(get func(Row) time.Duration) time.Duration {
		v := make([]time.Duration, len(rows))
		for i, r := range rows {
			v[i] = get(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	m.Client = pick(func(r Row) time.Duration { return r.Client })
	m.Server = pick(func(r Row) time.Duration { return r.Server })
	m.Build = pick(func(r Row) time.Duration { return r.Build })
	return m
}

// Markdown renders the result as a table.
func (r Result) Markdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "storage %s, frame size limit %d, %d runs (medians)\n\n", r.Config.Storage, r.Config.FrameSizeLimit, max(r.Config.Runs, 1))
	sb.WriteString("| diff | items A / B | differing ids | round trips | bytes up | bytes down | ideal bytes | wire / ideal | client ms | server ms | build tree ms | (client+server) / build |\n")
	sb.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.Rows {
		fmt.Fprintf(&sb, "| %g%% | %d / %d | %d | %d | %d | %d | %d | %.2f | %.1f | %.1f | %.1f | %.2f |\n",
			x.Diff*100, x.SizeA, x.SizeB, x.IdealBytes/32, x.Rounds, x.BytesUp, x.BytesDown, x.IdealBytes,
			float64(x.BytesUp+x.BytesDown)/float64(max(x.IdealBytes, 1)),
			ms(x.Client), ms(x.Server), ms(x.Build), float64(x.Client+x.Server)/float64(max(x.Build, 1)))
	}
	return sb.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
