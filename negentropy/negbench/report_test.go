package negbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/negentropy"
)

// TestReport prints the benchmark table when NEGBENCH=1; it takes
// minutes. NEGBENCH_N overrides the 1,000,000 items, NEGBENCH_STORAGE the
// tree storage, NEGBENCH_DIFFS (comma-separated shares) the differences.
// NEGBENCH_PEERS="name=cmd args;…" also drives each named
// harness program against itself on the same data, e.g.
// "minca=minca negentropy-harness;cpp=/path/to/negentropy/test/cpp/harness".
// NEGBENCH_DUMP=dir writes each case's two sides there as "ts,idhex" lines,
// for timing other implementations in process on the same data.
func TestReport(t *testing.T) {
	if os.Getenv("NEGBENCH") == "" {
		t.Skip("set NEGBENCH=1 to run the 1,000,000-item report")
	}
	cfg := DefaultConfig()
	if n, err := strconv.Atoi(os.Getenv("NEGBENCH_N")); err == nil {
		cfg.N = n
	}
	if s := os.Getenv("NEGBENCH_DIFFS"); s != "" {
		cfg.Diffs = nil
		for _, f := range strings.Split(s, ",") {
			d, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Diffs = append(cfg.Diffs, d)
		}
	}
	if s := os.Getenv("NEGBENCH_STORAGE"); s != "" {
		cfg.Storage = s
	}
	if dir := os.Getenv("NEGBENCH_DUMP"); dir != "" {
		for _, d := range cfg.Diffs {
			a, b := Data(cfg, d)
			for side, items := range map[string][]negentropy.Item{"a": a, "b": b} {
				var sb strings.Builder
				for _, it := range items {
					fmt.Fprintf(&sb, "%d,%x\n", it.Timestamp, it.ID[:])
				}
				name := filepath.Join(dir, fmt.Sprintf("%g-%s.txt", d, side))
				if err := os.WriteFile(name, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if os.Getenv("NEGBENCH_SKIP_INPROCESS") == "" {
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(res.Markdown())
	}
	peers := os.Getenv("NEGBENCH_PEERS")
	if peers == "" {
		return
	}
	fmt.Println("| harness | diff | round trips | bytes up | bytes down | ideal bytes | client ms | server ms | runs (client ms) |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, d := range cfg.Diffs {
		a, b := Data(cfg, d)
		for _, spec := range strings.Split(peers, ";") {
			p, err := ParsePeer(spec)
			if err != nil {
				t.Fatal(err)
			}
			var rows []Row
			var each []string
			for range max(cfg.Runs, 1) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
				r, err := Drive(ctx, p, p, a, b)
				cancel()
				if err != nil {
					t.Fatalf("%s diff %g: %v", p.Name, d, err)
				}
				rows = append(rows, r)
				each = append(each, fmt.Sprintf("%.0f", ms(r.Client)))
			}
			m := median(rows)
			fmt.Printf("| %s | %g%% | %d | %d | %d | %d | %.1f | %.1f | %s |\n", p.Name, d*100, m.Rounds, m.BytesUp, m.BytesDown, m.IdealBytes, ms(m.Client), ms(m.Server), strings.Join(each, ", "))
		}
	}
}
