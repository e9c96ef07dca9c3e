package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/klauspost/compress/huff0"
)

// Values are kept compressed: SQLite pages hold rows as they are given,
// and most of a store's bytes are envelopes and bodies (JSON), each too
// small to compress well alone. Each value of compressMin to compressMax
// bytes is Huffman-coded with one table of codes the store makes from
// its own first values (trainBytes of them), kept in the zdict table in
// the same transaction as the first value coded with it: a value holds
// no table of its own, and coding it costs about a tenth of what zstd
// with a shared dictionary does (whose per-value setup is most of its
// cost on values this small), for about three quarters of the bytes
// against its half. The kv table's z column says how a value is kept:
// NULL as it is (every value of a store written before, and a value the
// table does not make smaller), N ≥ 1 coded with table N, the value then
// its length (uvarint) and huff0's four streams.
const (
	compressMin = 128
	compressMax = 128 << 10 // huff0 codes at most 256 KiB at once
	trainBytes  = 120 << 10 // and makes its table from one such block
	// sampleMax is the most of one value sampled: a few large values
	// (a batch's change log, a body of random bytes) would otherwise make
	// the table theirs, not the many small ones'.
	sampleMax = 1 << 10
)

// codec codes and decodes the store's values. enc and the training
// state are used under the store's ownMu (by commits); tables by any
// reader.
type codec struct {
	tables  atomic.Pointer[map[int64]*huff0.Decoder]
	enc     *huff0.Scratch // nil until the store has a table
	encID   int64
	samples []byte
	// train is false on a store opened read-only, and once a table is
	// made.
	train bool
	// trainAt is how many bytes of values are sampled before the table is
	// made.
	trainAt int
}

// load reads the store's tables (none in a store written before values
// were compressed), for reading, and the latest for writing.
func (c *codec) load(db *sql.DB, hasTables, writable bool, trainAt int) error {
	c.trainAt = min(trainAt, trainBytes)
	tables := map[int64]*huff0.Decoder{}
	var last []byte
	if hasTables {
		rows, err := db.Query(`SELECT id, d FROM zdict ORDER BY id`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var d []byte
			if err := rows.Scan(&id, &d); err != nil {
				rows.Close()
				return err
			}
			s, _, err := huff0.ReadTable(d, nil)
			if err != nil {
				rows.Close()
				return fmt.Errorf("%w: compression table %d does not read: %v", errDamagedValue, id, err)
			}
			tables[id] = s.Decoder()
			c.encID, last = id, d
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	c.tables.Store(&tables)
	if !writable {
		return nil
	}
	if last == nil {
		c.train = true
		return nil
	}
	enc, _, err := huff0.ReadTable(last, nil)
	if err != nil {
		return err
	}
	c.useTable(enc)
	return nil
}

func (c *codec) useTable(enc *huff0.Scratch) {
	enc.Reuse = huff0.ReusePolicyMust
	c.enc = enc
}

// row is a value as written: coded (z its table's id) or as it is (z nil).
type row struct {
	v []byte
	z any
}

// pack is how value is written, a coded value appended to arena (a
// value coded earlier keeps its bytes when arena grows: it grows into
// new room). Values are sampled for the table until the store has one.
func (c *codec) pack(value []byte, arena *[]byte) row {
	if len(value) < compressMin || len(value) > compressMax {
		return row{v: value}
	}
	if c.enc == nil {
		if c.train && len(c.samples) < c.trainAt {
			c.samples = append(c.samples, value[:min(len(value), sampleMax, c.trainAt-len(c.samples))]...)
		}
		return row{v: value}
	}
	out, reused, err := huff0.Compress4X(value, c.enc)
	if err != nil || !reused || len(out)+binary.MaxVarintLen32 >= len(value)-len(value)/16 {
		return row{v: value} // incompressible, or not smaller enough to be worth a decode
	}
	start := len(*arena)
	*arena = append(binary.AppendUvarint(*arena, uint64(len(value))), out...)
	return row{v: (*arena)[start:len(*arena):len(*arena)], z: c.encID}
}

// tableReady reports whether enough values were sampled to make the
// store's table.
func (c *codec) tableReady() bool { return c.enc == nil && c.train && len(c.samples) >= c.trainAt }

// made is a table made from the samples, not yet the store's.
type made struct {
	id  int64
	d   []byte
	old *map[int64]*huff0.Decoder
}

// makeTable makes a table from the samples and installs it for reading
// at once (no value coded with it is visible before the transaction
// writing it commits) and for writing. Every byte value has a code, so
// that any value can be coded with it. Nil when the samples make none.
func (c *codec) makeTable() *made {
	train := append(bytes.Clone(c.samples), make([]byte, 256)...)
	for i := range 256 {
		train[len(c.samples)+i] = byte(i)
	}
	var s huff0.Scratch
	s.Reuse = huff0.ReusePolicyNone
	if _, _, err := huff0.Compress1X(train, &s); err != nil {
		c.samples, c.train = nil, false // values too alike or too random: kept as they are
		return nil
	}
	m := &made{id: c.encID + 1, d: bytes.Clone(s.OutTable)}
	enc, _, err := huff0.ReadTable(m.d, nil)
	if err != nil {
		c.samples, c.train = nil, false
		return nil
	}
	dec, _, _ := huff0.ReadTable(m.d, nil)
	m.old = c.tables.Load()
	tables := map[int64]*huff0.Decoder{m.id: dec.Decoder()}
	for id, d := range *m.old {
		tables[id] = d
	}
	c.tables.Store(&tables)
	c.useTable(enc)
	c.encID = m.id
	return m
}

// settle makes m the store's once the transaction writing it committed,
// or puts the earlier tables back when it did not.
func (c *codec) settle(m *made, committed bool) {
	if !committed {
		c.enc = nil
		c.encID = m.id - 1
		c.tables.Store(m.old)
		return
	}
	c.samples, c.train = nil, false
}

// unpack is the value a row holds, decoded into buf's room when it was
// coded.
func (c *codec) unpack(v []byte, z sql.NullInt64, buf []byte) ([]byte, error) {
	if !z.Valid {
		return v, nil
	}
	dec := (*c.tables.Load())[z.Int64]
	if dec == nil {
		return nil, fmt.Errorf("%w: a value coded with table %d, which the store does not hold", errDamagedValue, z.Int64)
	}
	n, k := binary.Uvarint(v)
	if k <= 0 || n < compressMin || n > compressMax {
		return nil, fmt.Errorf("%w: a coded value's length does not read", errDamagedValue)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, 0, n)
	}
	out, err := dec.Decompress4X(buf[:0:n], v[k:])
	if err != nil || uint64(len(out)) != n {
		return nil, fmt.Errorf("%w: a coded value does not decode: %v", errDamagedValue, err)
	}
	return out, nil
}

// errDamagedValue marks a value that does not read back; wrap reports
// it as damage.
var errDamagedValue = errors.New("damaged value")
