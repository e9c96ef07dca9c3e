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

// The files a store lacks, as MissingFiles lists them from its files
// index, are those a full scan of the versions held whole finds not held:
// after versions naming files arrive in random order (stale ones as
// stubs, bodies taken and dropped, retained versions, deletes), files
// arrive and are deleted, and the store is reopened.
func testFilesIndex(t *testing.T, openPath func(string) (engine.KV, error)) {
	dir := filepath.Join(t.TempDir(), "store")
	files := engine.NewMemoryFiles()
	open := func() *engine.Store {
		t.Helper()
		kv, err := openPath(dir)
		if err != nil {
			t.Fatal(err)
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
			return func(o *canonical.Object) { withFiles(fs...)(o); corpus.Retain(o) }
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
		if step++; step%10 == 0 {
			s.Close()
			s = open()
		}
		missingAgrees(t, s, spaces, fmt.Sprintf("after step %d", step))
	}
	s.Close()
	s = open()
	missingAgrees(t, s, spaces, "after the last reopen")
	clean(t, s)
}

// missingAgrees requires that MissingFiles, in every space and in each,
// lists what a scan of the versions held whole and the files held finds.
func missingAgrees(t *testing.T, s *engine.Store, spaces []string, when string) {
	t.Helper()
	// The scan: files named by versions held whole, not held, not empty.
	want := map[string]map[string]bool{"": {}} // space → hashes
	namers := map[string]bool{}                // space hash version
	if err := s.NamedFiles(ctx, "", func(f engine.NamedFile) bool {
		namers[f.Space+" "+f.Hash+" "+f.Version] = true
		if held := must[bool](t)(s.HasFile(ctx, f.Hash)); !held && f.Size > 0 {
			if want[f.Space] == nil {
				want[f.Space] = map[string]bool{}
			}
			want[f.Space][f.Hash], want[""][f.Hash] = true, true
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for _, sp := range append([]string{""}, spaces...) {
		var got []string
		if err := s.MissingFiles(ctx, sp, func(f engine.NamedFile) bool {
			if !namers[f.Space+" "+f.Hash+" "+f.Version] || sp != "" && f.Space != sp {
				t.Errorf("%s: MissingFiles(%q) gives %s in %s as named by %s, which does not name it held whole", when, sp, f.Hash, f.Space, f.Version)
			}
			got = append(got, f.Hash)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		var exp []string
		for h := range want[sp] {
			exp = append(exp, h)
		}
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: MissingFiles(%q) lists\n%s\na scan of the versions finds\n%s", when, sp, strings.Join(got, "\n"), strings.Join(exp, "\n"))
		}
	}
	if held := must[bool](t)(s.HasFile(ctx, fileOf(nil).Hash)); !held && len(namers) > 0 {
		for k := range namers {
			if strings.Contains(k, " "+fileOf(nil).Hash+" ") {
				t.Fatalf("%s: the empty file is named and was not made", when)
			}
		}
	}
}
