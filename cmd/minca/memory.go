package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/minca-go/minca/engine"
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
	// heapDefault is whether goHeap is the default (neither --memory
	// go-heap nor $GOMEMLIMIT set it), which follows the store's import
	// batch (forBatch).
	heapDefault bool
	// store is the Pebble store's block cache and memtables, and the
	// versions the engine keeps for the judge's chain checks.
	store store.Memory
	// verdicts is how many passing verdicts (02 §3.2) the judge keeps.
	verdicts int
}

// memoryDefs lists m's parts in the order docs/stores.md's table does.
func memoryDefs(m *importMemory) []setting {
	return []setting{
		{"go-heap", "76MiB", "the soft limit on the Go heap: the versions in the pipeline, the caches below and the collector's room", func(v string) error {
			m.heapDefault = false
			return sizeValue(&m.goHeap)(v)
		}},
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

// nodeMemory is what serve's node keeps in memory besides what its limits
// bound (docs/stores.md, Memory of a node). Set by serve's --memory
// NAME=VALUE.
type nodeMemory struct {
	// goHeap is the soft limit on the Go heap (debug.SetMemoryLimit);
	// 0 when $GOMEMLIMIT sets it and --memory go-heap does not.
	goHeap int64
	// eventRing is node.Options.EventRingBytes.
	eventRing int64
	// store is the Pebble store's block cache and memtables; a zero part
	// is the node's default (node.DefaultBlockCache, DefaultMemTable),
	// which the defaults written here are.
	store store.Memory
}

// nodeMemoryDefs lists m's parts in the order docs/stores.md's table
// (Memory of a node) does.
func nodeMemoryDefs(m *nodeMemory) []setting {
	return []setting{
		// 48 MiB: moving 1 GiB in 262,144 files of 4 KiB between two
		// nodes under it, the receiver peaked at 119–122 MiB resident and
		// the sender at 107–113, under the 160 MB bound; at 80 MiB the
		// heap's goal and the pages the collector frees late take more
		// (65,536 files: 130.6 MiB against 114.7; bench/REPORT-files.md).
		{"go-heap", "48MiB", "the soft limit on the Go heap: the versions being admitted, the files in flight and the collector's room", sizeValue(&m.goHeap)},
		pebbleCacheDef(&m.store, "12MiB"),
		pebbleMemTableDef(&m.store, "7MiB"),
		{"event-ring", "8MiB", "the recent events kept for subscribers (the API's event streams) to take", sizeValue(&m.eventRing)},
	}
}

// newNodeMemory is the defaults; the Go heap's is left to $GOMEMLIMIT
// where it is set.
func newNodeMemory() *nodeMemory {
	m := &nodeMemory{}
	setDefaults(nodeMemoryDefs(m))
	return m
}

// limitHeap sets the Go heap's soft limit, where m has one, and returns
// what puts back the limit there was.
func (m *nodeMemory) limitHeap() (restore func()) { return limitHeap(m.goHeap) }

// nodeMemoryFlag is serve's --memory NAME=VALUE, repeatable, setting m.
func nodeMemoryFlag(m *nodeMemory) *settingsFlag {
	return &settingsFlag{noun: "part", defs: nodeMemoryDefs(m)}
}

// nodeMemoryHelp is serve's --memory help: each part with its default.
func nodeMemoryHelp() string {
	return "a bound on what the node keeps in memory, `NAME=VALUE` (repeatable; docs/stores.md, Memory of a node): " + partsHelp(nodeMemoryDefs(&nodeMemory{})) + "; go-heap's default gives way to $GOMEMLIMIT"
}

// partsHelp is each of defs with its default, for a flag's help.
func partsHelp(defs []setting) string {
	var parts []string
	for _, d := range defs {
		parts = append(parts, d.name+" ("+d.def+")")
	}
	return strings.Join(parts, ", ")
}

// setDefaults sets each of defs to its default; go-heap's is left to
// $GOMEMLIMIT where it is set.
func setDefaults(defs []setting) {
	for _, d := range defs {
		if d.name == "go-heap" && os.Getenv("GOMEMLIMIT") != "" {
			continue
		}
		if err := d.set(d.def); err != nil {
			panic(fmt.Sprintf("minca: the default of --memory %s: %v", d.name, err))
		}
	}
}

// limitHeap sets the Go heap's soft limit to goHeap, where it is
// positive, and returns what puts back the limit there was.
func limitHeap(goHeap int64) (restore func()) {
	if goHeap <= 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(goHeap)
	return func() { debug.SetMemoryLimit(prev) }
}

// memoryHelp is --memory's help: each part with its default.
func memoryHelp() string {
	return "a bound on what the import keeps in memory, `NAME=VALUE` (repeatable; docs/stores.md): " + partsHelp(memoryDefs(&importMemory{})) + "; go-heap's default gives way to $GOMEMLIMIT"
}

// newImportMemory is the defaults; the Go heap's is left to $GOMEMLIMIT
// where it is set.
func newImportMemory() *importMemory {
	m := &importMemory{}
	setDefaults(memoryDefs(m))
	m.heapDefault = m.goHeap > 0
	return m
}

// heapPerBatchVersion is the Go heap the default go-heap gives each
// version a batch holds beyond engine.DefaultImportBatch: the pipeline
// holds four batches (one read, one checked, one decided, one
// committing), each version decoded some 5 KiB. Without it, batches of
// 2,000 (SQLite's) left the collector so little room under 76 MiB that
// an import of 100,000 versions collected 328 times, not 94, for 70%
// more CPU; with it, 110 times (bench/REPORT-engine.md).
const heapPerBatchVersion = 20 << 10

// forBatch makes the default go-heap room for a store whose import
// batches hold batch versions (engine.Store.ImportBatch); a go-heap
// given (--memory, $GOMEMLIMIT) stands.
func (m *importMemory) forBatch(batch int) {
	if m.heapDefault && batch > engine.DefaultImportBatch {
		m.goHeap += int64(batch-engine.DefaultImportBatch) * heapPerBatchVersion
	}
}

// limitHeap sets the Go heap's soft limit, where m has one, and returns
// what puts back the limit there was.
func (m *importMemory) limitHeap() (restore func()) { return limitHeap(m.goHeap) }

// memoryFlag is --memory NAME=VALUE, repeatable, setting m.
func memoryFlag(m *importMemory) *settingsFlag {
	return &settingsFlag{noun: "part", defs: memoryDefs(m)}
}
