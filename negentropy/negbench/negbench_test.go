package negbench

import (
	"strings"
	"testing"
)

func TestRunSmall(t *testing.T) {
	cfg := Config{N: 20_000, Diffs: []float64{0.01, 0.1}, Runs: 1, Storage: "tree", Seed: 2}
	for _, st := range []string{"tree", "vector"} {
		cfg.Storage = st
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 2 || res.Rows[0].Rounds < 2 || res.Rows[1].IdealBytes == 0 {
			t.Fatalf("%s: %+v", st, res.Rows)
		}
		if md := res.Markdown(); !strings.Contains(md, "| 10% |") {
			t.Fatalf("markdown:\n%s", md)
		}
	}
}
