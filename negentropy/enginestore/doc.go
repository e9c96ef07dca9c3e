// Package enginestore reads a space's negentropy items from the engine's
// sync order without loading the space into memory (DESIGN.md, "Negentropy
// and sync"): timestamp = createdAt in Unix milliseconds, id = the 32-byte
// digest inside the version id, in the order of Negentropy V1 §Preparation.
//
// [Build] makes one streaming pass over the order and keeps a sparse index:
// the first item of every block of items and the running sum of the ids
// before it. A [Store] then answers the negentropy loop's reads from that
// index, rereading at most one block of items from the engine per edge of a
// range, so memory is about 72 bytes per block, not per item.
package enginestore
