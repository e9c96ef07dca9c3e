package folder

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/minca-go/minca/engine"
)

func markerBytes(id string) []byte {
	b, _ := json.Marshal(marker{Minca: "blobs", V: 1, ID: id})
	return b
}

// F1, case 8: copies of the marker that a sync service made when two
// devices set up one folder at once are read; the store's id is the
// smallest valid one on every device, whichever copy holds it; identical
// copies are tidied away, others left.
func TestMarkerCopies(t *testing.T) {
	ctx := context.Background()
	m := NewMemFS()
	root := "/data/minca/"
	m.WriteFile(root+MarkerName, markerBytes("bbbb"))
	m.WriteFile(root+"minca-store (Bob's conflicted copy 2026-01-02).json", markerBytes("aaaa"))
	m.WriteFile(root+"minca-store 2.json", markerBytes("bbbb"))                    // iCloud, identical
	m.WriteFile(root+"minca-store (1).json", markerBytes("bbbb"))                  // Google Drive, identical
	m.WriteFile(root+"minca-store.sync-conflict-20260102-1-ABC.json", []byte("{")) // torn: not a marker
	m.WriteFile(root+".minca-store.json.tmp", markerBytes("0000"))                 // a temp file: never a marker
	m.WriteFile(root+"segments/minca-store 3.json", markerBytes("0001"))           // not at the root
	s, err := Open("/data/minca", &Options{FS: m})
	if err != nil {
		t.Fatal(err)
	}
	if s.StoreID() != "aaaa" {
		t.Fatalf("store id %q, want the smallest valid one", s.StoreID())
	}
	ids, err := s.StoreIDs(ctx)
	if err != nil || strings.Join(ids, ",") != "aaaa,bbbb" {
		t.Fatalf("ids %v %v", ids, err)
	}
	removed, left, err := s.TidyMarkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	sort.Strings(left)
	if strings.Join(removed, "|") != "minca-store (1).json|minca-store 2.json" {
		t.Fatalf("removed %v", removed)
	}
	if strings.Join(left, "|") != "minca-store (Bob's conflicted copy 2026-01-02).json|minca-store.sync-conflict-20260102-1-ABC.json" {
		t.Fatalf("left %v", left)
	}
	if ids, _ := s.StoreIDs(ctx); strings.Join(ids, ",") != "aaaa,bbbb" {
		t.Fatalf("tidying changed the ids: %v", ids)
	}
	// The sync service renamed the marker away and has not brought the
	// other yet: a copy alone keeps the store there.
	_ = m.Remove(root + MarkerName)
	if _, err := s.List(ctx, "segments/", "", 0); err != nil {
		t.Fatalf("with only a copy of the marker: %v", err)
	}
	if ids, _ := s.StoreIDs(ctx); strings.Join(ids, ",") != "aaaa" {
		t.Fatalf("ids %v", ids)
	}
	_ = m.Remove(root + "minca-store (Bob's conflicted copy 2026-01-02).json")
	if _, err := s.List(ctx, "segments/", "", 0); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("with no valid marker left: %v", err)
	}
	if _, err := s.StoreIDs(ctx); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("ids with no valid marker: %v", err)
	}
}

// RemoveStray removes a copy only while it holds exactly the bytes it was
// compared by, never the marker, never outside the root.
func TestRemoveStray(t *testing.T) {
	ctx := context.Background()
	s, m := openMem(t)
	root := "/data/minca/"
	cp := strings.TrimSuffix(seg, ".seg") + " (conflicted copy).seg"
	m.WriteFile(root+cp, []byte("same"))
	if err := s.RemoveStray(ctx, cp, []byte("other")); err == nil {
		t.Fatal("removed a stray that differs")
	}
	if err := s.RemoveStray(ctx, cp, []byte("sam")); err == nil {
		t.Fatal("removed a stray of another size")
	}
	m.SetDataless(root+cp, true)
	if err := s.RemoveStray(ctx, cp, []byte("same")); err == nil {
		t.Fatal("removed a placeholder it could not compare")
	}
	m.SetDataless(root+cp, false)
	if err := s.RemoveStray(ctx, cp, []byte("same")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, cp); !errors.Is(err, engine.ErrBlobNotFound) {
		t.Fatalf("after removal: %v", err)
	}
	marker, _ := m.ReadFile(root + MarkerName)
	for _, bad := range []string{MarkerName, "../x", "/etc/passwd", ""} {
		if err := s.RemoveStray(ctx, bad, marker); !errors.Is(err, engine.ErrBlobName) {
			t.Errorf("remove %q: %v", bad, err)
		}
	}
	if _, err := m.Stat(root + MarkerName); err != nil {
		t.Fatal("the marker went")
	}
}

// A store made with a seeded Rand gets the same id every time.
func TestSeededStoreID(t *testing.T) {
	ids := map[string]bool{}
	for i := 0; i < 2; i++ {
		m := NewMemFS()
		s, err := Open("/r", &Options{FS: m, Create: true, Rand: strings.NewReader(strings.Repeat("x", 10))})
		if err != nil {
			t.Fatal(err)
		}
		ids[s.StoreID()] = true
		if s.Locate() != "/r" {
			t.Fatalf("locate %q", s.Locate())
		}
	}
	if len(ids) != 1 {
		t.Fatalf("ids %v", ids)
	}
}
