package foldertest

import (
	"bytes"
	"testing"
)

func twoDevices(o Options) *Sim {
	o.Devices = []Device{{Name: "one", Root: "/a/f", Style: Dropbox}, {Name: "two", Root: "/b/f", Style: ICloud}}
	return New(o)
}

// Files reach the other device, deletes too; two devices writing one path
// leave one copy of each, the loser's as a conflicted copy in its style.
func TestSyncsAndConflicts(t *testing.T) {
	styles := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		s := twoDevices(Options{Seed: seed})
		s.FS.WriteFile("/a/f/x/file.seg", []byte("from one"))
		s.Settle()
		if got := s.Files(1)["x/file.seg"]; string(got) != "from one" {
			t.Fatalf("not delivered: %q", got)
		}
		_ = s.FS.Remove("/a/f/x/file.seg")
		s.Settle()
		if _, ok := s.Files(1)["x/file.seg"]; ok {
			t.Fatal("the delete did not reach device two")
		}
		// Both write one path before the service sees either.
		s.FS.WriteFile("/a/f/m.json", []byte("A"))
		s.FS.WriteFile("/b/f/m.json", []byte("B"))
		s.Settle()
		a, b := s.Files(0), s.Files(1)
		if len(a) != 2 || len(b) != 2 || !bytes.Equal(a["m.json"], b["m.json"]) {
			t.Fatalf("after a conflict: %v and %v", keys(a), keys(b))
		}
		var copyName string
		for n := range a {
			if n != "m.json" {
				copyName = n
			}
		}
		switch {
		case copyName == "m (one's conflicted copy 2026-01-02).json":
			styles["Dropbox"] = true
		case copyName == "m 2.json":
			styles["iCloud"] = true
		default:
			t.Fatalf("conflicted copy named %q", copyName)
		}
		if bytes.Equal(a["m.json"], a[copyName]) {
			t.Fatal("the copy holds the winner's bytes")
		}
	}
	if len(styles) != 2 {
		t.Fatalf("over 8 seeds only %v lost a race", styles)
	}
}

// Faults: a partial delivery is damage until it completes; a folder sent
// away is gone and comes back whole; the same seed does the same.
func TestFaults(t *testing.T) {
	s := twoDevices(Options{Seed: 2, Partial: 1})
	s.FS.WriteFile("/a/f/s/1.seg", bytes.Repeat([]byte("x"), 100))
	for i := 0; i < 8 && len(s.Damaged(1)) == 0; i++ {
		s.Step()
	}
	if !s.Damaged(1)["s/1.seg"] || len(s.Files(1)["s/1.seg"]) >= 100 {
		t.Fatalf("no partial delivery: %v", s.Damaged(1))
	}
	s.Settle()
	if len(s.Damaged(1)) != 0 || len(s.Files(1)["s/1.seg"]) != 100 || !s.Quiet() {
		t.Fatal("not whole after settling")
	}

	s = twoDevices(Options{Seed: 3, Away: 1, AwaySteps: 2})
	s.FS.WriteFile("/b/f/s/1.seg", []byte("kept"))
	s.Step()
	if !s.Away(0) || len(s.Files(0)) != 0 {
		t.Fatal("device one's folder is still there")
	}
	s.Settle()
	if s.Away(0) || string(s.Files(0)["s/1.seg"]) != "kept" {
		t.Fatalf("after coming back: %v", keys(s.Files(0)))
	}

	run := func() Stats {
		s := twoDevices(Options{Seed: 4, Partial: 0.3, Placeholder: 0.3, Corrupt: 0.2, Duplicate: 0.3, LateDelete: 0.3, Resurrect: 0.3, Away: 0.1})
		for i := 0; i < 40; i++ {
			s.FS.WriteFile("/a/f/s/"+string(rune('a'+i%26))+".seg", bytes.Repeat([]byte{byte(i)}, 50))
			if i%3 == 0 {
				_ = s.FS.Remove("/a/f/s/" + string(rune('a'+(i/3)%26)) + ".seg")
			}
			s.Step()
		}
		return s.Stats()
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("one seed, two runs: %+v and %+v", a, b)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
