package pebble_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
)

// A closed store keeps one write-ahead log, empty, not the spent ones
// Pebble holds for reuse, and reads back everything written before the
// close, opened again after.
func TestCloseLeavesOneLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	opts := &pebble.Options{MemTableSize: 1 << 20}
	s, err := pebble.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 4096)
	const n = 2000 // 8 MiB through 1 MiB memtables: several logs
	for i := range n / 100 {
		b, err := s.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		for j := range 100 {
			if err := b.Set(binary.BigEndian.AppendUint32([]byte("k"), uint32(i*100+j)), value); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if logs := logFiles(t, dir); len(logs) < 2 {
		t.Fatalf("before close, %d logs (%v): the test writes too little to rotate them", len(logs), logs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs := logFiles(t, dir)
	if len(logs) != 1 {
		t.Fatalf("after close, logs %v; want one", logs)
	}
	if st, err := os.Stat(filepath.Join(dir, logs[0])); err != nil || st.Size() != 0 {
		t.Fatalf("the log left after close: %v %v; want it empty (it holds no record)", st.Size(), err)
	}
	readAll(t, dir, n, value)
	// Written to again and closed: the log Pebble opened (from the
	// empty file or a new one) replays as it should.
	s, err = pebble.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	readAll(t, dir, n, value)
}

func readAll(t *testing.T, dir string, n int, value []byte) {
	t.Helper()
	s, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	got := 0
	for it.Next() {
		if want := binary.BigEndian.AppendUint32([]byte("k"), uint32(got)); !bytes.Equal(it.Key(), want) || !bytes.Equal(it.Value(), value) {
			t.Fatalf("key %d: %x", got, it.Key())
		}
		got++
	}
	if err := it.Err(); err != nil || got != n {
		t.Fatalf("read %d of %d keys after reopening: %v", got, n, err)
	}
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, e.Name())
		}
	}
	return logs
}
