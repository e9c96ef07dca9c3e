package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/klauspost/compress/huff0"
	"github.com/klauspost/compress/s2"
)

// Values are kept compressed: SQLite pages hold rows as they are given,
// and most of a store's bytes are envelopes and bodies (JSON), each too
// small to compress well alone. Each value of compressMin to compressMax
// bytes is coded with one table the store makes from its own first
// values (trainBytes of them), kept in the same transaction as the first
// value coded with it: a value holds no table of its own. In a store made
// now (rows in kvt, or kvs before blocks) a table is an S2 dictionary (klauspost/compress: the
// first half sampled) and Huffman codes, kept in zs2: S2 takes out what
// repeats from value to value — the members' names, the space, authors,
// collections — and the codes code what is left; on the 100,000-version
// corpus the versions' and heads' values take 42.4 MB against 57.6 MB
// with the codes alone, for a few µs a value. In a store of the schema
// before (kvl, kv) a table is the Huffman codes alone, kept in zdict, as
// before. Either costs about a tenth of what zstd with a shared
// dictionary does (whose per-value setup is most of its cost on values
// this small). The z column says how a value is kept: NULL as it is
// (every value of a store written before, and a value the table does not
// make smaller), N ≥ 1 coded with table N: in a zdict store the value's
// length (uvarint) then huff0's four streams; in a zs2 store the length
// of the value as S2 coded it (uvarint) then the four streams, or a 0
// then the S2 block when the codes do not make it smaller.
const (
	compressMin = 128
	compressMax = 128 << 10 // huff0 codes at most 256 KiB at once
	trainBytes  = 120 << 10 // and makes its table from one such block
	// sampleMax is the most of one value sampled: a few large values
	// (a batch's change log, a body of random bytes) would otherwise make
	// the table theirs, not the many small ones'.
	sampleMax = 1 << 10
)

// tablesKind is which tables of codes a store keeps: none (a store
// written before values were coded), Huffman codes alone (zdict), or a
// dictionary and Huffman codes (zs2, a store made now).
type tablesKind int

const (
	tablesNone tablesKind = iota
	tablesHuff
	tablesDict
)

// A store made now codes a value in two steps: S2 (klauspost/compress)
// with a dictionary of the store's first values takes out what repeats
// from value to value — the members' names, the space, the authors, the
// collections — then the Huffman codes code what is left. On the
// 100,000-version corpus that holds the versions and heads in 40.2 MB
// against 57.2 MB for the codes alone; the dictionary is s2's most,
// 64 KiB.

// codec codes and decodes the store's values. enc, dict and the training
// state are used under the store's ownMu (by commits); tables by any
// reader.
type codec struct {
	tables atomic.Pointer[map[int64]*decoder]
	kind   tablesKind // the store's: tablesHuff or tablesDict, once written
	enc    *huff0.Scratch
	dict   *s2.Dict // the latest table's dictionary (tablesDict), nil until the store has one
	s2buf  []byte   // a value coded with dict, before its Huffman codes
	encID  int64
	// samples are the first bytes of the values sampled, each value's
	// end in samples at cuts.
	samples []byte
	cuts    []int
	// train is false on a store opened read-only, and once a table is
	// made.
	train bool
	// trainAt is how many bytes of values are sampled before the table is
	// made.
	trainAt int
}

// decoder is one table of codes: its Huffman codes, and the dictionary
// the values were coded with before them (nil in a table of zdict).
type decoder struct {
	huff *huff0.Decoder
	dict *s2.Dict
}

// load reads the store's tables of kind (none in a store written before
// values were compressed), for reading, and the latest for writing.
func (c *codec) load(db *sql.DB, kind tablesKind, writable bool, trainAt int) error {
	c.trainAt = min(trainAt, trainBytes)
	c.kind = kind
	if kind == tablesNone {
		c.kind = tablesHuff // what a store of the schema before codes with
	}
	tables := map[int64]*decoder{}
	var last []byte
	var lastDict *s2.Dict
	if kind != tablesNone {
		q := `SELECT id, d, NULL FROM zdict ORDER BY id`
		if kind == tablesDict {
			q = `SELECT id, d, s FROM zs2 ORDER BY id`
		}
		rows, err := db.Query(q)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			var d, sd []byte
			if err := rows.Scan(&id, &d, &sd); err != nil {
				rows.Close()
				return err
			}
			s, _, err := huff0.ReadTable(d, nil)
			if err != nil {
				rows.Close()
				return fmt.Errorf("%w: compression table %d does not read: %v", errDamagedValue, id, err)
			}
			dec := &decoder{huff: s.Decoder()}
			if kind == tablesDict {
				if dec.dict = s2.NewDict(sd); dec.dict == nil {
					rows.Close()
					return fmt.Errorf("%w: the dictionary of compression table %d does not read", errDamagedValue, id)
				}
			}
			tables[id] = dec
			c.encID, last, lastDict = id, d, dec.dict
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
	c.useTable(enc, lastDict)
	return nil
}

func (c *codec) useTable(enc *huff0.Scratch, dict *s2.Dict) {
	enc.Reuse = huff0.ReusePolicyMust
	c.enc, c.dict = enc, dict
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
			c.cuts = append(c.cuts, len(c.samples))
		}
		return row{v: value}
	}
	in := value
	if c.dict != nil {
		in = c.dict.Encode(c.s2buf[:cap(c.s2buf)], value)
		c.s2buf = in[:0]
	}
	worth := len(value) - len(value)/16 // not smaller than this: not worth a decode
	start := len(*arena)
	out, reused, err := huff0.Compress4X(in, c.enc)
	switch {
	case err == nil && reused && len(out)+binary.MaxVarintLen32 < worth && (c.dict == nil || len(out)+binary.MaxVarintLen32 < len(in)):
		*arena = append(binary.AppendUvarint(*arena, uint64(len(in))), out...)
	case c.dict != nil && len(in)+1 < worth:
		// What the dictionary left is too short or too random for the
		// codes: kept as it is, after a 0 (no coded value is empty).
		*arena = append(append(*arena, 0), in...)
	default:
		return row{v: value}
	}
	return row{v: (*arena)[start:len(*arena):len(*arena)], z: c.encID}
}

// tableReady reports whether enough values were sampled to make the
// store's table.
func (c *codec) tableReady() bool { return c.enc == nil && c.train && len(c.samples) >= c.trainAt }

// made is a table made from the samples, not yet the store's.
type made struct {
	id   int64
	d    []byte // the Huffman codes, as huff0 writes them
	s    []byte // the dictionary (tablesDict), as s2 writes it
	kind tablesKind
	old  *map[int64]*decoder
}

// insert keeps m in its store's table of tables, in tx.
func (m *made) insert(tx *sql.Tx) error {
	var err error
	if m.kind == tablesDict {
		_, err = tx.Exec(`INSERT INTO zs2 (id, s, d) VALUES (?, ?, ?)`, m.id, m.s, m.d)
	} else {
		_, err = tx.Exec(`INSERT INTO zdict (id, d) VALUES (?, ?)`, m.id, m.d)
	}
	return err
}

// makeTable makes a table from the samples and installs it for reading
// at once (no value coded with it is visible before the transaction
// writing it commits) and for writing. Every byte value has a code, so
// that any value can be coded with it. Nil when the samples make none.
func (c *codec) makeTable() *made {
	var dict *s2.Dict
	var train []byte
	if c.kind == tablesDict {
		// The dictionary is the first half sampled (at most s2's most),
		// the codes made from the values after it coded with it: the
		// values in the dictionary code to almost nothing.
		end := min(len(c.samples)/2, s2.MaxDictSize)
		if dict = s2.MakeDict(bytes.Clone(c.samples[:end]), nil); dict == nil {
			c.samples, c.cuts, c.train = nil, nil, false // too few bytes sampled: kept as they are
			return nil
		}
		from := 0
		for _, to := range c.cuts {
			if from >= end {
				train = append(train, dict.Encode(nil, c.samples[from:to])...)
			}
			from = to
		}
		if len(train) < len(c.samples)/16 {
			train = append(train, c.samples...) // the values alike: their bytes, as S2 leaves them as literals
		}
	} else {
		train = bytes.Clone(c.samples)
	}
	for i := range 256 {
		train = append(train, byte(i))
	}
	var s huff0.Scratch
	s.Reuse = huff0.ReusePolicyNone
	if _, _, err := huff0.Compress1X(train, &s); err != nil {
		c.samples, c.cuts, c.train = nil, nil, false // values too alike or too random: kept as they are
		return nil
	}
	m := &made{id: c.encID + 1, d: bytes.Clone(s.OutTable), kind: c.kind}
	enc, _, err := huff0.ReadTable(m.d, nil)
	if err != nil {
		c.samples, c.cuts, c.train = nil, nil, false
		return nil
	}
	dec, _, _ := huff0.ReadTable(m.d, nil)
	if dict != nil {
		m.s = dict.Bytes()
	}
	m.old = c.tables.Load()
	tables := map[int64]*decoder{m.id: {huff: dec.Decoder(), dict: dict}}
	for id, d := range *m.old {
		tables[id] = d
	}
	c.tables.Store(&tables)
	c.useTable(enc, dict)
	c.encID = m.id
	return m
}

// settle makes m the store's once the transaction writing it committed,
// or puts the earlier tables back when it did not.
func (c *codec) settle(m *made, committed bool) {
	if !committed {
		c.enc, c.dict = nil, nil
		c.encID = m.id - 1
		c.tables.Store(m.old)
		return
	}
	c.samples, c.cuts, c.train = nil, nil, false
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
	if dec.dict != nil {
		// n is the length of the value coded with the dictionary, then
		// the codes; 0 when it is kept as the dictionary left it.
		if k <= 0 || n > uint64(s2.MaxEncodedLen(compressMax)) {
			return nil, fmt.Errorf("%w: a coded value's length does not read", errDamagedValue)
		}
		in := v[k:]
		if n > 0 {
			var err error
			in, err = dec.huff.Decompress4X(make([]byte, 0, n), v[k:])
			if err != nil || uint64(len(in)) != n {
				return nil, fmt.Errorf("%w: a coded value does not decode: %v", errDamagedValue, err)
			}
		}
		l, err := s2.DecodedLen(in)
		if err != nil || l < compressMin || l > compressMax {
			return nil, fmt.Errorf("%w: a coded value's length does not read", errDamagedValue)
		}
		if cap(buf) < l {
			buf = make([]byte, 0, l)
		}
		out, err := dec.dict.Decode(buf[:l], in)
		if err != nil || len(out) != l {
			return nil, fmt.Errorf("%w: a coded value does not decode: %v", errDamagedValue, err)
		}
		return out, nil
	}
	if k <= 0 || n < compressMin || n > compressMax {
		return nil, fmt.Errorf("%w: a coded value's length does not read", errDamagedValue)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, 0, n)
	}
	out, err := dec.huff.Decompress4X(buf[:0:n], v[k:])
	if err != nil || uint64(len(out)) != n {
		return nil, fmt.Errorf("%w: a coded value does not decode: %v", errDamagedValue, err)
	}
	return out, nil
}

// errDamagedValue marks a value that does not read back; wrap reports
// it as damage.
var errDamagedValue = errors.New("damaged value")
