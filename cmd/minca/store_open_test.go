package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A typo in a store path (issue 12, case 3): every verb that only reads a
// store, or reads a blob store, says "no store at PATH" and exits 3, and
// creates nothing.
//
// The stores are named relative to the working directory, as a person
// names them: minca runs as a process there (mincaProcess), with a cache
// directory of its own.
func TestMissingStoreIsNotCreated(t *testing.T) {
	t.Parallel()
	sp := "space"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"store", "get", "--store", "dbb", sp, "k"}, "no store at dbb"},
		{[]string{"store", "history", "--store", "dbb", sp, "k"}, "no store at dbb"},
		{[]string{"store", "export", "--store", "dbb"}, "no store at dbb"},
		{[]string{"store", "stats", "--store", "dbb"}, "no store at dbb"},
		{[]string{"store", "check", "--store", "dbb"}, "no store at dbb"},
		{[]string{"store", "get", "--store", "pebble:dbb", sp, "k"}, "no store at pebble:dbb"},
		{[]string{"store", "stats", "--store", "sqlite:dbb"}, "no store at sqlite:dbb"},
		{[]string{"store", "stats", "--store", "folder:dbb"}, "no store at folder:dbb"},
		{[]string{"restore", "--from", "folder:dbb", "--store", "out"}, "no store at folder:dbb"},
		{[]string{"backup", "--store", "dbb", "--to", "folder:out"}, "no store at dbb"},
		{[]string{"compact", "--store", "dbb", "--blobs", "folder:out"}, "no store at dbb"},
	} {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, errOut, code := mincaProcess(t, dir, withEnv([]string{"XDG_CACHE_HOME=" + filepath.Join(t.TempDir(), "cache")}), "", c.args...)
			if code != exitNotFound || out != "" || !strings.Contains(errOut, c.msg+"\n") {
				t.Fatalf("minca %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(c.args, " "), code, out, errOut, c.msg)
			}
			for _, p := range []string{"dbb", "out"} {
				if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("minca %s made %s", strings.Join(c.args, " "), p)
				}
			}
		})
	}
}

// storeTree is every file under root with its mode, size and mtime.
func storeTree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		lines = append(lines, p+" "+fi.Mode().String()+" "+strconv.FormatInt(fi.Size(), 10)+" "+fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Read-only access (issue 12, case 4): a store on a read-only filesystem
// or owned by another user is read by get, history, export, stats and
// check, which write nothing, lock file included. As root, chmod does not
// stop writes: then the test rests on nothing in the store having changed.
func TestReadVerbsWriteNothing(t *testing.T) {
	file, sp, vs := corpusFile(t)
	for _, scheme := range []string{"pebble:", "sqlite:"} {
		t.Run(scheme, func(t *testing.T) {
			// The store in a directory of its own, so that a file a reader
			// made beside it (a lock, a log) would show too.
			dir := t.TempDir()
			url := scheme + filepath.Join(dir, "store")
			// The corpus ends with one line that is not a version: exit 1.
			if _, e, code := minca(t, "", "store", "import", "--judge", "roots", "--store", url, file); code != exitFailed {
				t.Fatalf("import: exit %d, want 1 (one refused line): %s", code, e)
			}
			// The store is closed: its lock file goes, so that one made by
			// a reader would show.
			locks, _ := filepath.Glob(filepath.Join(dir, "*", "*.lock"))
			more, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
			if locks = append(locks, more...); len(locks) == 0 {
				t.Fatal("no lock file after import")
			}
			for _, l := range locks {
				if err := os.Remove(l); err != nil {
					t.Fatal(err)
				}
			}
			if err := chmodTree(dir, false); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { chmodTree(dir, true) })
			before := storeTree(t, dir)
			last := vs[len(vs)-1]
			for _, args := range [][]string{
				{"store", "get", "--store", url, sp, last.Key},
				{"store", "history", "--store", url, sp, last.Key},
				{"store", "export", "--store", url},
				{"store", "stats", "--store", url},
				{"store", "check", "--judge", "roots", "--store", url},
			} {
				out, errOut, code := minca(t, "", args...)
				if code != 0 || out == "" && args[1] != "check" {
					t.Fatalf("minca %s on a read-only store: exit %d %s", strings.Join(args, " "), code, errOut)
				}
			}
			if after := storeTree(t, dir); after != before {
				t.Fatalf("reading verbs wrote to the store:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// chmodTree takes write permission away from every file and directory
// under root, or gives it back.
func chmodTree(root string, writable bool) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m := fi.Mode().Perm() &^ 0o222
		if writable {
			m |= 0o200
		}
		return os.Chmod(p, m)
	})
}
