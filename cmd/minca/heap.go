package main

import (
	"os"
	"runtime/debug"
)

// bulkHeapLimit is the soft limit on the Go heap of a verb that admits
// versions in bulk (store import). Its live heap is the versions in its
// pipeline and the engine's bounded caches, 60–70 MiB whatever the
// input's size; left to the collector's default the heap grows to twice
// that, and more between collections. A limit closer to the live heap
// (80 MiB) cost twice the CPU a version in collections.
const bulkHeapLimit = 128 << 20

// limitHeap sets the Go heap's soft limit for a bulk verb, unless
// GOMEMLIMIT already says what it is, and returns what puts back the
// limit there was.
func limitHeap() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(bulkHeapLimit)
	return func() { debug.SetMemoryLimit(prev) }
}
