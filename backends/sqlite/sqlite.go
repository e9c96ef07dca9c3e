// Package sqlite is an [engine.KV] on SQLite (modernc.org/sqlite, pure Go):
// one table of (key, value) blobs, WITHOUT ROWID, in a database file inside
// a store directory (DIR/minca.sqlite), locked while open (DIR/minca.lock,
// gofrs/flock): a second opener gets [engine.ErrLocked] naming the path.
//
// Durability: the database is in WAL mode with synchronous=FULL. In WAL
// mode FULL syncs the log at every commit, so a transaction that committed
// survives a crash of the process or the machine; NORMAL, the usual WAL
// choice, syncs only at checkpoints and can lose the last commits on power
// loss — and the engine acknowledges a version only once it is durable.
// Every commit is therefore synced, engine.NoSync or not.
//
// Cost: a batch dirties a few thousand pages, each written to the log at
// commit. The log is checkpointed into the database every 16,384 pages
// (64 MiB, so the log file grows to about that), not every 1,000 as by
// default: a page rewritten by several batches in between is copied once.
// Statement journals (a multi-row INSERT keeps one) stay in memory
// (temp_store=MEMORY) instead of a temporary file written page by page.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gofrs/flock"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/minca-go/minca/engine"
)

// Options configures Open; nil means the defaults.
type Options struct {
	// CacheKiB is SQLite's page cache per connection, in KiB. Default
	// 65,536 (64 MiB).
	CacheKiB int
	// BusyTimeoutMillis is how long a statement waits on a lock, in ms.
	// Default 5,000.
	BusyTimeoutMillis int
	// ReadOnly opens an existing store for reading only: nothing is
	// written (no lock file, no log, no recovery), so a store on a
	// read-only filesystem or owned by another user can be read; a write
	// fails with engine.ErrReadOnly. Implies MustExist.
	ReadOnly bool
	// MustExist refuses to create a store: where there is none, Open
	// returns an error wrapping engine.ErrNoStore naming the path.
	// Default false (Open creates the store).
	MustExist bool
}

// Store is an engine.KV on SQLite.
type Store struct {
	db *sql.DB
	// own is the connection the engine's batches and read-ahead use, one
	// at a time (ownMu): each SQLite connection has its own page cache,
	// and drops all of it when it finds the database changed by another,
	// so writing on one connection and reading ahead on another would
	// empty both caches at every batch.
	own              *sql.Conn
	ownMu            sync.Mutex
	get, it, itOpen  *sql.Stmt
	getN, setN, delN *sql.Stmt // chunkRows keys or rows at once
	lock             *flock.Flock
	dir              string
}

// chunkRows is how many rows one statement writes (or keys one reads):
// a batch of thousands of keys costs tens of statements, not thousands.
const chunkRows = 128

func placeholders(n int, row string) string {
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

var _ engine.KV = (*Store)(nil)

// File and lock names inside the store directory.
const (
	FileName = "minca.sqlite"
	LockName = "minca.lock"
)

// Open opens (creating if needed) the store in directory dir.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CacheKiB <= 0 {
		o.CacheKiB = 64 << 10
	}
	if o.BusyTimeoutMillis <= 0 {
		o.BusyTimeoutMillis = 5000
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: store %s: %w", dir, err)
	}
	lock := flock.New(filepath.Join(dir, LockName))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("sqlite: store %s: lock: %w", dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s is open in another process (or another Open in this one)", engine.ErrLocked, dir)
	}
	s, err := open(dir, o)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func open(dir string, o Options) (*Store, error) {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeoutMillis))
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -o.CacheKiB))
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	q.Add("_pragma", "temp_store(MEMORY)")
	dsn := "file:" + filepath.Join(dir, FileName) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", dir, err)
	}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.get, `SELECT v FROM kv WHERE k = ?`},
		{&s.it, `SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k`},
		{&s.itOpen, `SELECT k, v FROM kv WHERE k >= ? ORDER BY k`},
		{&s.getN, `SELECT k, v FROM kv WHERE k IN (` + placeholders(chunkRows, "?") + `) ORDER BY k`},
		{&s.setN, insertRows(chunkRows)},
		{&s.delN, deleteKeys(chunkRows)},
	} {
		if *p.st, err = db.Prepare(p.sql); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite: prepare: %w", err)
		}
	}
	if s.own, err = db.Conn(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dir, err)
	}
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func get(st *sql.Stmt, key []byte) ([]byte, error) {
	var v []byte
	err := st.QueryRow(key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// Get returns a copy of the value at key.
func (s *Store) Get(key []byte) ([]byte, error) { return get(s.get, key) }

// GetMany reads keys (ascending) chunkRows at a time, in one read
// transaction.
func (s *Store) GetMany(keys [][]byte, found func(i int, value []byte)) error {
	if len(keys) == 0 {
		return nil
	}
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	tx, err := s.own.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st := tx.Stmt(s.getN)
	args := make([]any, chunkRows)
	for lo := 0; lo < len(keys); lo += chunkRows {
		chunk := keys[lo:min(lo+chunkRows, len(keys))]
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)] // a repeat matches nothing more
		}
		rows, err := st.Query(args...)
		if err != nil {
			return err
		}
		i := 0
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return err
			}
			for i < len(chunk) && bytes.Compare(chunk[i], k) < 0 {
				i++
			}
			if i < len(chunk) && bytes.Equal(chunk[i], k) {
				if v == nil {
					v = []byte{}
				}
				found(lo+i, v)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// NewIter iterates [lower, upper) within one read transaction, a consistent
// view of the store.
func (s *Store) NewIter(lower, upper []byte) (engine.Iterator, error) {
	return s.newIter(nil, lower, upper)
}

func (s *Store) newIter(tx *sql.Tx, lower, upper []byte) (engine.Iterator, error) {
	if lower == nil {
		lower = []byte{}
	}
	st, args := s.it, []any{lower, upper}
	if upper == nil {
		st, args = s.itOpen, []any{lower}
	}
	if tx != nil {
		st = tx.Stmt(st)
	}
	rows, err := st.Query(args...)
	if err != nil {
		return nil, err
	}
	return &iter{rows: rows}, nil
}

// NewBatch starts a batch: its writes are kept in memory and made in one
// transaction at Commit, so no write transaction is open while the engine
// decides.
func (s *Store) NewBatch() (engine.Batch, error) {
	return &batch{s: s}, nil
}

// Close checkpoints nothing extra (commits are synced), closes the database
// and releases the lock.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.get, s.it, s.itOpen, s.getN, s.setN, s.delN} {
		errs = append(errs, st.Close())
	}
	errs = append(errs, s.own.Close(), s.db.Close(), s.lock.Unlock())
	return errors.Join(errs...)
}

type iter struct {
	rows *sql.Rows
	k, v []byte
	err  error
}

func (i *iter) Next() bool {
	if !i.rows.Next() {
		i.err = i.rows.Err()
		return false
	}
	i.k, i.v = i.k[:0], i.v[:0]
	if err := i.rows.Scan(&i.k, &i.v); err != nil {
		i.err = err
		return false
	}
	return true
}
func (i *iter) Key() []byte   { return i.k }
func (i *iter) Value() []byte { return i.v }
func (i *iter) Err() error    { return i.err }
func (i *iter) Close() error  { return i.rows.Close() }

type batch struct {
	s    *Store
	ws   []kvWrite
	done bool
}

type kvWrite struct {
	k, v []byte
	del  bool
}

func (b *batch) Set(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	b.ws = append(b.ws, kvWrite{k: key, v: value})
	return nil
}

func (b *batch) Delete(key []byte) error {
	b.ws = append(b.ws, kvWrite{k: key, del: true})
	return nil
}

// Commit writes the batch in key order (each B-tree page is visited once
// per run of keys on it), the last write of a key winning, chunkRows rows
// a statement, in one transaction, synced whatever d says (see the package
// comment).
func (b *batch) Commit(d engine.Durability) error {
	if b.done {
		return errors.New("sqlite: batch already finished")
	}
	b.done = true
	ws := b.ws
	slices.SortStableFunc(ws, func(x, y kvWrite) int { return bytes.Compare(x.k, y.k) })
	var sets, dels [][]byte
	for i, w := range ws {
		if i+1 < len(ws) && bytes.Equal(ws[i+1].k, w.k) {
			continue // a later write of the same key wins
		}
		if w.del {
			dels = append(dels, w.k)
		} else {
			sets = append(sets, w.k, w.v)
		}
	}
	b.s.ownMu.Lock()
	defer b.s.ownMu.Unlock()
	tx, err := b.s.own.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := execChunks(tx, b.s.setN, insertRows, sets, 2); err != nil {
		return err
	}
	if err := execChunks(tx, b.s.delN, deleteKeys, dels, 1); err != nil {
		return err
	}
	return tx.Commit()
}

// execChunks runs the chunkRows-row statement over vals, per rows of
// width values, and one statement of as many rows over what is left.
func execChunks(tx *sql.Tx, many *sql.Stmt, rest func(rows int) string, vals [][]byte, width int) error {
	args := make([]any, 0, chunkRows*width)
	if len(vals) >= chunkRows*width {
		st := tx.Stmt(many)
		for len(vals) >= chunkRows*width {
			args = args[:0]
			for _, v := range vals[:chunkRows*width] {
				args = append(args, v)
			}
			if _, err := st.Exec(args...); err != nil {
				return err
			}
			vals = vals[chunkRows*width:]
		}
	}
	if len(vals) == 0 {
		return nil
	}
	args = args[:0]
	for _, v := range vals {
		args = append(args, v)
	}
	_, err := tx.Exec(rest(len(vals)/width), args...)
	return err
}

func insertRows(n int) string {
	return `INSERT OR REPLACE INTO kv (k, v) VALUES ` + placeholders(n, "(?, ?)")
}

func deleteKeys(n int) string { return `DELETE FROM kv WHERE k IN (` + placeholders(n, "?") + `)` }

func (b *batch) Close() error {
	b.done = true
	b.ws = nil
	return nil
}
