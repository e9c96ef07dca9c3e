package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/minca-go/minca/engine"
)

// The reads and writes of a store of blocks (blocks.go): its rows in kvt,
// its blocks in kvblk. A key's value is its row's when it has one (none
// when the row is a tombstone), else its block's entry.

const (
	rowsBlocked = "kvt" // the rows of a store whose versions' values are in blocks
	rowsLines   = "kvu" // … whose versions' values and lines' places are
	blocksTable = "kvblk"
)

// decodeBlock is block bk (a stored key) whose row is coded; one that
// does not decode is an error wrapping errDamagedValue naming the keys
// its span holds (the engine's, where the labels name them).
func (s *Store) decodeBlock(bk, coded []byte) (*block, error) {
	b, err := s.blocks.decode(bk, coded)
	if err != nil {
		first, last := s.blockRange(bk)
		return nil, fmt.Errorf("%w: the block of keys %x to %x: %v", errDamagedValue, first, last, err)
	}
	return b, nil
}

// blockRange is the first and last key block bk's span holds, the
// engine's where the store's labels name them, else as stored.
func (s *Store) blockRange(bk []byte) (first, last []byte) {
	first, last = bk, lastKey(bk)
	if l := s.lab.Load(); l != nil {
		f, err1 := l.engineKey(first)
		e, err2 := l.engineKey(last)
		if err1 == nil && err2 == nil {
			return f, e
		}
	}
	return first, last
}

// getBlocked reads stored key k (one statement: one view of the store).
func (s *Store) getBlocked(engineKey, k []byte) ([]byte, error) {
	var bk []byte // no block: NULL matches no key
	idx, inBlock := s.fam.span(k)
	if inBlock {
		bk = blockOf(k)
	}
	rows, err := s.getB.Query(k, bk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var row, blk []byte
	var z sql.NullInt64
	haveRow := false
	for rows.Next() {
		var v []byte
		var zz sql.NullInt64
		var fromBlock int
		if err := rows.Scan(&v, &zz, &fromBlock); err != nil {
			return nil, err
		}
		if fromBlock == 1 {
			blk = v
		} else {
			row, z, haveRow = v, zz, true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case haveRow && z.Valid && z.Int64 == tombstone:
	case haveRow:
		return s.value(engineKey, row, z, nil)
	case blk != nil:
		b, err := s.decodeBlock(bk, blk)
		if err != nil {
			return nil, err
		}
		if v, ok := b.get(idx); ok {
			return bytes.Clone(v), nil
		}
	}
	return nil, fmt.Errorf("%w: key %x", engine.ErrNotFound, engineKey)
}

// blockLookups reads the blocks of keys (stored, ascending, each
// blockable) in tx, calling found with each key's index in keys and its
// entry's value for those its block holds.
func (s *Store) blockLookups(tx *sql.Tx, keys [][]byte, found func(i int, v []byte)) error {
	var bks [][]byte
	for _, k := range keys {
		if len(bks) == 0 || !sameBlock(bks[len(bks)-1], k) {
			bks = append(bks, blockOf(k))
		}
	}
	blocks := make(map[string]*block, len(bks))
	st := tx.Stmt(s.getBlocksN)
	args := make([]any, chunkRows)
	for lo := 0; lo < len(bks); lo += chunkRows {
		chunk := bks[lo:min(lo+chunkRows, len(bks))]
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)]
		}
		rows, err := st.Query(args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return err
			}
			if idx, ok := s.fam.span(k); !ok || idx != 0 {
				rows.Close()
				return fmt.Errorf("%w: a block's key %x is not a block's", errDamagedValue, k)
			}
			b, err := s.decodeBlock(k, v)
			if err != nil {
				rows.Close()
				return err
			}
			blocks[string(k)] = b
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	var bk []byte
	for i, k := range keys {
		idx, _ := s.fam.span(k)
		bk = append(bk[:0], k...)
		bk[len(bk)-1] &^= blockSpan - 1
		if b := blocks[string(bk)]; b != nil {
			if v, ok := b.get(idx); ok {
				found(i, v)
			}
		}
	}
	return nil
}

// sameBlock reports whether key k is in the span of block bk.
func sameBlock(bk, k []byte) bool {
	n := len(k)
	return len(bk) == n && bytes.Equal(bk[:n-1], k[:n-1]) && bk[n-1] == k[n-1]&^(blockSpan-1)
}

// blockIter iterates a store of blocks: its rows and its blocks' entries
// merged in key order (or descending), a row winning over its block's
// entry and a tombstone hiding it, both read in one read transaction.
type blockIter struct {
	s      *Store
	tx     *sql.Tx
	rows   *sql.Rows // the rows' table: k, v, z
	blks   *sql.Rows // the blocks: k, v
	desc   bool
	lo, hi []byte // the range, stored keys (hi nil: none)

	row    bool // rk, rv, rz hold the next row
	rk, rv []byte
	rz     sql.NullInt64
	blk    bool // bkey, bcoded hold the next block, not yet decoded
	bkey   []byte
	bcoded []byte
	cur    *block // the block being read, its entries from at on
	curKey []byte
	at     int

	pair
	err error
}

func (s *Store) newBlockIter(lower, upper []byte, desc bool) (engine.Iterator, error) {
	lo, hi, empty := s.storedRange(lower, upper)
	if empty {
		return &blockIter{s: s}, nil
	}
	tx, err := s.db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.wrap(err)
	}
	order := ` ORDER BY k`
	if desc {
		order = ` ORDER BY k DESC`
	}
	where, args := ` WHERE k >= ?`, []any{lo}
	if hi != nil {
		where, args = ` WHERE k >= ? AND k < ?`, []any{lo, hi}
	}
	it := &blockIter{s: s, tx: tx, desc: desc, lo: lo, hi: hi}
	if it.rows, err = tx.Query(s.kvRead+where+order, args...); err != nil {
		tx.Rollback()
		return nil, s.wrap(err)
	}
	// The blocks from the one whose span may hold lo (the greatest
	// block key at or below it) on.
	bwhere := ` WHERE k >= coalesce((SELECT max(k) FROM ` + blocksTable + ` WHERE k <= ?1), ?1)`
	if hi != nil {
		bwhere += ` AND k < ?2`
	}
	if it.blks, err = tx.Query(`SELECT k, v FROM `+blocksTable+bwhere+order, args...); err != nil {
		it.rows.Close()
		tx.Rollback()
		return nil, s.wrap(err)
	}
	it.nextRow()
	it.nextBlock()
	return it, nil
}

func (it *blockIter) nextRow() {
	it.row = false
	if it.err != nil || !it.rows.Next() {
		if it.err == nil {
			it.err = it.rows.Err()
		}
		return
	}
	it.rk, it.rv = it.rk[:0], it.rv[:0]
	if it.err = it.rows.Scan(&it.rk, &it.rv, &it.rz); it.err == nil {
		it.row = true
	}
}

func (it *blockIter) nextBlock() {
	it.blk = false
	if it.err != nil || !it.blks.Next() {
		if it.err == nil {
			it.err = it.blks.Err()
		}
		return
	}
	it.bkey, it.bcoded = nil, it.bcoded[:0]
	if it.err = it.blks.Scan(&it.bkey, &it.bcoded); it.err != nil {
		return
	}
	if idx, ok := it.s.fam.span(it.bkey); !ok || idx != 0 {
		it.err = fmt.Errorf("%w: a block's key %x is not a block's", errDamagedValue, it.bkey)
		return
	}
	it.blk = true
}

// entry is the key of the current block's next entry in the range, or nil.
func (it *blockIter) entry() []byte {
	for it.cur != nil {
		if it.at < 0 || it.at >= blockSpan {
			it.cur = nil
			break
		}
		if it.cur.n[it.at] >= 0 {
			k := entryKey(it.curKey, it.at)
			if bytes.Compare(k, it.lo) >= 0 && (it.hi == nil || bytes.Compare(k, it.hi) < 0) {
				return k
			}
		}
		it.step()
	}
	return nil
}

func (it *blockIter) step() {
	if it.desc {
		it.at--
	} else {
		it.at++
	}
}

// before reports whether a comes before b in the iteration's order.
func (it *blockIter) before(a, b []byte) bool {
	if it.desc {
		return bytes.Compare(a, b) > 0
	}
	return bytes.Compare(a, b) < 0
}

func (it *blockIter) Next() bool {
	for it.err == nil {
		e := it.entry()
		if e == nil && it.blk {
			// The next block is read once no row comes before any of
			// its entries.
			first := it.bkey
			if it.desc {
				first = lastKey(it.bkey)
			}
			if !it.row || !it.before(it.rk, first) {
				b, err := it.s.decodeBlock(it.bkey, it.bcoded)
				if err != nil {
					it.err = err
					return false
				}
				it.cur, it.curKey, it.at = b, it.bkey, 0
				if it.desc {
					it.at = blockSpan - 1
				}
				it.nextBlock()
				continue
			}
		}
		switch {
		case e == nil && !it.row:
			return false
		case e != nil && (!it.row || it.before(e, it.rk)):
			v, _ := it.cur.get(it.at)
			it.step()
			return it.emit(e, v, sql.NullInt64{}, false)
		}
		// The row comes first, or is the entry's key: it wins.
		if e != nil && bytes.Equal(e, it.rk) {
			it.step()
		}
		if it.rz.Valid && it.rz.Int64 == tombstone {
			it.nextRow()
			continue
		}
		ok := it.emit(it.rk, it.rv, it.rz, true)
		it.nextRow()
		return ok
	}
	return false
}

// emit makes stored key k and its value the iterator's current pair;
// coded says v is a row's (decoded by its z), else a block's entry (the
// cached block's bytes, which nothing writes into).
func (it *blockIter) emit(k, v []byte, z sql.NullInt64, coded bool) bool {
	it.err = it.pair.set(it.s, k, v, z, coded)
	return it.err == nil
}

func (it *blockIter) Err() error { return it.s.wrap(it.err) }
func (it *blockIter) Close() error {
	if it.tx == nil {
		return nil
	}
	err := errors.Join(it.rows.Close(), it.blks.Close(), it.tx.Rollback())
	it.tx = nil
	return it.s.wrap(err)
}

// blockGroup is a batch's writes to the keys of one block's span
// (stored keys, ascending, one write a key).
type blockGroup struct {
	bk []byte // the block's key
	ws []kvWrite
}

// planBlocks sorts a batch's writes to keys in blocks (groups, ascending)
// into rows, tombstones and blocks to rewrite: a span whose writes since
// the store opened (and this batch's) come to compactAt has its block
// rewritten in this batch; the others' writes are rows (sets, three values
// a row, appended to) and their pending counts counts.
func (s *Store) planBlocks(groups []blockGroup, sets []any, arena *[]byte) (rewrite []blockGroup, out []any, counts map[string]int) {
	counts = make(map[string]int, len(groups))
	for _, g := range groups {
		n := s.pending[string(g.bk)] + len(g.ws)
		if n >= compactAt {
			rewrite = append(rewrite, g)
			continue
		}
		counts[string(g.bk)] = n
		for _, w := range g.ws {
			if w.del {
				sets = append(sets, w.k, []byte{}, tombstone)
				continue
			}
			r := s.codec.pack(w.v, arena)
			sets = append(sets, w.k, r.v, r.z)
		}
	}
	return rewrite, sets, counts
}

// rewriteBlock makes the block of g's span anew in tx: its entries, the
// rows in its span (a row's value, a tombstone's absence) and g's writes,
// in that order, the last winning; the rows it takes in are deleted, and
// a value larger than a block holds stays (or is written as) a row.
func (s *Store) rewriteBlock(tx *sql.Tx, g blockGroup, arena *[]byte) error {
	first, last := g.bk, lastKey(g.bk)
	var vals [blockSpan][]byte
	var has [blockSpan]bool
	var coded []byte
	switch err := tx.QueryRow(`SELECT v FROM `+blocksTable+` WHERE k = ?`, first).Scan(&coded); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		b, err := s.decodeBlock(first, coded)
		if err != nil {
			return err
		}
		for i := range vals {
			vals[i], has[i] = b.get(i)
		}
	}
	var drop []any
	rows, err := tx.Query(s.kvRead+` WHERE k >= ? AND k <= ?`, first, last)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k, v []byte
		var z sql.NullInt64
		if err := rows.Scan(&k, &v, &z); err != nil {
			rows.Close()
			return err
		}
		idx, ok := s.fam.span(k)
		if !ok || !sameBlock(first, k) {
			continue // a key between the span's that no block holds
		}
		if z.Valid && z.Int64 == tombstone {
			has[idx] = false
			drop = append(drop, k)
			continue
		}
		if v, err = s.value(k, v, z, nil); err != nil {
			rows.Close()
			return err
		}
		if len(v) > blockValueMax {
			has[idx] = false // the row stays
			continue
		}
		vals[idx], has[idx] = v, true
		drop = append(drop, k)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	var sets []any
	for _, w := range g.ws {
		idx, _ := s.fam.span(w.k)
		switch {
		case w.del || len(w.v) <= blockValueMax:
			vals[idx], has[idx] = w.v, !w.del
			drop = append(drop, w.k) // a row it may have had
		default:
			has[idx] = false
			r := s.codec.pack(w.v, arena)
			sets = append(sets, w.k, r.v, r.z)
		}
	}
	t := s.rowsTable()
	if err := execChunks(tx, s.delN, func(n int) string { return deleteKeys(t, n) }, drop, 1); err != nil {
		return err
	}
	if err := execChunks(tx, s.setN, func(n int) string { return insertRows(t, n) }, sets, 3); err != nil {
		return err
	}
	var es []entry
	for i := range vals {
		if has[i] {
			es = append(es, entry{idx: i, v: vals[i]})
		}
	}
	if len(es) == 0 {
		_, err = tx.Exec(`DELETE FROM `+blocksTable+` WHERE k = ?`, first)
		return err
	}
	_, err = tx.Exec(`INSERT OR REPLACE INTO `+blocksTable+` (k, v) VALUES (?, ?)`, first, s.blocks.encode(es))
	return err
}
