package main

import (
	"fmt"
	"strings"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/sqlite"
	"github.com/minca-go/minca/engine"
)

// storeURLHelp describes the store URLs openKV takes.
const storeURLHelp = "pebble:PATH (the default: a PATH with no scheme is pebble), sqlite:FILE, memory:, folder:PATH, s3://BUCKET/PREFIX?…"

// openKV opens the key-value store a URL names (DESIGN.md: a store is named
// by a URL). The one switch from a URL to a backend's constructor.
func openKV(url string) (engine.KV, error) {
	scheme, rest, hasScheme := strings.Cut(url, ":")
	if !hasScheme || !isScheme(scheme) {
		scheme, rest = "pebble", url
	}
	switch scheme {
	case "pebble":
		if rest == "" {
			return nil, usageError("store URL %q: pebble:PATH needs a path", url)
		}
		return pebble.Open(rest, nil)
	case "sqlite":
		if rest == "" {
			return nil, usageError("store URL %q: sqlite:PATH needs a path", url)
		}
		return sqlite.Open(rest, nil)
	case "memory":
		return memory.Open(nil), nil
	case "folder", "s3":
		return openBlobKV(url) // a local index, the blob store durable (bloburl.go)
	}
	return nil, usageError("store URL %q: unknown scheme %q (want %s)", url, scheme, storeURLHelp)
}

// isScheme reports whether s looks like a URL scheme (letters, then
// letters, digits, +, -, .), so that a bare path with a colon further on
// is still a path.
func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// openStore opens the engine on the store a URL names, with the node's
// judge when it will admit versions.
func openStore(url string, judge engine.Judge) (*engine.Store, error) {
	if url == "" {
		return nil, usageError("--store URL is required (%s)", storeURLHelp)
	}
	kv, err := openKV(url)
	if err != nil {
		return nil, err
	}
	st, err := engine.Open(kv, &engine.Options{Judge: judge})
	if err != nil {
		kv.Close()
		return nil, fmt.Errorf("store %s: %w", url, err)
	}
	return st, nil
}
