package sqlite

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
)

// The store's schema. A store made now keeps its rows in kvl, their keys
// labelled (labels.go), the labels in klabel and the tables of codes of
// its values in zdict (compress.go). Stores made before labels keep their
// rows in kv, each key as it is; they are read and written as they are
// (their keys are not rewritten: a store of millions of rows would take
// minutes to open), with every later change to how values are kept.
//
// A store made now also has a kv table, holding one row: the engine's
// state under its own key, saying the store is of a layout no minca
// before labels reads. Those read the kv table as the store's, and so
// refuse it as written by a later minca instead of reading labelled keys
// as the engine's.
const (
	rowsLabelled = "kvl"
	rowsPlain    = "kv"
	// stateKey is the engine's key of its state (engine/internal/keys:
	// '_' name); olderLayout is the layout the row in kv claims, one no
	// minca reads (the engine refuses 16 to 63 as later than its own).
	stateKey    = "_state"
	olderLayout = 63
)

// rowsTable is the table of the store's rows.
func (s *Store) rowsTable() string {
	if s.lab.Load() != nil {
		return rowsLabelled
	}
	return rowsPlain
}

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
	var hasKV, hasKVL, plainRows int
	if err := s.db.QueryRow(`SELECT
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kv'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'kvl')`).Scan(&hasKV, &hasKVL); err != nil {
		return "", err
	}
	if hasKV > 0 && hasKVL == 0 {
		if err := s.db.QueryRow(`SELECT EXISTS (SELECT 1 FROM kv)`).Scan(&plainRows); err != nil {
			return "", err
		}
	}
	if hasKVL == 0 && plainRows == 0 && !o.ReadOnly {
		if err := s.create(hasKV > 0); err != nil {
			return "", err
		}
		hasKVL = 1
	}
	if hasKVL > 0 {
		if err := s.loadLabels(); err != nil {
			return "", err
		}
		return "z", s.codec.load(s.db, true, !o.ReadOnly, o.TrainBytes)
	}
	return s.plainTables(o)
}

// create makes a new store's tables in one transaction (an empty kv table
// of an earlier minca, hasKV, is taken over).
func (s *Store) create(hasKV bool) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	state := binary.AppendUvarint(nil, olderLayout)
	stmts := []string{
		`CREATE TABLE kvl (k BLOB PRIMARY KEY, v BLOB, z INTEGER) WITHOUT ROWID`,
		`CREATE TABLE klabel (h BLOB PRIMARY KEY, l BLOB NOT NULL UNIQUE) WITHOUT ROWID`,
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
	if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, []byte(stateKey), state); err != nil {
		return err
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
	return z, s.codec.load(s.db, hasDicts > 0, !o.ReadOnly, o.TrainBytes)
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
