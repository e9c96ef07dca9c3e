package sqlite

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
)

// The store's schema. A store made now keeps its rows in kvu, their keys
// labelled (labels.go), the labels in klabel, its values coded with a
// dictionary, then Huffman codes, by the tables in zs2 (compress.go), and
// its versions' values and its lines' places in zstd blocks in kvblk
// (blocks.go). Stores made before are read and written as they are, each
// with every later change to how values are kept that its schema allows
// (their rows are not rewritten: a store of millions of rows would take
// minutes to open): a store made before lines' blocks keeps its rows in
// kvt and only its versions' values in blocks; one made before blocks
// keeps its rows in kvs; one of the schema before that (labels, values
// Huffman-coded alone) keeps its rows in kvl and its tables of codes in
// zdict; a store made before labels keeps its rows in kv, each key as it
// is.
//
// A store made now also has a kvt, a kvs, a kvl and a kv table, each
// holding one row: the engine's state under its own key, saying the store
// is of a layout no minca before it reads (a zdict table, empty, beside
// them for the minca that reads it when it opens a store with kvl).
// Those read the kvt, kvs, kvl or kv table as the store's, and so refuse
// it as written by a later minca instead of reading its rows as theirs
// (and missing every key a block holds that they do not look for there).
const (
	rowsCoded    = "kvs"
	rowsLabelled = "kvl"
	rowsPlain    = "kv"
	// stateKey is the engine's key of its state (engine/internal/keys:
	// '_' name); olderLayout is the layout the rows in kv and kvl claim,
	// one no minca reads (the engine refuses 16 to 63 as later than its
	// own).
	stateKey    = "_state"
	olderLayout = 63
)

// rowsTable is the table of the store's rows (set by tables).
func (s *Store) rowsTable() string { return s.rows }

// tables makes a new store's tables, or reads which schema the store is
// of, brings a store written before values were coded up to them (the z
// column added: NULL, each value as it is), and loads the key labels and
// the tables of codes. A store opened read-only is read as it is. It
// returns what reads the z column: "z", or "NULL" when there is none.
func (s *Store) tables(o Options) (z string, err error) {
	if !o.ReadOnly {
		// WAL mode is kept in the database file: set once, every
		// connection has it.
		if _, err := s.db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
			return "", err
		}
	}
	var hasKV, hasKVL, hasKVS, hasKVT, hasKVU, plainRows int
	if err := s.db.QueryRow(`SELECT
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kv'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kvl'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kvs'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kvt'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kvu')`).Scan(&hasKV, &hasKVL, &hasKVS, &hasKVT, &hasKVU); err != nil {
		return "", err
	}
	if hasKV > 0 && hasKVL == 0 && hasKVS == 0 {
		if err := s.db.QueryRow(`SELECT EXISTS (SELECT 1 FROM kv)`).Scan(&plainRows); err != nil {
			return "", err
		}
	}
	if hasKVU == 0 && hasKVT == 0 && hasKVS == 0 && hasKVL == 0 && plainRows == 0 && !o.ReadOnly {
		if err := s.create(hasKV > 0); err != nil {
			return "", err
		}
		hasKVU = 1
	}
	switch {
	case hasKVU > 0 || hasKVT > 0:
		s.rows, s.fam = rowsLines, famVersions|famLines
		if hasKVU == 0 {
			s.rows, s.fam = rowsBlocked, famVersions
		}
		if s.blocks, err = newBlockCodec(); err != nil {
			return "", err
		}
		s.pending = map[string]int{}
		if err := s.loadLabels(); err != nil {
			return "", err
		}
		return "z", s.codec.load(s.db, tablesDict, !o.ReadOnly, o.TrainBytes)
	case hasKVS > 0:
		s.rows = rowsCoded
		if err := s.loadLabels(); err != nil {
			return "", err
		}
		return "z", s.codec.load(s.db, tablesDict, !o.ReadOnly, o.TrainBytes)
	case hasKVL > 0:
		s.rows = rowsLabelled
		if err := s.loadLabels(); err != nil {
			return "", err
		}
		return "z", s.codec.load(s.db, tablesHuff, !o.ReadOnly, o.TrainBytes)
	}
	s.rows = rowsPlain
	return s.plainTables(o)
}

// create makes a new store's tables in one transaction (an empty kv table
// of an earlier minca, hasKV, is taken over): its rows' table kvu, its
// blocks' kvblk, and the kvt, kvs, kvl and kv tables that earlier mincas
// read, each with one row claiming a later layout.
func (s *Store) create(hasKV bool) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	state := binary.AppendUvarint(nil, olderLayout)
	stmts := []string{
		`CREATE TABLE kvu (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`,
		`CREATE TABLE kvt (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`,
		`CREATE TABLE kvblk (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID`,
		`CREATE TABLE kvs (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`,
		`CREATE TABLE klabel (h BLOB PRIMARY KEY, l BLOB NOT NULL UNIQUE) WITHOUT ROWID`,
		`CREATE TABLE zs2 (id INTEGER PRIMARY KEY, s BLOB NOT NULL, d BLOB NOT NULL)`,
		`CREATE TABLE kvl (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS zdict (id INTEGER PRIMARY KEY, d BLOB NOT NULL)`,
	}
	if !hasKV {
		stmts = append(stmts, `CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q); err != nil {
			return err
		}
	}
	for _, t := range []string{rowsPlain, rowsLabelled, rowsCoded, rowsBlocked} {
		if _, err := tx.Exec(`INSERT INTO `+t+` (k, v) VALUES (?, ?)`, []byte(stateKey), state); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// loadLabels reads the klabel table.
func (s *Store) loadLabels() error {
	rows, err := s.db.Query(`SELECT h, l FROM klabel`)
	if err != nil {
		return err
	}
	l := newLabels()
	for rows.Next() {
		var h, lb []byte
		if err := rows.Scan(&h, &lb); err != nil {
			rows.Close()
			return err
		}
		if err := l.add(h, lb); err != nil {
			rows.Close()
			return err
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if err := l.ordered(); err != nil {
		return err
	}
	s.lab.Store(l)
	return nil
}

// plainTables brings a store of the schema before labels up to coded
// values (unless read-only) and loads its tables of codes.
func (s *Store) plainTables(o Options) (z string, err error) {
	if !o.ReadOnly {
		if _, err := s.db.Exec(`CREATE TABLE IF NOT EXISTS zdict (id INTEGER PRIMARY KEY, d BLOB NOT NULL)`); err != nil {
			return "", err
		}
	}
	var hasZ, hasDicts int
	if err := s.db.QueryRow(`SELECT
		(SELECT count(*) FROM pragma_table_info('kv') WHERE name = 'z'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'zdict')`).Scan(&hasZ, &hasDicts); err != nil {
		return "", err
	}
	if hasZ == 0 && !o.ReadOnly {
		if _, err := s.db.Exec(`ALTER TABLE kv ADD COLUMN z INTEGER`); err != nil {
			return "", err
		}
		hasZ = 1
	}
	z = "z"
	if hasZ == 0 {
		z = "NULL"
	}
	kind := tablesNone
	if hasDicts > 0 {
		kind = tablesHuff
	}
	return z, s.codec.load(s.db, kind, !o.ReadOnly, o.TrainBytes)
}

// labelRows writes the new labels a batch made, in its transaction.
func labelRows(tx *sql.Tx, made [][2][]byte) error {
	for _, m := range made {
		if _, err := tx.Exec(`INSERT INTO klabel (h, l) VALUES (?, ?)`, m[0], m[1]); err != nil {
			return fmt.Errorf("key label: %w", err)
		}
	}
	return nil
}
