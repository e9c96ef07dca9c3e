package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
)

// store stats shows what waits (02 §9.5): how many versions, their bytes,
// and the sources holding them, a peer's (a did:key) bounded and the
// node's own imports not (docs/sync.md §7.3).
func TestStoreStatsShowsWaiting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "pebble:" + filepath.Join(dir, "db")
	// A space whose genesis the store does not hold: every version waits.
	mine := versionsFile(t, dir, "mine.jsonl", 30, 1)
	theirs := versionsFile(t, dir, "theirs.jsonl", 20, 2)
	mustRun(t, "store", "import", "--store", store, mine)
	mustRun(t, "store", "import", "--store", store, "--from", "did:key:zDnaePeer", theirs)
	var st struct {
		engine.Stats
		WaitingSources []engine.WaitingSource `json:"waitingSources"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "store", "stats", "--store", store)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Waiting != 50 || st.WaitingBytes <= 0 || st.WaitingDropped != 0 || len(st.WaitingSources) != 2 {
		t.Fatalf("store stats: %+v", st)
	}
	for _, s := range st.WaitingSources {
		if want := s.From == "did:key:zDnaePeer"; s.Bounded != want || s.Versions != map[bool]int64{true: 20, false: 30}[want] || s.Bytes <= 0 {
			t.Errorf("waiting from %+v", s)
		}
	}
}
