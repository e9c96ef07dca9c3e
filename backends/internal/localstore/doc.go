// Package localstore holds what the local key-value backends
// (backends/pebble, backends/sqlite) share about a store on disk: its lock
// file, taken exclusively by a store open for writing and shared by one
// open read-only, and the errors that name the store — no store there
// (engine.ErrNoStore) and damage found (engine.ErrCorrupt).
package localstore
