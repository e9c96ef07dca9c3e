package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
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

// memoryDef is one part of importMemory: its name, its default as
// written, and where it goes.
type memoryDef struct {
	name, def, what string
	set             func(m *importMemory, v string) error
}

// memoryDefs lists the parts in the order docs/stores.md's table does.
func memoryDefs() []memoryDef {
	return []memoryDef{
		{"go-heap", "80MiB", "the soft limit on the Go heap: the versions in the pipeline, the caches below and the collector's room", func(m *importMemory, v string) error {
			n, err := parseSize(v)
			m.goHeap = int64(n)
			return err
		}},
		{"block-cache", "16MiB", "a Pebble store's block cache (sstable blocks, filters and indexes)", func(m *importMemory, v string) error {
			n, err := parseSize(v)
			m.store.BlockCache = int64(n)
			return err
		}},
		{"memtable", "8MiB", "one of a Pebble store's two memtables (the one taking writes, the one being flushed)", func(m *importMemory, v string) error {
			n, err := parseSize(v)
			if err == nil && n < store.MinMemTable {
				err = fmt.Errorf("%s is less than the least, 64KiB", v)
			}
			m.store.MemTable = uint64(n)
			return err
		}},
		{"held", "2048", "recently stored versions kept for the judge's chain checks (an edit's previous version)", func(m *importMemory, v string) error {
			return positiveCount(&m.store.Held, v)
		}},
		{"verdicts", "16384", "passing signature verdicts remembered (02 §3.2) for versions held aside and checked again", func(m *importMemory, v string) error {
			return positiveCount(&m.verdicts, v)
		}},
	}
}

// memoryHelp is --memory's help: each part with its default.
func memoryHelp() string {
	var parts []string
	for _, d := range memoryDefs() {
		parts = append(parts, d.name+" ("+d.def+")")
	}
	return "a bound on what the import keeps in memory, `NAME=VALUE` (repeatable; docs/stores.md): " + strings.Join(parts, ", ") + "; go-heap's default gives way to $GOMEMLIMIT"
}

func positiveCount(p *int, v string) error {
	n, err := strconv.Atoi(v)
	if err == nil && n <= 0 {
		err = fmt.Errorf("%d is not a positive count", n)
	}
	*p = n
	return err
}

// newImportMemory is the defaults; the Go heap's is left to $GOMEMLIMIT
// where it is set.
func newImportMemory() *importMemory {
	m := &importMemory{}
	for _, d := range memoryDefs() {
		if d.name == "go-heap" && os.Getenv("GOMEMLIMIT") != "" {
			continue
		}
		if err := d.set(m, d.def); err != nil {
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

// memoryFlag is --memory NAME=VALUE, repeatable.
type memoryFlag struct {
	m   *importMemory
	set []string
}

func (f *memoryFlag) String() string { return strings.Join(f.set, ",") }

func (f *memoryFlag) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, have %q", s)
	}
	defs := memoryDefs()
	i := slices.IndexFunc(defs, func(d memoryDef) bool { return d.name == name })
	if i < 0 {
		names := make([]string, len(defs))
		for j, d := range defs {
			names[j] = d.name
		}
		return fmt.Errorf("no part %q; the parts are %s", name, strings.Join(names, ", "))
	}
	if err := defs[i].set(f.m, v); err != nil {
		return fmt.Errorf("%s=%s: %v", name, v, err)
	}
	f.set = append(f.set, s)
	return nil
}
