package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

// Values are kept compressed: SQLite pages hold rows as they are given,
// and most of a store's bytes are envelopes and bodies (JSON), each too
// small to compress well alone. Each value of compressMin to compressMax
// bytes is one zstd frame made with a dictionary the store trains on its
// own first values (trainBytes of them), kept in the zdict table in the
// same transaction as the first value compressed with it. The kv table's
// z column says how a value is kept: NULL as it is (every value of a store
// written before, and a value compression does not make smaller), 1 a
// zstd frame (which names its dictionary).
const (
	compressMin = 128
	compressMax = 1 << 20
	trainBytes  = 256 << 10
	dictMax     = 4 << 10 // larger dictionaries compressed envelopes no better, and cost more a value
	sampleMax   = 16 << 10
	zFrame      = 1
)

// codec compresses and decompresses the store's values. enc and the
// training state are used under the store's ownMu (by commits); dec is
// used by any reader.
type codec struct {
	dec     atomic.Pointer[zstd.Decoder]
	dicts   [][]byte
	enc     *zstd.Encoder // nil until the store has a dictionary
	samples [][]byte
	sampled int
	// train is false on a store opened read-only, and once a dictionary
	// is made.
	train bool
	// trainAt is how many bytes of values are sampled before training.
	trainAt int
}

// load reads the store's dictionaries (none in a store written before
// values were compressed) and makes the decoder, and the encoder with
// the latest dictionary.
func (c *codec) load(db *sql.DB, hasDicts, writable bool, trainAt int) error {
	c.trainAt = trainAt
	if hasDicts {
		rows, err := db.Query(`SELECT d FROM zdict ORDER BY id`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var d []byte
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return err
			}
			c.dicts = append(c.dicts, d)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
	}
	dec, err := newDecoder(c.dicts)
	if err != nil {
		return err
	}
	c.dec.Store(dec)
	if !writable {
		return nil
	}
	if len(c.dicts) == 0 {
		c.train = true
		return nil
	}
	c.enc, err = newEncoder(c.dicts[len(c.dicts)-1])
	return err
}

func newDecoder(dicts [][]byte) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderDicts(dicts...), zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(compressMax), zstd.WithDecoderLowmem(true))
}

func newEncoder(d []byte) (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderDict(d), zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
}

func (c *codec) close() {
	if d := c.dec.Load(); d != nil {
		d.Close()
	}
	if c.enc != nil {
		c.enc.Close()
	}
}

// row is a value as written: compressed (z zFrame) or as it is (z nil).
type row struct {
	v []byte
	z any
}

// pack is how value is written. Values are sampled for the dictionary
// until the store has one.
func (c *codec) pack(value []byte) row {
	if len(value) < compressMin || len(value) > compressMax {
		return row{v: value}
	}
	if c.enc == nil {
		if c.train && c.sampled < c.trainAt && len(value) <= sampleMax {
			c.samples = append(c.samples, append([]byte(nil), value...))
			c.sampled += len(value)
		}
		return row{v: value}
	}
	out := c.enc.EncodeAll(value, make([]byte, 0, len(value)/2))
	if len(out) >= len(value)-len(value)/16 {
		return row{v: value}
	}
	return row{v: out, z: zFrame}
}

// dictReady reports whether enough values were sampled to train the
// store's dictionary.
func (c *codec) dictReady() bool { return c.enc == nil && c.train && c.sampled >= c.trainAt }

// trained is a dictionary made from the samples, not yet the store's:
// its encoder, and the decoder that reads it and every earlier one.
type trained struct {
	id       int
	d        []byte
	enc      *zstd.Encoder
	dec, old *zstd.Decoder
}

// trainDict makes a dictionary from the samples and a decoder that reads
// it, installed at once: no value compressed with it is visible before
// the transaction writing it commits. A store whose values do not train
// a dictionary (too few alike) compresses with none.
func (c *codec) trainDict() (*trained, error) {
	t := &trained{id: len(c.dicts) + 1}
	d := buildDict(c.samples, t.id)
	t.d = d
	var err error
	if d == nil {
		t.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	} else {
		t.enc, err = newEncoder(d)
	}
	if err != nil {
		return nil, err
	}
	dicts := c.dicts
	if d != nil {
		dicts = append(dicts[:len(dicts):len(dicts)], d)
	}
	if t.dec, err = newDecoder(dicts); err != nil {
		t.enc.Close()
		return nil, err
	}
	t.old = c.dec.Swap(t.dec)
	c.enc = t.enc
	return t, nil
}

// buildDict is a dictionary trained on samples, or nil when they train
// none. The builder's failures, a panic among them (it has panicked on
// few samples of very different sizes), are a store without a dictionary,
// not a failed commit.
func buildDict(samples [][]byte, id int) (d []byte) {
	defer func() {
		if recover() != nil {
			d = nil
		}
	}()
	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictMax, HashBytes: 6, ZstdDictID: uint32(id), ZstdLevel: zstd.SpeedFastest})
	if err != nil {
		return nil
	}
	return d
}

// settle makes t the store's once the transaction writing its dictionary
// committed, or puts the earlier codec back when it did not.
func (c *codec) settle(t *trained, committed bool) {
	if !committed {
		c.enc = nil
		c.dec.Store(t.old)
		t.enc.Close()
		t.dec.Close()
		return
	}
	if t.d != nil {
		c.dicts = append(c.dicts, t.d)
	}
	c.samples, c.train = nil, false
	t.old.Close()
}

// unpack is the value a row holds, decompressed into buf's room when it
// was compressed.
func (c *codec) unpack(v []byte, z sql.NullInt64, buf []byte) ([]byte, error) {
	switch {
	case !z.Valid:
		return v, nil
	case z.Int64 == zFrame:
		out, err := c.dec.Load().DecodeAll(v, buf[:0])
		if err != nil {
			return nil, fmt.Errorf("%w: a compressed value does not decompress: %v", errDamagedValue, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: a value kept in an unknown way (%d)", errDamagedValue, z.Int64)
}

// errDamagedValue marks a value that does not read back; wrap reports
// it as damage.
var errDamagedValue = errors.New("damaged value")
