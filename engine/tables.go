package engine

import (
	"context"
	"errors"

	"github.com/minca-go/minca/engine/internal/keys"
)

// TableBytes is what one table of the key layout holds (engine/internal/
// keys): its entries, and the bytes of their keys and values as the
// engine writes them, before a backend compresses or pages them.
type TableBytes struct {
	// Table is the table's prefix byte as a one-letter name ("v", "e",
	// …); record heads are counted apart from history entries, as "h
	// heads".
	Table      string `json:"table"`
	Entries    int64  `json:"entries"`
	KeyBytes   int64  `json:"keyBytes"`
	ValueBytes int64  `json:"valueBytes"`
}

// headsTable names the record heads among the 'h' entries in [TableBytes].
const headsTable = "h heads"

// Tables reads every key of the store and returns what each table holds,
// in key order (heads after the history entries): where the store's bytes
// go, for sizing a layout.
func (s *Store) Tables(ctx context.Context) ([]TableBytes, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	it, err := s.kv.NewIter(nil, nil)
	if err != nil {
		return nil, err
	}
	var out []TableBytes
	var heads TableBytes
	heads.Table = headsTable
	for n := 0; it.Next(); n++ {
		if n%4096 == 0 {
			if err := s.stop(ctx); err != nil {
				it.Close()
				return nil, err
			}
		}
		k, v := it.Key(), it.Value()
		t := &heads
		if !(len(k) > 0 && k[0] == keys.History && keys.IsHead(k)) {
			name := string(k[:min(len(k), 1)]) // a damaged store may hold an empty key
			if len(out) == 0 || out[len(out)-1].Table != name {
				out = append(out, TableBytes{Table: name})
			}
			t = &out[len(out)-1]
		}
		t.Entries++
		t.KeyBytes += int64(len(k))
		t.ValueBytes += int64(len(v))
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return nil, err
	}
	if heads.Entries == 0 {
		return out, nil
	}
	i := 0 // after the history entries, where 'h' sorts
	for i < len(out) && out[i].Table <= string(rune(keys.History)) {
		i++
	}
	return append(out[:i], append([]TableBytes{heads}, out[i:]...)...), nil
}
