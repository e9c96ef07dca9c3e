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
		pebbleCacheDef(&m.store, "12MiB"),
		pebbleMemTableDef(&m.store, "7MiB"),
		{"held", "1024", "recently stored versions kept for the judge's chain checks (an edit's previous version)", countValue(&m.store.Held)},
		{"verdicts", "8192", "passing signature verdicts remembered (02 §3.2) for versions held aside and checked again", countValue(&m.verdicts)},
	}
}

// pebbleCacheDef is the part of m that is a Pebble store's block cache,
// its default def.
func pebbleCacheDef(m *store.Memory, def string) setting {
	return setting{"block-cache", def, "a Pebble store's block cache (sstable blocks, filters and indexes)", sizeValue(&m.BlockCache)}
}

// pebbleMemTableDef is the part of m that is one of a Pebble store's
// memtables, its default def, at least store.MinMemTable.
func pebbleMemTableDef(m *store.Memory, def string) setting {
	return setting{"memtable", def, "one of a Pebble store's two memtables (the one taking writes, the one being flushed)", func(v string) error {
		err := sizeValue(&m.MemTable)(v)
		if err == nil && m.MemTable < store.MinMemTable {
			err = fmt.Errorf("%s is less than the least, 64KiB", v)
		}
		return err
	}}
}

// serveMemoryDefs lists the parts of a node's memory serve's --memory
// sets, in the order docs/stores.md's table (Memory of a node) does; a
// part not set is the node's default (node.DefaultBlockCache,
// node.DefaultMemTable), which the defaults written here are.
func serveMemoryDefs(m *store.Memory) []setting {
	return []setting{pebbleCacheDef(m, "12MiB"), pebbleMemTableDef(m, "7MiB")}
}

// serveMemoryFlag is serve's --memory NAME=VALUE, repeatable, setting m.
func serveMemoryFlag(m *store.Memory) *settingsFlag {
	return &settingsFlag{noun: "part", defs: serveMemoryDefs(m)}
}

// serveMemoryHelp is serve's --memory help: each part with its default.
func serveMemoryHelp() string {
	var parts []string
	for _, d := range serveMemoryDefs(&store.Memory{}) {
		parts = append(parts, d.name+" ("+d.def+")")
	}
	return "a bound on what the node's store keeps in memory, `NAME=VALUE` (repeatable; docs/stores.md, Memory of a node): " + strings.Join(parts, ", ")
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
