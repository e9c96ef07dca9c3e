package engine

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// A record's history entries name each version by its value's vseq
// since layout 15, and by its id's text before. Key order puts a record's
// versions newest seq first (02 §4.3) either way; only versions of one
// seq (a fork at that seq, rare) need their ids to be in 02 §4.3 order,
// and readers read those from the values (histRows.inOrder). A layout 14
// entry is read as it is and is written again by vseq when its standing
// changes, so a layout 14 store needs no upgrade step.
//
// Since layout 18 a record first stored takes a number (the counters'
// recs, the next one, in the batch that stores its first version, as a
// version takes its vseq), its head names it, and its entries are keyed
// by it ('H' num order vseq, keys.HistNumKey): some 16 bytes where the
// record's key made ~100, and a store's new entries come in the order
// records first arrive, so that Pebble moves them down the levels as it
// does the versions, where entries at random places of 'h' were
// rewritten at each level. A record whose head names no number (stored
// by a layout before 18) keeps its entries under its key ('h' rec order
// …, keys.HistoryKey), where they are read and written as before: the
// head says which, so a layout 17 store needs no upgrade step.

// histPrefix is where the history entries of the record rec, numbered
// num (0: none), are.
func histPrefix(rec []byte, num uint64) []byte {
	if num != 0 {
		return keys.HistNumPrefix(num)
	}
	return keys.HistoryPrefix(rec)
}

// appendHistKey appends the key of a history entry of the record rec,
// numbered num (0: none), to dst.
func appendHistKey(dst, rec []byte, num uint64, seq int64, vseq uint64) []byte {
	if num != 0 {
		return keys.AppendHistNumKey(dst, num, seq, vseq)
	}
	return keys.AppendHistoryKey(dst, rec, seq, vseq)
}

// histRow is one entry of a record's history as a reader has it: its
// key, what the key says, the version's digest and id text (read from
// its value when the key names it by vseq), and the entry.
type histRow struct {
	key  []byte
	k    keys.HistEntry
	d    canonical.ID
	id   string
	e    histEntry
	vseq uint64 // where its value is, when known (always for a key by vseq)
}

// inHistoryOrder sorts the rows of one record, read in key order, into 02
// §4.3 order: key order already has seqs newest first; each run of one
// seq is sorted by id, as record.SupersedesBy orders them.
func inHistoryOrder(rows []histRow) {
	for i := 1; i < len(rows); i++ {
		if rows[i].k.Seq == rows[i-1].k.Seq {
			slices.SortStableFunc(rows, func(a, b histRow) int {
				if a.k.Seq != b.k.Seq {
					return cmp.Compare(b.k.Seq, a.k.Seq)
				}
				return strings.Compare(a.id, b.id)
			})
			return
		}
	}
}

// histRowOf reads one history key and value; id reads the id of the
// version whose value is at a vseq. A key of neither form, or a value that
// does not decode, is damage.
func histRowOf(k, val []byte, id func(vseq uint64) (canonical.ID, error)) (histRow, error) {
	r := histRow{key: k}
	var ok bool
	if r.k, ok = keys.HistoryEntry(k); !ok {
		return r, Errorf(ErrCorrupt, "damaged: history key %x", k)
	}
	var err error
	if r.e, err = decodeHist(val); err != nil {
		return r, err
	}
	if !r.k.ByVseq {
		r.d, r.id = r.k.D, r.k.ID
		return r, nil
	}
	r.vseq = r.k.Vseq
	if r.d, err = id(r.vseq); err != nil {
		return r, err
	}
	r.id = r.d.String()
	return r, nil
}

// history reads a record's history entries as this batch sees them, in
// 02 §4.3 order; num is the number its head names.
func (t *tx) history(rec []byte, num uint64) ([]histRow, error) {
	p := histPrefix(rec, num)
	var rows []histRow
	var err error
	serr := t.scan(p, keys.PrefixEnd(p), func(k, val []byte) bool {
		if num == 0 && keys.IsHead(k) {
			return true
		}
		var r histRow
		if r, err = histRowOf(bytes.Clone(k), val, func(vseq uint64) (canonical.ID, error) { return t.idAt("a history entry", vseq) }); err != nil {
			return false
		}
		if r.k.Num != num || num == 0 && !bytes.Equal(r.k.Rec, rec) {
			err = Errorf(ErrCorrupt, "damaged: history key %x", k)
			return false
		}
		rows = append(rows, r)
		return true
	})
	if err = errors.Join(serr, err); err != nil {
		return nil, err
	}
	inHistoryOrder(rows)
	return rows, nil
}

// histEntryAt reads the history entry of v, held at vseq, as this batch
// sees it; key is where it is.
func (t *tx) histEntryAt(v *record.Version, vseq uint64) (e histEntry, key []byte, err error) {
	rec := keys.Rec(v.Space, v.Key)
	h, ok, err := t.head(rec)
	if err != nil {
		return histEntry{}, nil, err
	}
	if !ok {
		return histEntry{}, nil, Errorf(ErrCorrupt, "damaged: version %s has no history entry: its record has no head", v.ID)
	}
	return t.histEntryOf(rec, h.num, v, vseq)
}

// histEntryOf reads the history entry of v, held at vseq, of the record
// rec numbered num (0: none), as this batch sees it, by vseq or (layouts
// before 15, under the record's key alone) by id; key is where it is.
func (t *tx) histEntryOf(rec []byte, num uint64, v *record.Version, vseq uint64) (e histEntry, key []byte, err error) {
	ks := [2][]byte{appendHistKey(nil, rec, num, v.Seq, vseq)}
	if num == 0 {
		ks[1] = keys.HistoryIDKey(rec, v.Seq, v.ID)
	}
	for _, k := range ks {
		if k == nil {
			break
		}
		hb, ok, err := t.get(k)
		if err != nil {
			return histEntry{}, nil, err
		}
		if ok {
			e, err := decodeHist(hb)
			return e, k, err
		}
	}
	return histEntry{}, nil, Errorf(ErrCorrupt, "damaged: version %s has no history entry", v.ID)
}

// histEntryIn reads the history entry of v, held at vseq, from r, where
// its record's head says, by vseq or (layouts before 15) by id.
func histEntryIn(r Reader, v *record.Version, vseq uint64) (histEntry, error) {
	rec := keys.Rec(v.Space, v.Key)
	hb, err := r.Get(keys.HeadKey(rec))
	if err != nil {
		return histEntry{}, Errorf(ErrCorrupt, "damaged: version %s has no history entry: its record's head: %v", v.ID, err)
	}
	h, err := decodeHead(hb)
	if err != nil {
		return histEntry{}, err
	}
	hb, err = r.Get(appendHistKey(nil, rec, h.num, v.Seq, vseq))
	if errors.Is(err, ErrNotFound) && h.num == 0 {
		hb, err = r.Get(keys.HistoryIDKey(rec, v.Seq, v.ID))
	}
	if err != nil {
		return histEntry{}, Errorf(ErrCorrupt, "damaged: version %s has no history entry: %v", v.ID, err)
	}
	return decodeHist(hb)
}
