package node

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/store"
)

// Options configure [Open]. The zero value is the defaults: a node in the
// platform's config directory, on an embedded Pebble store inside it.
type Options struct {
	// Dir is the node directory: its lock, session key, log places, API
	// token and (by default) its store. Never a synced data folder (02
	// §4.10). Default: [DefaultDir].
	Dir string
	// Store is the store's URL: a local store (pebble:PATH, sqlite:PATH,
	// memory:; package store opens it, made where missing). The node
	// directory records it (made absolute), and a node opened there later
	// with Store empty opens the one recorded. Default: the one recorded,
	// else pebble:Dir/store.
	Store string
	// Mirrors are blob store URLs (folder:PATH, s3://…) the node mirrors
	// continuously in both directions while it runs (engine/mirror).
	Mirrors []string
	// AccountKey is the account's key file (06 §1.1). With it the node
	// makes its own session key and note, renews the note, and keeps the
	// account registry (§1.2, §1.3). Default: Dir/account.key when that
	// file exists.
	AccountKey string
	// Account is the account's key itself, in place of AccountKey (tests,
	// programs that hold the key elsewhere).
	Account *identity.PrivateKey
	// Note is a file holding a note from the account to this node's
	// session key, for a node without the account key (06 §1.1). Default:
	// Dir/session.note.
	Note string
	// SessionLife is how long a note the node issues lasts (exp − now).
	// Default 24 h; at least a minute.
	SessionLife time.Duration
	// RenewBefore is how long before its exp the node replaces its note.
	// Default a quarter of SessionLife; less than SessionLife.
	RenewBefore time.Duration
	// RenewCheck is how often the node looks whether its note is due,
	// besides before each write. Default 1 min.
	RenewCheck time.Duration
	// Now is the node's clock (notes' times, createdAt). Default time.Now.
	Now func() time.Time
	// MaxBatch bounds the writes signed, judged and stored in one batch.
	// Default 256.
	MaxBatch int
	// EventRing is how many recent events the node keeps in memory for
	// subscribers; one that falls further behind is dropped, and resumes
	// from its cursor. Default 65,536.
	EventRing int
	// EventRingBytes bounds the memory those events take (their fields
	// and text, near enough): past it the oldest are not served, as past
	// EventRing. Default 8 MiB.
	EventRingBytes int64
	// EventJournalBytes bounds the event journal, the events the change
	// log cannot make again (forks, waiting counts):
	// past it the oldest are dropped, down to half, and a subscriber
	// resuming from before them gets ErrCursorGone. Default 64 MiB; at
	// least 4 KiB.
	EventJournalBytes int64
	// EventJournalAge drops journaled events older than this (with an
	// eighth of slack), as EventJournalBytes does. Default 30 days.
	EventJournalAge time.Duration
	// FileGrace is how long a file no version held whole names stays in
	// the store after it was kept: an upload waiting for the write that
	// will name it, a file a newer version stopped naming that a reader
	// has open (docs/stores.md, Files). Default 10 min.
	FileGrace time.Duration
	// TidyFilesEvery is how often a running node deletes the files past
	// FileGrace that no version held whole names (Node.TidyFiles).
	// Default 1 h.
	TidyFilesEvery time.Duration
	// StoreOptions are how the store and the mirrors' blob stores are
	// opened (store.Open, store.OpenBlobsFor): S3's credentials and
	// timeouts, Adopt, CacheDir, Logger (default the node's). The node
	// sets Judge, Indexer and Create itself. Default nil: package store's
	// defaults.
	StoreOptions *store.Options
	// Index configures the node's index (package index: declared field
	// indexes, live queries' buffers), kept in the store's write batches;
	// it answers the node's queries. Default nil: index's defaults.
	Index *index.Options
	// Querier answers the node's queries in place of its index, which the
	// node then does not keep. Default nil: the node's index.
	Querier Querier
	// Logger receives the node's logs. Default: discarded.
	Logger *slog.Logger
	// PassKeys are the keys the node writes carriers' passes from (06
	// §4.2): a private space without a ring here gets no pass. Default
	// nil: the node's own keys (the private spaces it holds keys of).
	PassKeys judge.KeyRings
}

// DefaultFileGrace is Options.FileGrace's default: a client names each
// file it uploads in a write within this (02 §3.1; docs/stores.md, Files).
const DefaultFileGrace = 10 * time.Minute

// DefaultTidyFilesEvery is Options.TidyFilesEvery's default.
const DefaultTidyFilesEvery = time.Hour

// DefaultDir is the node directory when Options.Dir is empty: minca under
// os.UserConfigDir (MINCA_DIR overrides it).
func DefaultDir() (string, error) {
	if d := os.Getenv("MINCA_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("minca/node: no config directory for the node (set --dir or MINCA_DIR): %w", err)
	}
	return filepath.Join(base, "minca"), nil
}

// resolve clones the options, fills the defaults and validates them.
func (o *Options) resolve() (Options, error) {
	var out Options
	if o != nil {
		out = *o
		out.Mirrors = append([]string(nil), o.Mirrors...)
	}
	if out.Dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return out, err
		}
		out.Dir = d
	}
	abs, err := filepath.Abs(out.Dir)
	if err != nil {
		return out, fmt.Errorf("minca/node: Options.Dir: %w", err)
	}
	out.Dir = abs
	if out.AccountKey == "" && out.Account == nil {
		if p := filepath.Join(out.Dir, AccountKeyName); fileExists(p) {
			out.AccountKey = p
		}
	}
	if out.Note == "" {
		out.Note = filepath.Join(out.Dir, sessionNoteName)
	}
	switch {
	case out.SessionLife < 0, out.RenewBefore < 0, out.RenewCheck < 0, out.MaxBatch < 0, out.EventRing < 0, out.EventRingBytes < 0,
		out.EventJournalBytes < 0, out.EventJournalAge < 0, out.FileGrace < 0, out.TidyFilesEvery < 0:
		return out, errors.New("minca/node: Options: SessionLife, RenewBefore, RenewCheck, MaxBatch, EventRing, EventRingBytes, EventJournalBytes, EventJournalAge, FileGrace and TidyFilesEvery must not be negative")
	}
	if out.FileGrace == 0 {
		out.FileGrace = DefaultFileGrace
	}
	if out.TidyFilesEvery == 0 {
		out.TidyFilesEvery = DefaultTidyFilesEvery
	}
	if out.EventJournalBytes == 0 {
		out.EventJournalBytes = 64 << 20
	}
	if out.EventJournalBytes < 4096 {
		return out, fmt.Errorf("minca/node: Options.EventJournalBytes %d is under 4 KiB", out.EventJournalBytes)
	}
	if out.EventJournalAge == 0 {
		out.EventJournalAge = 30 * 24 * time.Hour
	}
	if out.SessionLife == 0 {
		out.SessionLife = 24 * time.Hour
	}
	if out.SessionLife < time.Minute {
		return out, fmt.Errorf("minca/node: Options.SessionLife %v is under a minute", out.SessionLife)
	}
	if out.RenewBefore == 0 {
		out.RenewBefore = out.SessionLife / 4
	}
	if out.RenewBefore >= out.SessionLife {
		return out, fmt.Errorf("minca/node: Options.RenewBefore %v is not less than SessionLife %v", out.RenewBefore, out.SessionLife)
	}
	if out.RenewCheck == 0 {
		out.RenewCheck = time.Minute
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.MaxBatch == 0 {
		out.MaxBatch = 256
	}
	if out.EventRing == 0 {
		out.EventRing = 1 << 16
	}
	if out.EventRingBytes == 0 {
		out.EventRingBytes = 8 << 20
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
