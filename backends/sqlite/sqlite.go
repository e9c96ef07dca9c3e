package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite" // the database/sql driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/minca-go/minca/backends/internal/localstore"
	"github.com/minca-go/minca/engine"
)

// Options configures Open; nil means the defaults.
type Options struct {
	// CacheKiB is SQLite's page cache per connection, in KiB. Default
	// (0) 65,536 (64 MiB); negative is an error.
	CacheKiB int
	// BusyTimeoutMillis is how long a statement waits on a lock, in ms.
	// Default (0) 5,000; negative is an error.
	BusyTimeoutMillis int
	// Logger says how to move a store made in the directory layout of
	// earlier versions; nil is slog.Default.
	Logger *slog.Logger
	// ReadOnly opens an existing store for reading only: nothing is
	// written (no lock file, no log, no recovery), so a store on a
	// read-only filesystem or owned by another user can be read; a write
	// fails with engine.ErrReadOnly. Implies MustExist.
	ReadOnly bool
	// MustExist refuses to create a store: where there is none, Open
	// returns an error wrapping engine.ErrNoStore naming the path.
	// Default false (Open creates the store).
	MustExist bool
	// TrainBytes is how many bytes of values a store without a
	// compression table samples before it makes one (compress.go).
	// Default (0) and most 120 KiB; negative is an error.
	TrainBytes int
}

func (o *Options) withDefaults() (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	if out.CacheKiB < 0 || out.BusyTimeoutMillis < 0 || out.TrainBytes < 0 {
		return out, fmt.Errorf("sqlite: CacheKiB %d, BusyTimeoutMillis %d or TrainBytes %d is negative", out.CacheKiB, out.BusyTimeoutMillis, out.TrainBytes)
	}
	if out.TrainBytes == 0 {
		out.TrainBytes = trainBytes
	}
	if out.CacheKiB == 0 {
		out.CacheKiB = 64 << 10
	}
	if out.BusyTimeoutMillis == 0 {
		out.BusyTimeoutMillis = 5000
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	if out.ReadOnly {
		out.MustExist = true
	}
	return out, nil
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
	// In a store of blocks (blocks.go): a key's row and block at once,
	// and chunkRows blocks at once; nil otherwise.
	getB, getBlocksN *sql.Stmt
	blocks           *blockCodec
	// fam is the tables a store of blocks keeps in them.
	fam families
	// pending is how many writes to rows each block's span took since
	// the store was opened (under ownMu), by the block's key. It is kept
	// in memory only, and counted only once a batch commits: a crash (or
	// Close) loses it, which costs only a later rewrite. No read uses it
	// (a row wins over its block), a span holds at most one row a key
	// (blockSpan rows), and the rewrite takes in every row of its span,
	// those written before the store was last opened too
	// (TestPendingCountLostOnlyDelaysTheRewrite).
	pending  map[string]int
	codec    codec
	arena    []byte // the room of a batch's coded values, kept for the next (under ownMu)
	lock     *localstore.Lock
	path     string // as given: the database file, or a directory of the earlier layout
	file     string // the database file
	readOnly bool
	kvRead   string // SELECT k, v, z FROM the rows' table (NULL for z in a store without the column, read-only)
	rows     string // the rows' table: kvs, kvl or kv (schema.go)
	// lab is the store's key labels (labels.go), the latest committed or
	// being committed; nil in a store of the schema before them, whose
	// keys are kept as they are (in the table kv).
	lab atomic.Pointer[labels]
}

// chunkRows is how many rows one statement writes (or keys one reads):
// a batch of thousands of keys costs tens of statements, not thousands.
const chunkRows = 128

func placeholders(n int, row string) string {
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

var _ engine.KV = (*Store)(nil)

// importBatch is how many versions a bulk import's batch holds on SQLite
// (engine.ImportBatcher): twice the engine's default. Each commit writes
// every page its rows land on to the log, and a batch's random inserts
// (the id index, the index by root, the record heads) share more pages
// the more rows it holds: at 100,000 versions, batches of 2,000 wrote
// 8.5 KB a version to the log against 10.7 KB for 1,000
// (bench/REPORT-engine.md).
const importBatch = 2 * engine.DefaultImportBatch

// ImportBatch is how many versions one batch of a bulk import holds on
// SQLite (engine.ImportBatcher; DESIGN.md, Backends).
func (s *Store) ImportBatch() int { return importBatch }

var _ engine.ImportBatcher = (*Store)(nil)

// The files of a store made by earlier versions, in the directory its
// path named: the database and the lock.
const (
	OldFileName = "minca.sqlite"
	OldLockName = "minca.lock"
)

// LockSuffix is added to the database file's path for its lock file.
const LockSuffix = ".lock"

// Open opens the store whose database file is path, creating it unless
// opts says it must exist. A path that is a directory holding minca.sqlite
// is a store of the earlier layout: it is opened as it is, and the logger
// says how to move it to a file.
func Open(path string, opts *Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	file, lockPath, err := locate(path, o)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, file: file, readOnly: o.ReadOnly}
	if o.MustExist {
		if err := s.probe(); err != nil {
			return nil, err
		}
	}
	if s.lock, err = localstore.LockFile(lockPath, localstore.Subject("sqlite", path), o.ReadOnly); err != nil {
		return nil, err
	}
	if err := s.open(o); err != nil {
		s.lock.Unlock()
		return nil, err
	}
	return s, nil
}

// locate finds the database and lock files of the store at path (package
// doc), and makes its parent directory when it is to be created.
func locate(path string, o Options) (file, lock string, err error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		old := filepath.Join(path, OldFileName)
		if _, err := os.Stat(old); err != nil {
			if o.MustExist {
				return "", "", localstore.NoStore(path)
			}
			return "", "", fmt.Errorf("sqlite: %s is a directory: sqlite:PATH names the database file", path)
		}
		o.Logger.Info(fmt.Sprintf("sqlite store %s is a directory holding %s, as earlier versions made them; "+
			"to make it one file: minca store export --store sqlite:%s | minca store import --store sqlite:NEWFILE",
			path, OldFileName, path), "store", path)
		return old, filepath.Join(path, OldLockName), nil
	case err == nil:
		return path, path + LockSuffix, nil
	case errors.Is(err, os.ErrNotExist) && o.MustExist:
		return "", "", localstore.NoStore(path)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", "", fmt.Errorf("sqlite: store %s: %w", path, err)
		}
		return path, path + LockSuffix, nil
	}
	return "", "", fmt.Errorf("sqlite: store %s: %w", path, err)
}

// dsn is the data source name opening the database: writing, in WAL mode;
// read-only and immutable when no log is left to read (nothing is written,
// not even the -shm file that reading a WAL database takes); read-only
// through the log when one is left (after a crash), which SQLite reads
// through PATH-shm: it writes that file as shared memory when it can (and
// makes it, beside the database, when missing) and keeps the index in
// memory when the file is read-only.
func (s *Store) dsn(o Options) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeoutMillis))
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -o.CacheKiB))
	q.Add("_pragma", "temp_store(MEMORY)")
	switch {
	case !o.ReadOnly: // journal_mode(WAL) is set by open, once it knows the store is there
		q.Add("_pragma", "synchronous(FULL)")
		q.Add("_pragma", "wal_autocheckpoint(16384)")
		if o.MustExist {
			q.Set("mode", "rw")
		}
	case walLeft(s.file):
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	default:
		q.Set("mode", "ro")
		q.Set("immutable", "1")
		q.Add("_pragma", "query_only(1)")
	}
	return fileURI(s.file, q)
}

// fileURI is the file: URI of the database file with query q. SQLite
// decodes %HH in its path; ? and # would end it.
func fileURI(file string, q url.Values) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + esc.Replace(file) + "?" + q.Encode()
}

// probe returns an error wrapping engine.ErrNoStore unless the database
// file holds the store's table, reading it read-only and immutable, so
// nothing is written (not even SQLite's -shm) — except after a crash, when
// a write-ahead log is left: the store's table may be in it, and open
// finds out.
func (s *Store) probe() error {
	st, err := os.Stat(s.file)
	if err != nil {
		return s.wrap(err)
	}
	if st.Size() == 0 {
		return localstore.NoStore(s.path)
	}
	if walLeft(s.file) {
		return nil
	}
	db, err := sql.Open("sqlite", fileURI(s.file, url.Values{"mode": {"ro"}, "immutable": {"1"}}))
	if err != nil {
		return s.wrap(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kv'`).Scan(&n); err != nil {
		return s.wrap(err)
	}
	if n == 0 {
		return engine.Errorf(engine.ErrNoStore, "%s is a SQLite database without minca's table", s.path)
	}
	return nil
}

// walLeft reports whether the write-ahead log beside file holds anything:
// a store closed cleanly has none (the last connection checkpoints it
// into the database and deletes it).
func walLeft(file string) bool {
	st, err := os.Stat(file + "-wal")
	return err == nil && st.Size() > 0
}

func (s *Store) open(o Options) error {
	db, err := sql.Open("sqlite", s.dsn(o))
	if err != nil {
		return s.wrap(err)
	}
	s.db = db
	z, err := s.tables(o)
	if err != nil {
		db.Close()
		return s.wrap(err)
	}
	t := s.rowsTable()
	s.kvRead = `SELECT k, v, ` + z + ` FROM ` + t
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&s.get, `SELECT v, ` + z + ` FROM ` + t + ` WHERE k = ?`},
		{&s.it, s.kvRead + ` WHERE k >= ? AND k < ? ORDER BY k`},
		{&s.itOpen, s.kvRead + ` WHERE k >= ? ORDER BY k`},
		{&s.getN, s.kvRead + ` WHERE k IN (` + placeholders(chunkRows, "?") + `) ORDER BY k`},
		{&s.setN, insertRows(t, chunkRows)},
		{&s.delN, deleteKeys(t, chunkRows)},
		{&s.getB, `SELECT v, z, 0 FROM ` + t + ` WHERE k = ?1 UNION ALL SELECT v, NULL, 1 FROM ` + blocksTable + ` WHERE k = ?2`},
		{&s.getBlocksN, `SELECT k, v FROM ` + blocksTable + ` WHERE k IN (` + placeholders(chunkRows, "?") + `) ORDER BY k`},
	} {
		if o.ReadOnly && (p.st == &s.setN || p.st == &s.delN) {
			continue // nothing is written (and a store before the z column has none to write)
		}
		if s.blocks == nil && (p.st == &s.getB || p.st == &s.getBlocksN) {
			continue
		}
		if *p.st, err = db.Prepare(p.sql); err != nil {
			db.Close()
			return s.wrap(err)
		}
	}
	if s.own, err = db.Conn(context.Background()); err != nil {
		db.Close()
		return s.wrap(err)
	}
	return nil
}

// storedKey is the engine's key as the store keeps it; held is false when
// no key like it can be held (its head has no label).
func (s *Store) storedKey(k []byte) (stored []byte, held bool) {
	if l := s.lab.Load(); l != nil {
		return l.key(k)
	}
	return k, true
}

// storedRange is the range [lower, upper) of the engine's keys as a range
// of stored keys (upper nil: no bound); empty when it holds none.
func (s *Store) storedRange(lower, upper []byte) (lo, hi []byte, empty bool) {
	if lower == nil {
		lower = []byte{}
	}
	l := s.lab.Load()
	if l == nil {
		return lower, upper, false
	}
	lo = l.bound(lower)
	if lo == nil {
		return nil, nil, true // past every table
	}
	if upper != nil {
		hi = l.bound(upper) // nil: past every table, no bound
	}
	return lo, hi, false
}

// Path is the store's database file.
func (s *Store) Path() string { return s.file }

// wrap names the store in an error from SQLite, on one line: damage (a
// page that does not read as a b-tree page, a file cut short, a file that
// is not a database) wraps engine.ErrCorrupt.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, engine.ErrNoStore) || errors.Is(err, engine.ErrNotFound) {
		return err
	}
	if errors.Is(err, errDamagedValue) {
		return localstore.Corrupt("sqlite", s.path, s.inFile(err.Error()))
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return localstore.Corrupt("sqlite", s.path, s.inFile(err.Error()))
		}
		if se.Code() == sqlite3.SQLITE_IOERR_SHORT_READ {
			return localstore.Corrupt("sqlite", s.path, s.inFile("cut short: "+err.Error()))
		}
	}
	return localstore.Wrap("sqlite", s.path, err)
}

// Get returns a copy of the value at key.
func (s *Store) Get(key []byte) ([]byte, error) {
	v, err := s.getOne(key)
	return v, s.wrap(err)
}

func (s *Store) getOne(key []byte) ([]byte, error) {
	stored, held := s.storedKey(key)
	if !held {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	if s.blocks != nil {
		return s.getBlocked(key, stored)
	}
	var v []byte
	var z sql.NullInt64
	err := s.get.QueryRow(stored).Scan(&v, &z)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, key)
	}
	if err != nil {
		return nil, err
	}
	return s.value(key, v, z, nil)
}

// value is the value a row holds (never nil), decompressed into buf's
// room when it was compressed.
func (s *Store) value(key, v []byte, z sql.NullInt64, buf []byte) ([]byte, error) {
	v, err := s.codec.unpack(v, z, buf)
	if err != nil {
		return nil, fmt.Errorf("key %x: %w", key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// GetMany reads keys (ascending) chunkRows at a time, in one read
// transaction.
func (s *Store) GetMany(keys [][]byte, found func(i int, value []byte)) error {
	return s.wrap(s.getMany(keys, found))
}

func (s *Store) getMany(engineKeys [][]byte, found func(i int, value []byte)) error {
	// The keys as stored, in the same order (labels keep it), and the
	// index of each among those asked for: a key whose head has no label
	// is not held.
	keys, at := engineKeys, []int(nil)
	if l := s.lab.Load(); l != nil {
		keys, at = make([][]byte, 0, len(engineKeys)), make([]int, 0, len(engineKeys))
		for i, k := range engineKeys {
			if sk, held := l.key(k); held {
				keys, at = append(keys, sk), append(at, i)
			}
		}
	}
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
	var buf []byte
	// In a store of blocks, the keys with no row (not a tombstone) that
	// a block may hold, and their indexes in keys.
	var inBlocks [][]byte
	var inBlocksAt []int
	inBlock := func(i int) {
		if s.blocks == nil {
			return
		}
		if _, ok := s.fam.span(keys[i]); ok {
			inBlocks, inBlocksAt = append(inBlocks, keys[i]), append(inBlocksAt, i)
		}
	}
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
			var z sql.NullInt64
			if err := rows.Scan(&k, &v, &z); err != nil {
				rows.Close()
				return err
			}
			for i < len(chunk) && bytes.Compare(chunk[i], k) < 0 {
				inBlock(lo + i)
				i++
			}
			if i < len(chunk) && bytes.Equal(chunk[i], k) && z.Valid && z.Int64 == tombstone && s.blocks != nil {
				i++ // deleted
				continue
			}
			if i < len(chunk) && bytes.Equal(chunk[i], k) {
				if v, err = s.value(k, v, z, buf); err != nil {
					rows.Close()
					return err
				}
				if z.Valid {
					buf = v
				}
				if at != nil {
					found(at[lo+i], v)
				} else {
					found(lo+i, v)
				}
				i++
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for ; i < len(chunk); i++ {
			inBlock(lo + i)
		}
	}
	if len(inBlocks) > 0 {
		err := s.blockLookups(tx, inBlocks, func(j int, v []byte) {
			if at != nil {
				found(at[inBlocksAt[j]], v)
			} else {
				found(inBlocksAt[j], v)
			}
		})
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

// NewIter iterates [lower, upper) within one read transaction, a consistent
// view of the store.
func (s *Store) NewIter(lower, upper []byte) (engine.Iterator, error) {
	if s.blocks != nil {
		return s.newBlockIter(lower, upper, false)
	}
	lower, upper, empty := s.storedRange(lower, upper)
	if empty {
		return &iter{s: s, rows: nil}, nil
	}
	st, args := s.it, []any{lower, upper}
	if upper == nil {
		st, args = s.itOpen, []any{lower}
	}
	rows, err := st.Query(args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	return &iter{s: s, rows: rows}, nil
}

// NewBatch starts a batch: its writes are kept in memory and made in one
// transaction at Commit, so no write transaction is open while the engine
// decides. On a store opened read-only it fails with engine.ErrReadOnly.
func (s *Store) NewBatch() (engine.Batch, error) {
	if s.readOnly {
		return nil, &engine.StoreError{Subject: localstore.Subject("sqlite", s.path), Msg: "open read-only", Kind: engine.ErrReadOnly}
	}
	return &batch{s: s}, nil
}

// Close checkpoints nothing extra (commits are synced), closes the database
// and releases the lock.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.get, s.it, s.itOpen, s.getN, s.setN, s.delN, s.getB, s.getBlocksN} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.blocks != nil {
		s.blocks.close()
	}
	errs = append(errs, s.own.Close(), s.db.Close(), s.lock.Unlock())
	return s.wrap(errors.Join(errs...))
}

// iter iterates a store of rows alone (no blocks: an earlier layout), in
// one query, a consistent view of the store.
type iter struct {
	s    *Store
	rows *sql.Rows // k, v, z; nil for an empty range
	raw  []byte
	z    sql.NullInt64
	pair
	err error
}

func (i *iter) Next() bool {
	if i.rows == nil {
		return false
	}
	if !i.rows.Next() {
		i.err = i.rows.Err()
		return false
	}
	// The key is scanned into the pair's own buffer: set then copies it
	// onto itself, as a block's iterator copies its row's.
	i.k, i.raw = i.k[:0], i.raw[:0]
	if err := i.rows.Scan(&i.k, &i.raw, &i.z); err != nil {
		i.err = err
		return false
	}
	i.err = i.pair.set(i.s, i.k, i.raw, i.z, true)
	return i.err == nil
}

// pair is an iterator's current key and value, made from a stored key and
// value, with the buffers they are made in kept from one to the next.
type pair struct {
	k, v []byte
	buf  []byte // what compressed values are decompressed into
}

func (p *pair) Key() []byte   { return p.k }
func (p *pair) Value() []byte { return p.v }

// set makes stored key k and value v current: k as the engine keys it
// (labels), v decoded by z when coded (a row's), else taken as it is (a
// block's entry).
func (p *pair) set(s *Store, k, v []byte, z sql.NullInt64, coded bool) error {
	if l := s.lab.Load(); l != nil {
		ek, err := l.engineKey(k)
		if err != nil {
			return err
		}
		k = ek
	}
	p.k = append(p.k[:0], k...)
	if coded {
		var err error
		if v, err = s.value(p.k, v, z, p.buf); err != nil {
			return err
		}
		if z.Valid {
			p.buf = v
		}
	}
	p.v = v
	return nil
}

func (i *iter) Err() error { return i.s.wrap(i.err) }
func (i *iter) Close() error {
	if i.rows == nil {
		return nil
	}
	return i.s.wrap(i.rows.Close())
}

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
func (b *batch) Commit(d engine.Durability) error { return b.s.wrap(b.commit()) }

func (b *batch) commit() error {
	if b.done {
		return errors.New("sqlite: batch already finished")
	}
	b.done = true
	ws := b.ws
	slices.SortStableFunc(ws, func(x, y kvWrite) int { return bytes.Compare(x.k, y.k) })
	b.s.ownMu.Lock()
	defer b.s.ownMu.Unlock()
	c := &b.s.codec
	// The labels of the heads this batch writes, new ones made: readers
	// have them before the rows are there (a reader may meet a row only
	// once its label is known), and lose them again if the batch fails.
	old := b.s.lab.Load()
	lab, newLabels := old, [][2][]byte(nil)
	if old != nil {
		var heads [][]byte
		for _, w := range ws {
			if h, _, ok := split(w.k); ok && !w.del {
				heads = append(heads, h)
			}
		}
		if lab, newLabels = old.with(heads); lab != old {
			b.s.lab.Store(lab)
		}
	}
	var sets, dels []any
	var groups []blockGroup
	arena := b.s.arena[:0] // the coded values: SQLite copies what it is given
	for i, w := range ws {
		if i+1 < len(ws) && bytes.Equal(ws[i+1].k, w.k) {
			continue // a later write of the same key wins
		}
		k, held := w.k, true
		if lab != nil {
			k, held = lab.key(w.k)
		}
		if _, ok := b.s.fam.span(k); ok && b.s.blocks != nil {
			if len(groups) == 0 || !sameBlock(groups[len(groups)-1].bk, k) {
				groups = append(groups, blockGroup{bk: blockOf(k)})
			}
			g := &groups[len(groups)-1]
			g.ws = append(g.ws, kvWrite{k: k, v: w.v, del: w.del})
			continue
		}
		switch {
		case w.del && held:
			dels = append(dels, k)
		case !w.del:
			r := c.pack(w.v, &arena)
			sets = append(sets, k, r.v, r.z)
		}
	}
	rewrite, sets, counts := b.s.planBlocks(groups, sets, &arena)
	var m *made
	if c.tableReady() {
		m = c.makeTable()
	}
	err := b.write(m, newLabels, sets, dels, rewrite, &arena)
	if err == nil {
		for bk, n := range counts {
			b.s.pending[bk] = n
		}
		for _, g := range rewrite {
			delete(b.s.pending, string(g.bk))
		}
	}
	if err != nil && lab != old {
		b.s.lab.Store(old)
	}
	if m != nil {
		c.settle(m, err == nil)
	}
	if cap(arena) <= maxArena {
		b.s.arena = arena
	}
	return err
}

// maxArena is the most a store keeps of the room its last batch's coded
// values took, for the next.
const maxArena = 4 << 20

// write makes the batch's rows, and keeps the table m made (if not nil)
// and the new key labels, in one transaction.
func (b *batch) write(m *made, newLabels [][2][]byte, sets, dels []any, rewrite []blockGroup, arena *[]byte) error {
	tx, err := b.s.own.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m != nil {
		if err := m.insert(tx); err != nil {
			return err
		}
	}
	if err := labelRows(tx, newLabels); err != nil {
		return err
	}
	t := b.s.rowsTable()
	if err := execChunks(tx, b.s.setN, func(n int) string { return insertRows(t, n) }, sets, 3); err != nil {
		return err
	}
	if err := execChunks(tx, b.s.delN, func(n int) string { return deleteKeys(t, n) }, dels, 1); err != nil {
		return err
	}
	for _, g := range rewrite {
		if err := b.s.rewriteBlock(tx, g, arena); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// execChunks runs the chunkRows-row statement over vals, per rows of
// width values, and one statement of as many rows over what is left.
func execChunks(tx *sql.Tx, many *sql.Stmt, rest func(rows int) string, vals []any, width int) error {
	if len(vals) >= chunkRows*width {
		st := tx.Stmt(many)
		for len(vals) >= chunkRows*width {
			if _, err := st.Exec(vals[:chunkRows*width]...); err != nil {
				return err
			}
			vals = vals[chunkRows*width:]
		}
	}
	if len(vals) == 0 {
		return nil
	}
	_, err := tx.Exec(rest(len(vals)/width), vals...)
	return err
}

func insertRows(table string, n int) string {
	return `INSERT OR REPLACE INTO ` + table + ` (k, v, z) VALUES ` + placeholders(n, "(?, ?, ?)")
}

func deleteKeys(table string, n int) string {
	return `DELETE FROM ` + table + ` WHERE k IN (` + placeholders(n, "?") + `)`
}

func (b *batch) Close() error {
	b.done = true
	b.ws = nil
	return nil
}

// inFile is what, said of the database file: prefixed by its name where
// the store's path is a directory (the old layout), else as it is (the
// path, which the error names already, is the file).
func (s *Store) inFile(what string) string {
	if filepath.Clean(s.file) == filepath.Clean(s.path) {
		return what
	}
	return filepath.Base(s.file) + ": " + what
}
