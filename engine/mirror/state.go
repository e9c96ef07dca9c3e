package mirror

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// The mirror's local state lives in the store's meta values, under
// "mirror/<blob store id>/", never in the blob store (DESIGN, Segments):
// a folder copied to another device must not carry a writer id with it.
//
//	writer               writerState (JSON)
//	hashes/<w>/<n>       8-byte hash prefixes of writer w's segments, by seq
//	read/<writer>        readState (JSON): what was read of another writer
//	writers              every writer id ever listed (JSON)
//	aliases              ids the blob store had before its markers converged (JSON)
//
// and, by location, "mirror/at/<hash of the location>": the id found
// there (identity.go).

// writerState is this store's writer in one blob store.
type writerState struct {
	ID     string       `json:"id"`
	Seq    uint64       `json:"seq"`    // last segment seq published
	Cursor uint64       `json:"cursor"` // last change exported
	Own    []ownSegment `json:"own"`    // live segments of ours
	// Pending is a segment being published: written here before the Put,
	// so a crash after the Put is recognised as ours, not a clone.
	Pending *pendingSegment `json:"pending,omitempty"`
	Retired []retired       `json:"retired,omitempty"` // compacted away, to delete
	Clones  []string        `json:"clones,omitempty"`  // writer ids we left after a clone
}

type ownSegment struct {
	Name  string `json:"name"`
	Seq   uint64 `json:"seq"`
	Count uint32 `json:"count"`
	Size  int64  `json:"size"`
}

type pendingSegment struct {
	ownSegment
	Cursor  uint64   `json:"cursor"`            // the cursor once published (export)
	Replace []string `json:"replace,omitempty"` // the segments it compacts
}

type retired struct {
	Name string `json:"name"`
	At   int64  `json:"at"` // Unix ms when the compaction that replaced it was durable
	Size int64  `json:"size,omitempty"`
}

// readState is what this store has read of another writer's segments.
type readState struct {
	Done   []string `json:"done"`   // names read (and listed at the last full scan)
	MaxSeq uint64   `json:"maxSeq"` // highest seq ever listed: it never goes down (F10)
}

func (m *Mirror) metaKey(parts ...string) string {
	k := "mirror/" + m.sid
	for _, p := range parts {
		k += "/" + p
	}
	return k
}

func (m *Mirror) loadJSON(ctx context.Context, key string, v any) (bool, error) {
	return loadJSON(ctx, m.s, key, v)
}

// loadJSON reads the meta value key of s into v; false when there is none.
func loadJSON(ctx context.Context, s *engine.Store, key string, v any) (bool, error) {
	b, ok, err := s.Meta(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, engine.Errorf(engine.ErrCorrupt, "damaged: meta %s: %v", key, err)
	}
	return true, nil
}

func (m *Mirror) saveJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return m.s.SetMeta(ctx, key, b)
}

// loadWriter reads this writer's state, making a new writer id the first
// time; the first time of all, it settles which blob store this is
// (identity.go).
func (m *Mirror) loadWriter(ctx context.Context) error {
	if m.codec == nil {
		return fmt.Errorf("minca/mirror: %w", engine.ErrClosed)
	}
	if !m.bound {
		if err := m.bind(ctx); err != nil {
			return err
		}
	}
	if m.w != nil {
		return nil
	}
	var w writerState
	ok, err := m.loadJSON(ctx, m.metaKey("writer"), &w)
	if err != nil {
		return err
	}
	if !ok || !segment.ValidWriterID(w.ID) {
		id, err := segment.NewWriterID(m.o.Rand)
		if err != nil {
			return err
		}
		w = writerState{ID: id}
		if err := m.saveJSON(ctx, m.metaKey("writer"), &w); err != nil {
			return err
		}
	}
	m.w = &w
	return nil
}

func (m *Mirror) saveWriter(ctx context.Context) error {
	return m.saveJSON(ctx, m.metaKey("writer"), m.w)
}

const hashChunk = 4096

// recordHash remembers the hash of our segment at seq, so a copy of it
// that comes back (F7) is known as ours and a clone's is not (F11).
func (m *Mirror) recordHash(ctx context.Context, seq uint64, hashHex string) error {
	h, err := hex.DecodeString(hashHex[:16])
	if err != nil {
		return err
	}
	key := m.metaKey("hashes", m.w.ID, strconv.FormatUint((seq-1)/hashChunk, 10))
	b, _, err := m.s.Meta(ctx, key)
	if err != nil {
		return err
	}
	off := int((seq-1)%hashChunk) * 8
	if len(b) < off+8 {
		b = append(b, make([]byte, off+8-len(b))...)
	}
	copy(b[off:], h)
	return m.s.SetMeta(ctx, key, b)
}

// ourHash returns the hash prefix we published at seq ("" if none).
func (m *Mirror) ourHash(ctx context.Context, seq uint64) (string, error) {
	if seq == 0 {
		return "", nil
	}
	key := m.metaKey("hashes", m.w.ID, strconv.FormatUint((seq-1)/hashChunk, 10))
	b, _, err := m.s.Meta(ctx, key)
	if err != nil {
		return "", err
	}
	off := int((seq-1)%hashChunk) * 8
	if len(b) < off+8 || string(b[off:off+8]) == "\x00\x00\x00\x00\x00\x00\x00\x00" {
		return "", nil
	}
	return hex.EncodeToString(b[off : off+8]), nil
}

// isOurs reports whether a listed name of our writer id is a segment we
// published (live, compacted away, or come back).
func (m *Mirror) isOurs(ctx context.Context, n segment.NameInfo) (bool, error) {
	if p := m.w.Pending; p != nil && p.Name == n.Name() {
		return true, nil
	}
	h, err := m.ourHash(ctx, n.Seq)
	if err != nil || h == "" {
		return false, err
	}
	return h == n.Hash[:16], nil
}
