package sqlite_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/backends/sqlite/sqlitetest"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// sqlite:PATH names the database file: the lock file is beside it, and
// the file is a SQLite database holding the store's table.
func TestPathIsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "store.db")
	sqlitetest.Fill(t, path, func() {
		if _, err := os.Stat(path + sqlite.LockSuffix); err != nil {
			t.Fatal("the lock beside the database:", err)
		}
	})
	es, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "store.db store.db.lock" {
		t.Fatalf("beside a closed store: %q", names)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + sqlitetest.RowsTable(t, db)).Scan(&n); err != nil || n == 0 {
		t.Fatalf("the file as a SQLite database: %d rows, %v", n, err)
	}
}

// A store that must exist and does not is ErrNoStore, "no store at PATH",
// and nothing is created.
func TestMustExist(t *testing.T) {
	for _, o := range []sqlite.Options{{MustExist: true}, {ReadOnly: true}} {
		dir := t.TempDir()
		missing := filepath.Join(dir, "sub", "dbb")
		_, err := sqlite.Open(missing, &o)
		if !errors.Is(err, engine.ErrNoStore) || err.Error() != "no store at "+missing {
			t.Fatalf("%+v: %v", o, err)
		}
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Fatalf("%+v: %d files created", o, len(es))
		}
		if _, err := sqlite.Open(dir, &o); !errors.Is(err, engine.ErrNoStore) {
			t.Fatalf("%+v, a directory without a store: %v", o, err)
		}
		empty := filepath.Join(dir, "empty")
		os.WriteFile(empty, nil, 0o644)
		if _, err := sqlite.Open(empty, &o); !errors.Is(err, engine.ErrNoStore) {
			t.Fatalf("%+v, an empty file: %v", o, err)
		}
		other := filepath.Join(dir, "other.db") // a SQLite database, not a store
		db, err := sql.Open("sqlite", other)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		was, _ := os.ReadFile(other)
		if _, err := sqlite.Open(other, &o); !errors.Is(err, engine.ErrNoStore) || !strings.Contains(err.Error(), other) {
			t.Fatalf("%+v, a SQLite database of something else: %v", o, err)
		}
		if es, _ := os.ReadDir(dir); len(es) != 2 {
			t.Fatalf("%+v: files created beside files that are not stores: %d", o, len(es))
		}
		if is, _ := os.ReadFile(other); !bytes.Equal(is, was) {
			t.Fatalf("%+v: the other database was changed", o)
		}
	}
}

// A store opened read-only reads everything and writes nothing, on a
// write-protected directory (or, as root, where that stops nothing, with
// no file created or changed).
func TestReadOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	path := filepath.Join(dir, "store.db")
	vs := sqlitetest.Fill(t, path, nil)
	localtest.WriteProtect(t, dir)
	before := localtest.List(t, dir)
	kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	localtest.ReadBack(t, kv, vs)
	before.Same(t, localtest.List(t, dir))
}

// After a crash the write-ahead log holds committed batches: a read-only
// open reads them (SQLite reads the log through PATH-shm, its shared
// memory, which it may write), and writes neither the database nor the
// log.
func TestReadOnlyAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	crashed := filepath.Join(t.TempDir(), "store.db")
	vs := sqlitetest.Fill(t, path, func() { // the files as a crash would leave them
		for _, suffix := range []string{"", "-wal", "-shm", sqlite.LockSuffix} {
			b, err := os.ReadFile(path + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(crashed+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	if st, err := os.Stat(crashed + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no log left to read: %v", err)
	}
	before := localtest.List(t, filepath.Dir(crashed))
	kv, err := sqlite.Open(crashed, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	localtest.ReadBack(t, kv, vs)
	after := localtest.List(t, filepath.Dir(crashed))
	delete(before, crashed+"-shm")
	delete(after, crashed+"-shm")
	before.Same(t, after)
}

// Readers share the store; a writer is kept out while one reads, and a
// reader while one writes.
func TestReadOnlyLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	sqlitetest.Fill(t, path, nil)
	ro := &sqlite.Options{ReadOnly: true}
	r1, err := sqlite.Open(path, ro)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := sqlite.Open(path, ro)
	if err != nil {
		t.Fatal("a second reader:", err)
	}
	if _, err := sqlite.Open(path, nil); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("a writer beside readers: %v", err)
	}
	r1.Close()
	r2.Close()
	w, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := sqlite.Open(path, ro); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("a reader beside a writer: %v", err)
	}
}

// A store made the earlier way — a directory holding minca.sqlite, locked
// by minca.lock — opens as it is, for reading and writing, and the log
// says once how to move it into a file.
func TestEarlierLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old")
	vs := sqlitetest.Fill(t, filepath.Join(dir, sqlite.OldFileName), nil)
	os.Remove(filepath.Join(dir, sqlite.OldFileName+sqlite.LockSuffix))
	for _, ro := range []bool{true, false} {
		var log bytes.Buffer
		kv, err := sqlite.Open(dir, &sqlite.Options{ReadOnly: ro, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(log.String(), "\n"); n != 1 || !strings.Contains(log.String(), "minca store export --store sqlite:"+dir+" | minca store import --store sqlite:NEWFILE") {
			t.Fatalf("the log: %q", log.String())
		}
		if _, err := os.Stat(filepath.Join(dir, sqlite.OldLockName)); err != nil && !ro {
			t.Fatal("the lock of the earlier layout:", err)
		}
		if ro {
			localtest.ReadBack(t, kv, vs)
			continue
		}
		if _, err := sqlite.Open(dir, nil); !errors.Is(err, engine.ErrLocked) {
			t.Fatalf("a second writer: %v", err)
		}
		b, err := kv.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		b.Set([]byte("written"), []byte("there"))
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
		kv.Close()
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Fatalf("the earlier layout's directory holds %d files", len(es))
	}
}

// A store owned by another user, in a directory this one cannot write: run
// as user nobody (the tests run as root; as another user TestReadOnly's
// write-protected directory is the same case), a read-only open reads it
// all and writes nothing, closed cleanly or with a log left by a crash
// (SQLite then keeps the log's index in memory: PATH-shm is not
// writable). The test run as nobody is this test itself.
func TestReadOnlyAnotherUser(t *testing.T) {
	if path := localtest.OtherUserStore(); path != "" {
		kv, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(localtest.Summary(localtest.ReadAll(t, kv)))
		return
	}
	dir, bin, ok := localtest.OtherUserDir(t)
	if !ok {
		t.Skip("only root runs a process as another user; TestReadOnly covers this user")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(dir, "clean.db")
	crashed := filepath.Join(dir, "crashed.db")
	vs := sqlitetest.Fill(t, clean, nil)
	vs2 := sqlitetest.Fill(t, filepath.Join(dir, "live.db"), func() {
		for _, suffix := range []string{"", "-wal", "-shm", sqlite.LockSuffix} {
			b, err := os.ReadFile(filepath.Join(dir, "live.db") + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(crashed+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	for path, vs := range map[string][]*record.Version{clean: vs, crashed: vs2} {
		before := localtest.List(t, dir)
		out := localtest.ReadAsOtherUser(t, bin, "TestReadOnlyAnotherUser", path)
		if want := localtest.Summary(localtest.IDs(vs)); !strings.Contains(out, want) {
			t.Fatalf("%s read as nobody:\n%s\nwant %s", path, out, want)
		}
		before.Same(t, localtest.List(t, dir))
	}
}
