package mirror_test

import (
	"path"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
)

// Case 10 (issue 12): copies a sync service made of a writer's own
// segments and of the marker are removed by the writer once proven
// byte-identical (to the segment it keeps, or, for one it compacted away,
// to what it published); copies it cannot prove identical, and anything
// of another writer's, are left, and the ones of its own are named on the
// log.
func TestDuplicatesTidied(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("tidy")
	var logs logBuffer
	a := newDevice(t, space, b, 1, &mirror.Options{CompactAt: -1, Logger: logs.logger()})
	c := newDevice(t, space, b, 2, &mirror.Options{CompactAt: -1})
	s1 := writeAndExport(t, a, 0, 2)
	s2 := writeAndExport(t, a, 10, 2)
	cs := writeAndExport(t, c, 20, 2)
	d1, _ := b.Get(ctx, s1)
	d2, _ := b.Get(ctx, s2)
	dc, _ := b.Get(ctx, cs)
	marker, _ := m.ReadFile(root + folder.MarkerName)
	stem := func(n string) string { return strings.TrimSuffix(n, ".seg") }
	wa, _ := a.m.Writer(ctx)
	identical := []string{
		stem(s1) + " (Bob's conflicted copy 2026-01-02).seg", // Dropbox
		stem(s1) + " 2.seg",                                     // iCloud
		"segments 2/" + wa + "/" + path.Base(s1),                // iCloud, a copied folder
		stem(s2) + ".sync-conflict-20260102-101010-ABCDEF7.seg", // Syncthing
		stem(s2) + "-desktop-4f2.seg",                           // OneDrive, in our grammar
	}
	for _, n := range identical[:3] {
		m.WriteFile(root+n, d1)
	}
	for _, n := range identical[3:] {
		m.WriteFile(root+n, d2)
	}
	differs := stem(s2) + " (1).seg"
	flipped := append([]byte(nil), d2...)
	flipped[len(flipped)/2] ^= 1
	m.WriteFile(root+differs, flipped)
	others := stem(cs) + " (Bob's conflicted copy 2026-01-02).seg" // another writer's: theirs to tidy
	m.WriteFile(root+others, dc)
	m.WriteFile(root+"minca-store (1).json", marker)
	m.WriteFile(root+"minca-store 2.json", []byte(`{"minca":"blobs","v":1,"id":"ffffffffffffffffffff"}`))

	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	exists := func(n string) bool { _, err := m.Stat(root + n); return err == nil }
	for _, n := range identical {
		if exists(n) {
			t.Errorf("identical copy %s left", n)
		}
	}
	for _, n := range []string{differs, others, "minca-store 2.json", s1, s2, cs, folder.MarkerName} {
		if !exists(n) {
			t.Errorf("%s was removed", n)
		}
	}
	if exists("minca-store (1).json") {
		t.Error("an identical copy of the marker was left")
	}
	if got := a.m.Stats().Duplicates; got != int64(len(identical)) {
		t.Fatalf("%d duplicates removed, want %d", got, len(identical))
	}
	out := logs.String()
	if !strings.Contains(out, differs) || !strings.Contains(out, "minca-store 2.json") {
		t.Fatalf("what was left is not named on the log:\n%s", out)
	}
	// Said once, not every round.
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), differs); n != 1 {
		t.Fatalf("the copy left was named %d times", n)
	}

	// A copy of a segment compacted away is ours too: proven by the hash
	// published at its sequence, and removed.
	if _, err := a.m.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(s1) {
		t.Fatal("compaction left s1")
	}
	old := stem(s1) + " (conflicted copy 2).seg"
	m.WriteFile(root+old, d1)
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(old) {
		t.Fatal("a copy of a compacted-away segment of ours was left")
	}
	// The other writer tidies its own.
	if err := c.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if exists(others) {
		t.Fatal("the other writer left its own copy")
	}
	n := newDevice(t, space, b, 3, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if len(heldSet(t, n.s)) != 6 {
		t.Fatalf("%d versions after tidying", len(heldSet(t, n.s)))
	}
}
