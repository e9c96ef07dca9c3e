package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/minca-go/minca/store"
)

// importMemory is what store import keeps in memory, each part bounded
// by its own size and none by the input's or the store's, so the import
// of ten million versions keeps what the import of a hundred thousand
// does (docs/stores.md, Memory of store import). Set by --memory
// NAME=VALUE.
type importMemory struct {
	// goHeap is the soft limit on the Go heap (debug.SetMemoryLimit);
	// 0 when $GOMEMLIMIT sets it and --memory go-heap does not.
	goHeap int64
	// store is the Pebble store's block cache and memtables, and the
	// versions the engine keeps for the judge's chain checks.
	store store.Memory
	// verdicts is how many passing verdicts (02 §3.2) the judge keeps.
	verdicts int
}

// memoryDefs lists m's parts in the order docs/stores.md's table does.
func memoryDefs(m *importMemory) []setting {
	return []setting{
		{"go-heap", "76MiB", "the soft limit on the Go heap: the versions in the pipeline, the caches below and the collector's room", sizeValue(&m.goHeap)},
		{"block-cache", "12MiB", "a Pebble store's block cache (sstable blocks, filters and indexes)", sizeValue(&m.store.BlockCache)},
		{"memtable", "7MiB", "one of a Pebble store's two memtables (the one taking writes, the one being flushed)", func(v string) error {
			err := sizeValue(&m.store.MemTable)(v)
			if err == nil && m.store.MemTable < store.MinMemTable {
				err = fmt.Errorf("%s is less than the least, 64KiB", v)
			}
			return err
		}},
		{"held", "1024", "recently stored versions kept for the judge's chain checks (an edit's previous version)", countValue(&m.store.Held)},
		{"verdicts", "8192", "passing signature verdicts remembered (02 §3.2) for versions held aside and checked again", countValue(&m.verdicts)},
	}
}

// memoryHelp is --memory's help: each part with its default.
func memoryHelp() string {
	var parts []string
	for _, d := range memoryDefs(&importMemory{}) {
		parts = append(parts, d.name+" ("+d.def+")")
	}
	return "a bound on what the import keeps in memory, `NAME=VALUE` (repeatable; docs/stores.md): " + strings.Join(parts, ", ") + "; go-heap's default gives way to $GOMEMLIMIT"
}

// newImportMemory is the defaults; the Go heap's is left to $GOMEMLIMIT
// where it is set.
func newImportMemory() *importMemory {
	m := &importMemory{}
	for _, d := range memoryDefs(m) {
		if d.name == "go-heap" && os.Getenv("GOMEMLIMIT") != "" {
			continue
		}
		if err := d.set(d.def); err != nil {
			panic(fmt.Sprintf("minca: the default of --memory %s: %v", d.name, err))
		}
	}
	return m
}

// limitHeap sets the Go heap's soft limit, where m has one, and returns
// what puts back the limit there was.
func (m *importMemory) limitHeap() (restore func()) {
	if m.goHeap <= 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(m.goHeap)
	return func() { debug.SetMemoryLimit(prev) }
}

// memoryFlag is --memory NAME=VALUE, repeatable, setting m.
func memoryFlag(m *importMemory) *settingsFlag {
	return &settingsFlag{noun: "part", defs: memoryDefs(m)}
}
