package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
)

// ErrBadURL: a store URL that names no store this package opens (an
// unknown scheme, an empty path, a malformed s3:// URL). It is the caller's
// mistake, not the store's state: a command line reports it as bad usage.
var ErrBadURL = errors.New("minca/store: bad store URL")

// URLForms lists the store URLs [Open] takes, for help texts.
const URLForms = "pebble:PATH (the default: a PATH with no scheme is pebble), sqlite:PATH (the database file), memory:, folder:PATH, s3://BUCKET/PREFIX?…"

// BlobURLForms lists the blob store URLs [OpenBlobs] takes, for help texts.
const BlobURLForms = "folder:PATH (a directory, possibly synced by Dropbox, iCloud Drive, OneDrive or Syncthing) or s3://BUCKET/PREFIX?endpoint=…&region=…&path-style=true&checksum=when_required"

// Schemes of store URLs.
const (
	schemePebble = "pebble"
	schemeSQLite = "sqlite"
	schemeMemory = "memory"
	schemeFolder = "folder"
	schemeS3     = "s3"
)

// location is a parsed store URL: its scheme and, but for s3://, the path
// after the scheme (an s3:// URL is kept whole for the s3 backend).
type location struct {
	url    string // as given
	scheme string
	path   string
	blob   bool // opened as a blob store (OpenBlobs), not a store
}

// what is what errors call it: "store" or "blob store".
func (l location) what() string {
	if l.blob {
		return "blob store"
	}
	return "store"
}

// parseURL reads a store URL (DESIGN.md: a store is named by a URL). A
// string whose part before the first colon is no scheme (a bare path, one
// with a colon further on) is a Pebble path.
func parseURL(url string) (location, error) {
	if url == "" {
		return location{}, engine.Errorf(ErrBadURL, "a store URL is required (%s)", URLForms)
	}
	l := location{url: url}
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok || !isScheme(scheme) {
		scheme, rest = schemePebble, url
	}
	l.scheme, l.path = scheme, rest
	switch scheme {
	case schemePebble, schemeSQLite, schemeFolder:
		if rest == "" {
			return l, engine.Errorf(ErrBadURL, "bad store URL %q: %s:PATH needs a path", url, scheme)
		}
	case schemeMemory:
		if rest != "" {
			return l, engine.Errorf(ErrBadURL, "bad store URL %q: memory: takes no path", url)
		}
	case schemeS3:
		if _, err := s3.ParseURL(url); err != nil {
			return l, engine.Errorf(ErrBadURL, "bad store URL %s", strings.TrimPrefix(err.Error(), "minca/s3: ")) // the URL, then what is wrong
		}
		l.path = ""
	default:
		return l, engine.Errorf(ErrBadURL, "bad store URL %q: unknown scheme %q (want %s)", url, scheme, URLForms)
	}
	return l, nil
}

// locate is where a folder: or s3:// location's blob store is, as its
// backend's Locate says ([engine.BlobLocator]), without opening it.
func (l location) locate() string {
	if l.scheme == schemeFolder {
		return folder.Locate(l.path)
	}
	s, err := s3.ParseURL(l.url)
	if err != nil { // parseURL checked it
		return ""
	}
	return s.Locate()
}

// blobBacked reports whether the store's durable copy is a blob store.
func (l location) blobBacked() bool { return l.scheme == schemeFolder || l.scheme == schemeS3 }

// isScheme reports whether s looks like a URL scheme (a lowercase letter,
// then letters, digits, +, -, .), so that a bare path with a colon further
// on is still a path.
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

// IsBlobURL reports whether url names a store whose durable copy is a
// blob store (folder:PATH, s3://…): it opens as a local index of it.
func IsBlobURL(url string) bool {
	l, err := parseURL(url)
	return err == nil && l.blobBacked()
}

// Abs is url with the path of a pebble:, sqlite: or folder: URL (or a bare
// path) made absolute, so that it names the same store from any working
// directory: what a program keeps to open the store again later. memory:
// and s3:// URLs are returned as they are. A URL naming nothing [Open]
// takes wraps [ErrBadURL].
func Abs(url string) (string, error) {
	l, err := parseURL(url)
	if err != nil {
		return "", err
	}
	switch l.scheme {
	case schemeMemory, schemeS3:
		return url, nil
	}
	p, err := filepath.Abs(l.path)
	if err != nil {
		return "", fmt.Errorf("minca/store: %s: %w", url, err)
	}
	return l.scheme + ":" + p, nil
}
