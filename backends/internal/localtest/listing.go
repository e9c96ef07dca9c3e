package localtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Listing is what a directory tree holds: each file's and directory's
// mode, size and modification time, by path.
type Listing map[string]string

// List lists the tree at dir.
func List(t *testing.T, dir string) Listing {
	t.Helper()
	l := Listing{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		l[p] = fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Same fails t where after differs from l: a file created, removed or
// changed.
func (l Listing) Same(t *testing.T, after Listing) {
	t.Helper()
	for p, a := range after {
		if b, ok := l[p]; !ok {
			t.Errorf("%s was created", p)
		} else if a != b {
			t.Errorf("%s changed: %s, was %s", p, a, b)
		}
	}
	for p := range l {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		}
	}
}

// WriteProtect takes the write permission off dir and everything in it
// until the test ends, and reports whether that stops this process from
// writing there (it does not for root, who may then check with List).
func WriteProtect(t *testing.T, dir string) bool {
	t.Helper()
	modes := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		modes[p] = info.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, m := range modes {
		if err := os.Chmod(p, m&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for p, m := range modes {
			os.Chmod(p, m)
		}
	})
	probe := filepath.Join(dir, ".write-probe")
	f, err := os.Create(probe)
	if err != nil {
		return true
	}
	f.Close()
	os.Remove(probe)
	return false
}
