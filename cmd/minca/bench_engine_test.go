package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// bench engine-memory runs `minca store import` as a child of itself into
// each backend and reports its peak memory and the store's size against
// what the store holds. It runs as a process: the child is this binary.
func TestBenchEngineMemory(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("imports into two stores in child processes")
	}
	path, env := mincaCommand(t)
	dir := t.TempDir()
	cmd := exec.Command(path, "bench", "engine-memory", "--versions", "300", "--dir", filepath.Join(dir, "bench"))
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench engine-memory: %v\n%s", err, out)
	}
	var r struct {
		Versions int `json:"versions"`
		Stores   map[string]struct {
			PeakRSSMB    float64 `json:"peakRssMB"`
			DiskBytes    int64   `json:"diskBytes"`
			LogicalBytes int64   `json:"logicalBytes"`
			DiskRatio    float64 `json:"diskRatio"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench engine-memory: %v\n%s", err, out)
	}
	if r.Versions != 300 || len(r.Stores) != 2 {
		t.Fatalf("bench engine-memory: %s", out)
	}
	for kind, f := range r.Stores {
		// 300 versions of some 700 bytes; a store takes more than nothing
		// and less than a hundred times what it holds.
		if f.PeakRSSMB <= 1 || f.LogicalBytes < 300*300 || f.DiskBytes <= 0 || f.DiskRatio <= 0 || f.DiskRatio > 100 {
			t.Errorf("%s: %+v", kind, f)
		}
		if got := float64(f.DiskBytes) / float64(f.LogicalBytes); got != f.DiskRatio {
			t.Errorf("%s: diskRatio %v, not %d / %d", kind, f.DiskRatio, f.DiskBytes, f.LogicalBytes)
		}
	}
}
