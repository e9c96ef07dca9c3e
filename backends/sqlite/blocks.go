package sqlite

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Blocks. In a store of blocks (rows in kvt or kvu) the values of the
// versions' table ('v' ‖ vseq, 8 bytes big-endian: engine/internal/keys)
// are kept blockSpan consecutive vseqs together, zstd-coded as one block
// in the kvblk table, keyed by the block's first possible key ('v' ‖
// vseq with its low six bits zero). A store made now (rows in kvu) keeps
// the places of writers' lines ('l' ‖ label ‖ 0x00 ‖ line ‖ n, n 8 bytes
// big-endian, as stored: labels.go) the same way, blockSpan consecutive
// places of one line to a block keyed by its first possible key: a line's
// places are written in order, one after another, and each is a key of
// 43 bytes or so holding a vseq of two or three, which as a row of its
// own costs SQLite its key, a cell and its share of the pages' slack.
//
// A version's value is ~500 bytes, too small for any coding to find what
// repeats from one version to the next inside it alone; a block of 64 of
// them (~28 KiB) holds the same members, space, authors and collections
// thirty times over. A row of the rows' table with a key inside a block's
// span wins over the block's copy: a later write of one key is a row,
// and a delete a tombstone row (z = tombstone), until enough writes fall
// in the span (compactAt) that the batch making the last of them
// rewrites the block with them and deletes the rows, in its transaction.
//
// A block's span is the keys that differ from its key in the low six
// bits of their last byte alone: its key is one of them, the least.
const (
	blockSpan = 64 // keys a block covers: a power of two, at most 256
	// blockValueMax is the largest value a block holds: a larger one is
	// a row of its own (coded as any row is), so a block decodes to at
	// most blockSpan × blockValueMax bytes and a large body is not
	// decoded to read its neighbours.
	blockValueMax = 8 << 10
	blockRawMax   = blockSpan * (blockValueMax + 1 + binary.MaxVarintLen32)
	// compactAt is how many writes to rows in a block's span (since the
	// store was opened) make a batch rewrite the block: a batch of new
	// versions makes its blocks at once; later writes (a version given
	// back by its record's head, or made a stub) wait as rows.
	compactAt = 8
	// blockFormat is a block row's first byte: a zstd frame of its
	// entries follows. Any other first byte is damage.
	blockFormat = 1
	// tombstone is the z of a row saying its key is deleted, whatever a
	// block holds for it.
	tombstone = -1
	// blockCacheBytes bounds the decoded blocks kept for reads (their
	// decoded and coded bytes).
	blockCacheBytes = 4 << 20
)

// families is the tables whose keys a store of blocks keeps in blocks.
type families uint8

const (
	famVersions families = 1 << iota // 'v' vseq: every store of blocks
	famLines                         // 'l' label 0x00 line n: a store with its rows in kvu
)

// lineRest is the length of a line place's key after its label's end:
// the line's tag (32 bytes) and n (8).
const lineRest = 32 + 8

// span reports whether stored key k's value is kept in a block in a store
// of these families, and its index in its block (its key's low six bits).
func (f families) span(k []byte) (idx int, ok bool) {
	switch {
	case len(k) == 9 && k[0] == 'v' && f&famVersions != 0:
	case len(k) >= 2+1+lineRest && k[0] == 'l' && f&famLines != 0:
		// A label (no 0x00 in it) and its end, then exactly the rest.
		end := len(k) - lineRest - 1
		if k[end] != 0 || bytes.IndexByte(k[1:end], 0) >= 0 {
			return 0, false
		}
	default:
		return 0, false
	}
	return int(k[len(k)-1] & (blockSpan - 1)), true
}

// blockOf is the key of the block whose span holds key k (one span
// holds): k with the low six bits of its last byte zero.
func blockOf(k []byte) []byte {
	bk := bytes.Clone(k)
	bk[len(bk)-1] &^= blockSpan - 1
	return bk
}

// entryKey is the key of entry idx of the block bk.
func entryKey(bk []byte, idx int) []byte {
	k := bytes.Clone(bk)
	k[len(k)-1] |= byte(idx)
	return k
}

// lastKey is the greatest key block bk's span holds.
func lastKey(bk []byte) []byte { return entryKey(bk, blockSpan-1) }

// block is a block decoded: entry i's value is raw[off[i]:off[i]+n[i]]
// when n[i] ≥ 0.
type block struct {
	coded []byte // the row as stored: a read that finds the same bytes uses this decoding
	raw   []byte
	off   [blockSpan]int32
	n     [blockSpan]int32 // -1: no entry
}

func (b *block) get(idx int) ([]byte, bool) {
	if b.n[idx] < 0 {
		return nil, false
	}
	return b.raw[b.off[idx] : b.off[idx]+b.n[idx] : b.off[idx]+b.n[idx]], true
}

// blockCodec codes and decodes blocks and keeps the latest decoded ones.
type blockCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder

	mu    sync.Mutex
	byKey map[string]*list.Element // of *cached, by the block's key
	lru   list.List
	bytes int
}

type cached struct {
	key string
	b   *block
}

func newBlockCodec() (*blockCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(2), zstd.WithDecoderMaxMemory(blockRawMax))
	if err != nil {
		return nil, err
	}
	return &blockCodec{enc: enc, dec: dec, byKey: map[string]*list.Element{}}, nil
}

func (c *blockCodec) close() {
	c.enc.Close()
	c.dec.Close()
}

// entry is one value of a block being made.
type entry struct {
	idx int
	v   []byte
}

// encode is the row of a block of entries (ascending idx, each value at
// most blockValueMax bytes).
func (c *blockCodec) encode(es []entry) []byte {
	var raw []byte
	for _, e := range es {
		raw = append(binary.AppendUvarint(append(raw, byte(e.idx)), uint64(len(e.v))), e.v...)
	}
	return c.enc.EncodeAll(raw, []byte{blockFormat})
}

// errDamagedBlock marks a block that does not decode.
var errDamagedBlock = errors.New("damaged block")

// decode is the block bk whose row is coded, from the cache when it holds
// one decoded from the same bytes. A block that does not decode is an
// error wrapping errDamagedBlock.
func (c *blockCodec) decode(bk, coded []byte) (*block, error) {
	c.mu.Lock()
	if el := c.byKey[string(bk)]; el != nil && bytes.Equal(el.Value.(*cached).b.coded, coded) {
		c.lru.MoveToFront(el)
		b := el.Value.(*cached).b
		c.mu.Unlock()
		return b, nil
	}
	c.mu.Unlock()
	b, err := c.decodeRow(coded)
	if err != nil {
		return nil, err
	}
	c.keep(string(bk), b)
	return b, nil
}

// decodeRow decodes a block row; every way it can fail is an error, none
// a panic (FuzzDecodeBlock).
func (c *blockCodec) decodeRow(coded []byte) (*block, error) {
	if len(coded) == 0 || coded[0] != blockFormat {
		return nil, fmt.Errorf("%w: not a block of a format this minca reads", errDamagedBlock)
	}
	raw, err := c.dec.DecodeAll(coded[1:], make([]byte, 0, 16<<10))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDamagedBlock, err)
	}
	if len(raw) > blockRawMax {
		return nil, fmt.Errorf("%w: %d bytes decoded, more than a block holds", errDamagedBlock, len(raw))
	}
	b := &block{coded: bytes.Clone(coded), raw: raw}
	for i := range b.n {
		b.n[i] = -1
	}
	last := -1
	for at := 0; at < len(raw); {
		idx := int(raw[at])
		if idx >= blockSpan || idx <= last {
			return nil, fmt.Errorf("%w: entry %d after %d", errDamagedBlock, idx, last)
		}
		n, k := binary.Uvarint(raw[at+1:])
		if k <= 0 || n > blockValueMax || uint64(len(raw)-at-1-k) < n {
			return nil, fmt.Errorf("%w: entry %d's length does not read", errDamagedBlock, idx)
		}
		b.off[idx], b.n[idx] = int32(at+1+k), int32(n)
		at += 1 + k + int(n)
		last = idx
	}
	if last < 0 {
		return nil, fmt.Errorf("%w: no entries", errDamagedBlock)
	}
	return b, nil
}

// keep caches b, dropping the least recently used blocks past
// blockCacheBytes.
func (c *blockCodec) keep(key string, b *block) {
	size := len(b.raw) + len(b.coded)
	if size > blockCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.byKey[key]; el != nil {
		old := el.Value.(*cached)
		c.bytes -= len(old.b.raw) + len(old.b.coded)
		old.b = b
		c.lru.MoveToFront(el)
	} else {
		c.byKey[key] = c.lru.PushFront(&cached{key: key, b: b})
	}
	c.bytes += size
	for c.bytes > blockCacheBytes {
		el := c.lru.Back()
		old := el.Value.(*cached)
		c.lru.Remove(el)
		delete(c.byKey, old.key)
		c.bytes -= len(old.b.raw) + len(old.b.coded)
	}
}
