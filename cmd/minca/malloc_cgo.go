//go:build linux && cgo

package main

/*
#include <malloc.h>
#include <stdlib.h>

// limit_malloc_arenas runs as the program loads, before the Go runtime
// starts a thread: glibc fixes how many arenas it may make the first
// time a second thread allocates, and a later mallopt changes nothing.
__attribute__((constructor)) static void limit_malloc_arenas(void) {
#ifdef M_ARENA_MAX
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, 2);
	}
#endif
}
*/
import "C"

// The C allocator (glibc's) is held to two arenas, unless
// $MALLOC_ARENA_MAX says otherwise. The C memory of the process is
// Pebble's: its block cache and memtables, allocated and freed from
// whichever threads run its reads, flushes and compactions. glibc gives
// each thread that allocates an arena of its own, up to eight a core, and
// a block freed in one arena is reused only by that arena: at the end of a
// 1,000,000-version import nine arenas held ~87 MB for the 60 MB Pebble
// had in use, a share growing with the time the import ran; two arenas
// held ~48 MB for 31 (bench/REPORT-engine.md).
