package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/minca-go/minca/engine"
)

// The writer's own file copies kept in step with its store (docs/stores.md,
// Files): a file a version held whole names that the blob store lacks is
// written once the store holds it, however late it came (fetched from a
// peer after its version was exported); a copy of ours no such version
// names any more is retired, and deleted once it has stayed unnamed for
// Options.FileGrace. Only this writer's copies are ever deleted, so a file
// another writer's versions name keeps that writer's copy whatever this
// one does.

// fileRetired is the meta value, per writer, of its retired file copies:
// hash → Unix ms when it was first found unnamed.
const fileRetired = "files-retired"

// filesMark is what the store looked like at the last files pass: a pass
// with nothing changed since, no retired copy due and FileGrace not over
// is skipped.
type filesMark struct {
	changes, whole, files, fileBytes int64
	at                               time.Time
	due                              time.Time // the first retired copy's grace ends; zero: none
}

// FilesResult is what one files pass did.
type FilesResult struct {
	Exported int `json:"exported"` // files written whole that the blob store lacked
	Retired  int `json:"retired"`  // own copies found unnamed
	Deleted  int `json:"deleted"`  // own copies deleted, their grace over
}

// TidyFiles is the files pass of Round and Compact, run now whatever
// changed: it writes each file the store holds that a version held whole
// names and that no writer has whole in the blob store, or that this
// writer has only part of; it retires this writer's copies no such version
// names, brings back those named again, and deletes those retired for
// FileGrace, chunk by chunk. A crash between any two steps leaves nothing
// a later pass does not finish: a deletion cut short is done again, a copy
// cut short is completed or deleted.
func (m *Mirror) TidyFiles(ctx context.Context) (FilesResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.filesPass(ctx)
}

// filesDue reports whether a files pass has anything to do since the
// last: the store changed, a retired copy's grace is over, or FileGrace
// went by (another writer may have deleted a copy this one relied on).
func (m *Mirror) filesDue(ctx context.Context) (bool, error) {
	st, err := m.s.Stats(ctx)
	if err != nil {
		return false, err
	}
	now, k := m.o.Now(), m.filesAt
	if k == nil {
		return true, nil
	}
	changed := st.Changes != k.changes || st.Whole != k.whole || st.Files != k.files || st.FileBytes != k.fileBytes
	return (changed && now.Sub(k.at) >= min(m.o.FileGrace, filesEvery)) ||
		(!k.due.IsZero() && !now.Before(k.due)) || now.Sub(k.at) >= m.o.FileGrace, nil
}

// filesEvery is the least time between two files passes a changing store
// causes: each reads every version held and lists every file chunk.
const filesEvery = time.Minute

func (m *Mirror) filesPass(ctx context.Context) (FilesResult, error) {
	var res FilesResult
	if err := m.loadWriter(ctx); err != nil {
		return res, err
	}
	st, err := m.s.Stats(ctx)
	if err != nil {
		return res, err
	}
	mark := &filesMark{changes: st.Changes, whole: st.Whole, files: st.Files, fileBytes: st.FileBytes, at: m.o.Now()}
	named := map[string]bool{}
	seen := map[engine.FileRef]bool{}
	var refs []engine.FileRef
	if err := m.s.NamedFiles(ctx, "", func(f engine.NamedFile) bool {
		named[f.Hash.String()] = true // as object names carry it
		if !seen[f.FileRef] {
			seen[f.FileRef] = true
			refs = append(refs, f.FileRef)
		}
		return true
	}); err != nil {
		return res, err
	}
	copies, err := m.listFileCopies(ctx, filesPrefix)
	if err != nil {
		return res, err
	}
	// Files the blob store lacks, or has part of ours: written now.
	sort.Slice(refs, func(i, j int) bool { return refs[i].Hash.Compare(refs[j].Hash) < 0 })
	for _, f := range refs {
		if f.Size == 0 {
			continue
		}
		fi, err := m.s.FileInfo(ctx, f.Hash)
		if errors.Is(err, engine.ErrNotFound) || (err == nil && fi.Size != f.Size) {
			continue // not held (yet), or a version naming it by a wrong size
		}
		if err != nil {
			return res, err
		}
		hash := f.Hash.String()
		own := copies[hash][m.w.ID]
		if own.whole(f.Size) {
			continue
		}
		if len(own) == 0 && m.wholeElsewhere(copies[hash], f.Size) {
			continue
		}
		if err := m.exportFile(ctx, f); err != nil {
			return res, err
		}
		res.Exported++
	}
	// Our copies no version held whole names: retired, then deleted.
	retired := map[string]int64{}
	if _, err := m.loadJSON(ctx, m.metaKey(fileRetired, m.w.ID), &retired); err != nil {
		return res, err
	}
	now := m.o.Now().UnixMilli()
	grace := m.o.FileGrace.Milliseconds()
	keep := map[string]int64{}
	var gone []string
	for hash, ws := range copies {
		if named[hash] || len(ws[m.w.ID]) == 0 {
			continue
		}
		at, ok := retired[hash]
		if !ok {
			at = now
			res.Retired++
		}
		if now-at >= grace {
			gone = append(gone, hash)
		}
		keep[hash] = at
	}
	// Saved before anything is deleted: a crash after this keeps each
	// copy's time, so its grace is never started again.
	if err := m.saveJSON(ctx, m.metaKey(fileRetired, m.w.ID), keep); err != nil {
		return res, err
	}
	sort.Strings(gone)
	for _, hash := range gone {
		var chunks []int64
		for n := range copies[hash][m.w.ID] {
			chunks = append(chunks, n)
		}
		sort.Slice(chunks, func(i, j int) bool { return chunks[i] < chunks[j] })
		for _, n := range chunks {
			name := fileChunkName(m.w.ID, hash, n)
			if err := m.b.Delete(ctx, name); err != nil && !errors.Is(err, engine.ErrBlobNotFound) {
				return res, fmt.Errorf("minca/mirror: delete %s: %w", name, err)
			}
			m.stats.FileChunksDeleted++
		}
		delete(keep, hash)
		res.Deleted++
	}
	if len(gone) > 0 {
		if err := m.saveJSON(ctx, m.metaKey(fileRetired, m.w.ID), keep); err != nil {
			return res, err
		}
	}
	for _, at := range keep {
		if due := time.UnixMilli(at + grace); mark.due.IsZero() || due.Before(mark.due) {
			mark.due = due
		}
	}
	m.filesAt = mark
	if res.Exported > 0 || res.Retired > 0 || res.Deleted > 0 {
		m.o.Logger.Info("mirror: files", "exported", res.Exported, "retired", res.Retired, "deleted", res.Deleted)
	}
	return res, nil
}

// wholeElsewhere reports whether a writer has every chunk of a file.
func (m *Mirror) wholeElsewhere(ws map[string]fileCopy, size int64) bool {
	for _, c := range ws {
		if c.whole(size) {
			return true
		}
	}
	return false
}
