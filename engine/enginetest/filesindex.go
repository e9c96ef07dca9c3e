package enginetest

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/record"
)

// The files index agrees with the versions: NamedFiles lists exactly the
// files the versions held whole name (as Export gives them, read apart
// from the index), and MissingFiles those of them not held, after versions
// naming files arrive in random order (stale ones as stubs, bodies taken
// and dropped, retained versions, deletes), files arrive and are deleted,
// and, on a backend that can reopen a store, the store is reopened.
func (h *harness) testFilesIndex(t *testing.T, openPath func(string) (engine.KV, error)) {
	dir := filepath.Join(t.TempDir(), "store")
	files := engine.NewMemoryFiles()
	open := func() *engine.Store {
		t.Helper()
		var kv engine.KV
		if openPath == nil {
			kv = h.open(t)
		} else {
			var err error
			if kv, err = openPath(dir); err != nil {
				t.Fatal(err)
			}
		}
		s, err := engine.Open(kv, &engine.Options{Judge: Judge{}, Files: files})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rnd := rand.New(rand.NewPCG(26, 1))
	pool := make([][]byte, 12)
	for i := range pool {
		pool[i] = []byte(fmt.Sprintf("file %d of the pool", i))
	}
	pool = append(pool, nil) // the empty file: never missing, every store makes it
	named := func() corpus.Opt {
		var fs []engine.FileRef
		for range rnd.IntN(3) {
			fs = append(fs, fileOf(pool[rnd.IntN(len(pool))]))
		}
		if rnd.IntN(5) == 0 {
			return func(d *record.Draft) { withFiles(fs...)(d); corpus.Retain(d) }
		}
		return withFiles(fs...)
	}
	spaces := []string{SpaceID("files index one"), SpaceID("files index two")}
	var vs []*record.Version
	for _, sp := range spaces {
		for range 3 {
			w := writer(t, sp)
			for r := range 8 {
				v := must[*record.Version](t)(w.First("app.album", canonical.NewObject("r", float64(r)), named()))
				vs = append(vs, v)
				for e := range rnd.IntN(4) {
					v = must[*record.Version](t)(w.Next(v, canonical.NewObject("r", float64(r), "e", float64(e)), named()))
					vs = append(vs, v)
				}
				if rnd.IntN(4) == 0 {
					vs = append(vs, must[*record.Version](t)(w.Delete(v)))
				}
			}
		}
	}
	for _, v := range vs[:len(vs)/3] {
		vs = append(vs, v.Stub()) // a stub first takes its body when the version comes whole
	}
	rnd.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })

	s := open()
	defer func() { s.Close() }()
	step := 0
	for len(vs) > 0 {
		n := min(len(vs), 1+rnd.IntN(6))
		admit(t, s, "peer", vs[:n]...)
		vs = vs[n:]
		f := pool[rnd.IntN(len(pool)-1)]
		switch rnd.IntN(3) {
		case 0:
			if err := s.PutFile(ctx, fileOf(f).Hash, f); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := s.DeleteFile(ctx, fileOf(f).Hash); err != nil {
				t.Fatal(err)
			}
		}
		if step++; step%10 == 0 && openPath != nil {
			s.Close()
			s = open()
		}
		missingAgrees(t, s, spaces, fmt.Sprintf("after step %d", step))
	}
	if openPath != nil {
		s.Close()
		s = open()
	}
	missingAgrees(t, s, spaces, "at the end")
	clean(t, s)
}

// missingAgrees requires that NamedFiles lists, in every space and in
// each, the files the versions Export gives whole name, and MissingFiles
// those of them neither held nor empty.
func missingAgrees(t *testing.T, s *engine.Store, spaces []string, when string) {
	t.Helper()
	// The truth, read apart from the index: space → "hash size version"
	// named, and space → hashes lacking.
	named := map[string][]string{}
	lacking := map[string]map[string]bool{"": {}}
	for v, err := range s.Export(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if !v.HasBody {
			continue
		}
		seen := map[canonical.ID]bool{}
		for _, f := range v.Files {
			if seen[f.Hash] {
				continue // a version naming a file twice names it once
			}
			seen[f.Hash] = true
			line := fmt.Sprintf("%s %d %s", f.Hash, f.Size, v.ID)
			named[v.Space] = append(named[v.Space], line)
			named[""] = append(named[""], v.Space+" "+line)
			if held := must[bool](t)(s.HasFile(ctx, f.Hash)); !held && f.Size > 0 {
				if lacking[v.Space] == nil {
					lacking[v.Space] = map[string]bool{}
				}
				lacking[v.Space][f.Hash.String()], lacking[""][f.Hash.String()] = true, true
			}
		}
	}
	namers := map[string]bool{}
	for _, l := range named[""] {
		namers[l] = true
	}
	for _, sp := range append([]string{""}, spaces...) {
		var got []string
		if err := s.NamedFiles(ctx, sp, func(f engine.NamedFile) bool {
			line := fmt.Sprintf("%s %d %s", f.Hash, f.Size, f.Version)
			if sp == "" {
				line = f.Space + " " + line
			} else if f.Space != sp {
				t.Errorf("%s: NamedFiles(%q) gives %s in space %s", when, sp, f.Hash, f.Space)
			}
			got = append(got, line)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		exp := named[sp]
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: NamedFiles(%q) lists\n%s\nthe versions held whole name\n%s", when, sp, strings.Join(got, "\n"), strings.Join(exp, "\n"))
		}
		got = nil
		if err := s.MissingFiles(ctx, sp, func(f engine.NamedFile) bool {
			if !namers[fmt.Sprintf("%s %s %d %s", f.Space, f.Hash, f.Size, f.Version)] || sp != "" && f.Space != sp {
				t.Errorf("%s: MissingFiles(%q) gives %s in %s as named by %s, which does not name it held whole", when, sp, f.Hash, f.Space, f.Version)
			}
			got = append(got, f.Hash.String())
			return true
		}); err != nil {
			t.Fatal(err)
		}
		exp = nil
		for h := range lacking[sp] {
			exp = append(exp, h)
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: MissingFiles(%q) lists\n%s\nthe versions held whole name, not held\n%s", when, sp, strings.Join(got, "\n"), strings.Join(exp, "\n"))
		}
	}
	empty := fileOf(nil).Hash
	if held := must[bool](t)(s.HasFile(ctx, empty)); !held {
		for _, l := range named[""] {
			if strings.Contains(l, " "+empty.String()+" ") {
				t.Fatalf("%s: the empty file is named and was not made", when)
			}
		}
	}
}
