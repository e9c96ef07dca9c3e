package engine

import (
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// Verdict is how admission ended for a version (02 §9.5).
type Verdict uint8

const (
	// Refused: not stored, not passed on; remembered only as (peer, id).
	Refused Verdict = iota
	// Stands: stored; the ordering rule (§4.3) decides if it is current.
	Stands
	// Withdrawn: stored and passed on, but never read as the record.
	Withdrawn
	// Later: held aside until what it waits for is stored (§9.5).
	Later
)

func (v Verdict) String() string {
	switch v {
	case Stands:
		return "stands"
	case Withdrawn:
		return "withdrawn"
	case Later:
		return "later"
	}
	return "refused"
}

// Storage is how a version is held (02 §4.5).
type Storage uint8

const (
	// None: not held (refused, or waiting).
	None Storage = iota
	// Whole: held with its body (a delete is always whole).
	Whole
	// Stub: held without its body.
	Stub
)

func (s Storage) String() string {
	switch s {
	case Whole:
		return "whole"
	case Stub:
		return "stub"
	}
	return "-"
}

// Outcome is what [Store.Admit] did with one version: what a caller
// would otherwise read back from the store once the batch is in.
type Outcome struct {
	ID      string
	Verdict Verdict
	Stored  Storage
	Refusal *record.Refusal // when Refused; when Withdrawn, what took it away, if the judge said
	// New: the batch took the version in; false for a copy already held
	// (whose body it may have added, 02 §4.5).
	New bool
	// Top: after the batch, the version is its record's top held version
	// in 02 §4.3 order, the one no other supersedes. Held as a Stub, it
	// is a current version whose body this store lacks (§4.5).
	Top bool
	// Gap: its log.prev names a version the store does not hold after the
	// batch — a hole in its writer's line (02 §4.10) to ask a peer for.
	Gap bool
}

// Held is one held version of a record with how it is held, as
// [Store.History] lists them.
type Held struct {
	Version *record.Version // whole, or a stub
	Verdict Verdict         // Stands or Withdrawn
	Stored  Storage         // Whole or Stub
}

// SyncKey is a place in a space's sync order: createdAt in Unix ms (0 when
// it does not parse) and the 32-byte digest of the id (DESIGN.md,
// Negentropy and sync). The zero SyncKey is the start.
type SyncKey struct {
	Millis uint64
	Digest canonical.ID
}

// SyncItem is one held version in a space's sync order.
type SyncItem struct {
	Millis     uint64
	Digest     canonical.ID
	Collection string // so a sync of some collections can filter
	// Vseq is where the store holds the version's value, for
	// [Store.VersionsStoredAt]; 0 when the entry is of a layout before
	// 17, which did not keep it.
	Vseq uint64
}

// Key is the item's place in the order.
func (it SyncItem) Key() SyncKey { return SyncKey{it.Millis, it.Digest} }

// ChangeKind is what a [Change] records.
type ChangeKind uint8

const (
	// Stored: a version was stored (whole or as a stub).
	Stored ChangeKind = 1
	// BodyAdded: the body of a held stub was stored.
	BodyAdded ChangeKind = 2
	// Withdrew: the judge withdrew a held version ([Store.ChangeLog] only).
	Withdrew ChangeKind = 3
	// Restood: a withdrawn version stands again ([Store.ChangeLog] only).
	Restood ChangeKind = 4
	// Forked: a fork or break of a writer's line was found on arrival
	// (02 §4.10): ID is one of its versions, Other the other
	// ([Store.ChangeLog] only).
	Forked ChangeKind = 5
)

func (k ChangeKind) String() string {
	switch k {
	case BodyAdded:
		return "body"
	case Withdrew:
		return "withdrew"
	case Restood:
		return "restood"
	case Forked:
		return "forked"
	}
	return "stored"
}

// Change is one entry of the store's local log of what it took in, in
// commit order ([Store.Changes]).
type Change struct {
	Seq  uint64 // increases by one per change, from 1
	ID   canonical.ID
	Kind ChangeKind
	// From is the source the version (or the body) came from: the from
	// of the Admit that brought it, even when it waited (02 §9.5) and was
	// stored on a later batch's arrival. A mirror (engine/mirror) imports as
	// "blobs:" + its blob store's id, and leaves out of its exports what
	// that blob store brought.
	From string
	// Facts: the change log holds what the batch left of the version and
	// its record (Verdict, Current); false for a change logged by an
	// earlier layout, which did not keep them.
	Facts bool
	// Verdict is the version's standing once the batch was in (02 §9.5).
	Verdict Verdict
	// Current is the id of the record's readable current version once the
	// batch was in, zero when none read (02 §4.3, §4.5); not for Forked.
	Current canonical.ID
	// Other is a fork or break's other version (Forked).
	Other canonical.ID
}

// Stats counts what a store holds ([Store.Stats]).
type Stats struct {
	Spaces   int64 `json:"spaces"`
	Versions int64 `json:"versions"`
	Whole    int64 `json:"whole"`
	Stubs    int64 `json:"stubs"`
	Waiting  int64 `json:"waiting"`
	// WaitingBytes is the bytes the waiting versions take (WaitingLimits).
	WaitingBytes int64 `json:"waitingBytes"`
	// WaitingDropped and WaitingExpired count the waiting versions let go
	// so far: past a bound, and past WaitingLimits.MaxAge.
	WaitingDropped int64 `json:"waitingDropped"`
	WaitingExpired int64 `json:"waitingExpired"`
	BodyBytes      int64 `json:"bodyBytes"`
	EnvelopeBytes  int64 `json:"envelopeBytes"`
	Files          int64 `json:"files"`
	FileBytes      int64 `json:"fileBytes"`
	Changes        int64 `json:"changes"`
}
