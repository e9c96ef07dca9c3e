package sqlite

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
)

// The writes a block's span took since the store was opened are counted
// in memory only: a store reopened (after a crash as after Close) counts
// from 0, and a span's rows written before wait beside its block until
// compactAt writes fall in the span again. Nothing reads wrong meanwhile
// (a row wins over its block), and the rewrite then takes in every row of
// the span, those written before the reopen too.
func TestPendingCountLostOnlyDelaysTheRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	kv, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { kv.Close() }()
	m := blocksModel{}
	write := func(round int, ns ...uint64) {
		t.Helper()
		b, err := kv.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			v := fmt.Appendf(nil, `{"version":%d,"round":%d}`, n, round)
			b.Set(vkey(n), v)
			m[string(vkey(n))] = v
		}
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
	}
	rowsInSpan := func() int {
		t.Helper()
		var n int
		if err := kv.db.QueryRow(`SELECT count(*) FROM `+kv.rows+` WHERE k >= ? AND k <= ?`, vkey(0), vkey(blockSpan-1)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(when string) {
		t.Helper()
		for k, want := range m {
			if v, err := kv.Get([]byte(k)); err != nil || !bytes.Equal(v, want) {
				t.Fatalf("%s: Get %x: %q, %v; want %q", when, k, v, err, want)
			}
		}
	}
	var all []uint64
	for n := range uint64(blockSpan) {
		all = append(all, n)
	}
	write(0, all...) // one batch: the block at once
	if n := rowsInSpan(); n != 0 {
		t.Fatalf("a new block's span has %d rows", n)
	}
	for i := range uint64(compactAt - 1) {
		write(1, i) // rows beside the block
	}
	if n := rowsInSpan(); n != compactAt-1 {
		t.Fatalf("%d rows after %d writes", n, compactAt-1)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if kv, err = Open(path, nil); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	for i := range uint64(compactAt - 1) {
		write(2, 10+i) // counted from 0: rows still
	}
	if n := rowsInSpan(); n != 2*(compactAt-1) {
		t.Fatalf("%d rows after the reopen's %d writes; want %d", n, compactAt-1, 2*(compactAt-1))
	}
	check("rows on both sides of the reopen")
	write(3, 20) // the reopen's compactAt-th: the block is rewritten
	if n := rowsInSpan(); n != 0 {
		t.Fatalf("%d rows left in the span after its block was rewritten", n)
	}
	check("rewritten")
}
