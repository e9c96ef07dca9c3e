package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"
	"sort"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
	"github.com/minca-go/minca/record"
)

// CompactResult is what one compaction did. Its byte counts add up:
// BytesAfter − BytesBefore = BytesChange = BytesWritten − BytesFreed.
type CompactResult struct {
	Rewrote        []string `json:"rewrote"`        // segments read and replaced
	Wrote          []string `json:"wrote"`          // the segments replacing them
	Versions       int      `json:"versions"`       // distinct versions kept
	Stubs          int      `json:"stubs"`          // of them, kept as stubs
	Whole          int      `json:"whole"`          // of them, kept whole
	BytesRewritten int64    `json:"bytesRewritten"` // size of the segments replaced
	BytesWritten   int64    `json:"bytesWritten"`   // size of the segments replacing them
	// BytesBefore and BytesAfter are the size of this writer's segments
	// in the blob store, as listed before and after (replaced segments
	// kept for DeleteGrace included).
	BytesBefore int64 `json:"bytesBefore"`
	BytesAfter  int64 `json:"bytesAfter"`
	// BytesChange is BytesAfter − BytesBefore: negative when compaction
	// gave space back.
	BytesChange int64 `json:"bytesChange"`
	Deleted     int   `json:"deleted"`    // replaced segments deleted now (grace over)
	BytesFreed  int64 `json:"bytesFreed"` // their size: what was deleted
}

// Compact rewrites this writer's segments into as few as
// CompactVersions allows, each version once and in the form the store
// holds it now — superseded bodies as stubs (02 §4.5, §4.9) — then, once
// the new segments are durable, retires the old ones: only segments of
// ours, that it listed and read. They are deleted after DeleteGrace (at
// once by default); another writer's segments are never touched.
//
// A segment of ours that is bad where it is stored (the same bytes fail
// their checks on two reads Reread apart) is repaired so: what it held is
// not known from it, so compaction writes everything this writer exported
// again, from the store, and retires it with the rest. One that may still
// be arriving postpones compaction.
//
// Then it keeps this writer's file copies in step with the store
// ([Mirror.TidyFiles]).
func (m *Mirror) Compact(ctx context.Context) (CompactResult, error) {
	m.mu.Lock()
	var res CompactResult
	err := m.compact(ctx, &res)
	m.mu.Unlock()
	if err != nil {
		return res, err
	}
	before := m.Stats()
	if err := m.sweep(ctx); err != nil {
		return res, err
	}
	after := m.Stats()
	res.Deleted = int(after.Deleted - before.Deleted)
	res.BytesFreed = after.BytesFreed - before.BytesFreed
	m.mu.Lock()
	defer m.mu.Unlock()
	// The file copies too: those named are kept, or written when the blob
	// store lacks them; those unnamed past FileGrace go (filetidy.go).
	if _, err := m.filesPass(ctx); err != nil {
		return res, err
	}
	listed, err := m.listAll(ctx, segment.WriterPrefix(m.w.ID), "")
	if err != nil {
		return res, err
	}
	res.BytesAfter = m.ownBytes(listed)
	res.BytesChange = res.BytesAfter - res.BytesBefore
	return res, nil
}

// ownBytes is the size of this writer's segments among listed.
func (m *Mirror) ownBytes(listed []engine.BlobInfo) int64 {
	var n int64
	for _, b := range listed {
		if in, ok := segment.ParseName(b.Name); ok && in.Writer == m.w.ID {
			n += b.Size
		}
	}
	return n
}

func (m *Mirror) compact(ctx context.Context, res *CompactResult) error {
	if err := m.loadWriter(ctx); err != nil {
		return err
	}
	if err := m.resolvePending(ctx); err != nil {
		return err
	}
	if err := m.checkOwn(ctx); err != nil {
		return err
	}
	listed, err := m.listAll(ctx, segment.WriterPrefix(m.w.ID), "")
	if err != nil {
		return err
	}
	res.BytesBefore = m.ownBytes(listed)
	// Old segments of ours a sync service brought back (F7) go again;
	// what they hold is in the live ones.
	if err := m.dropResurrected(ctx, listed); err != nil {
		return err
	}
	// The inputs: our live segments, listed.
	live := map[string]bool{}
	for _, s := range m.w.Own {
		live[s.Name] = true
	}
	var inputs []engine.BlobInfo
	for _, b := range listed {
		if live[b.Name] {
			inputs = append(inputs, b)
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Name < inputs[j].Name })
	var ids []canonical.ID
	seen := map[canonical.ID][]byte{}
	var base uint64
	var rewrote []string
	rebuild := false // a segment of ours is damaged
	for _, b := range inputs {
		data, err := m.b.Get(ctx, b.Name)
		if err != nil {
			// Never delete what was not read: try the whole thing later.
			m.o.Logger.Info("mirror: compaction postponed", "name", b.Name, "err", err)
			return nil
		}
		seg, err := m.codec.Decode(data)
		if err != nil {
			if !m.stillBad(ctx, b.Name, data) {
				m.o.Logger.Info("mirror: compaction postponed", "name", b.Name, "err", err)
				return nil
			}
			// Damaged where it is stored: what it held is not known from
			// it, so everything this writer exported is written again,
			// from the store, and it goes with the rest.
			m.o.Logger.Warn("mirror: a segment of ours is bad; compaction writes everything this writer exported again, from the store", "name", b.Name, "err", err)
			rebuild = true
			res.BytesRewritten += int64(len(data))
			rewrote = append(rewrote, b.Name)
			continue
		}
		if base == 0 || seg.Base < base {
			base = seg.Base
		}
		res.BytesRewritten += int64(len(data))
		rewrote = append(rewrote, b.Name)
		for _, l := range seg.Lines {
			v, err := record.Decode(l)
			if err != nil {
				continue // we never wrote it; it is not carried on
			}
			d, exact := v.Digest()
			if !exact {
				continue // nor this: a store holds no other id
			}
			if _, ok := seen[d]; !ok {
				ids = append(ids, d)
				seen[d] = l
			}
		}
	}
	if len(rewrote) < 2 && !rebuild {
		return nil
	}
	if rebuild {
		base = 1
		for c, err := range m.s.Changes(ctx, 0) {
			if err != nil {
				return fmt.Errorf("minca/mirror: compact: %w", err)
			}
			if c.Seq > m.w.Cursor {
				break // not exported yet: Export's
			}
			if _, ok := seen[c.ID]; !ok && !m.froms[c.From] { // what Export wrote
				ids = append(ids, c.ID)
				seen[c.ID] = nil
			}
		}
	}
	// Each version as the store holds it now.
	lines := make([][]byte, 0, len(ids))
	for _, id := range ids {
		l, err := m.s.VersionJSON(ctx, id)
		switch {
		case errors.Is(err, engine.ErrNotFound) && seen[id] != nil:
			l = seen[id] // not held here (never judged in): kept as written
		case errors.Is(err, engine.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("minca/mirror: compact: %w", err)
		}
		v, err := record.Decode(l)
		if err == nil && v.IsStub() {
			res.Stubs++
		} else {
			res.Whole++
		}
		lines = append(lines, l)
	}
	res.Versions = len(lines)
	// Publish the new segments; the last one retires the inputs, so the
	// old ones are let go only once everything replacing them is durable.
	for start := 0; start < len(lines) || start == 0; start += m.o.CompactVersions {
		end := min(start+m.o.CompactVersions, len(lines))
		last := end == len(lines)
		data, t, err := m.codec.Encode(segment.Header{Writer: m.w.ID, Seq: m.w.Seq + 1, Base: base, Flags: segment.FlagCompacted}, lines[start:end])
		if err != nil {
			return err
		}
		var replace []string
		if last {
			replace = rewrote
		}
		if err := m.publish(ctx, data, &t, m.w.Cursor, replace); err != nil {
			if errors.Is(err, errClone) {
				return m.rotate(ctx, err.Error())
			}
			return err
		}
		res.Wrote = append(res.Wrote, t.Name())
		res.BytesWritten += int64(len(data))
		if last {
			break
		}
	}
	res.Rewrote = rewrote
	sizes := map[string]int64{}
	for _, b := range inputs {
		sizes[b.Name] = b.Size
	}
	for i := range m.w.Retired {
		if sizes[m.w.Retired[i].Name] > 0 {
			m.w.Retired[i].Size = sizes[m.w.Retired[i].Name]
		}
	}
	return m.saveWriter(ctx)
}

// stillBad reads a segment of ours that failed its checks again, Reread
// later: true when the same bytes fail again (damage, not a write in
// flight).
func (m *Mirror) stillBad(ctx context.Context, name string, data []byte) bool {
	if sleepUntil(ctx, m.o.Now().Add(m.o.Reread), m.o.Now) != nil {
		return false
	}
	again, err := m.b.Get(ctx, name)
	if err != nil || !bytes.Equal(again, data) {
		return false
	}
	_, err = m.codec.Decode(again)
	return err != nil
}
