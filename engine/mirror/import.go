package mirror

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
	"github.com/minca-go/minca/record"
)

// ErrBlobStoreShrunk: a writer's segments went backwards (its highest
// sequence number is no longer listed, or our own live segments are
// gone). A compaction never does that, so the store was emptied, swapped
// or rolled back (F10): the mirror stops rather than compact or delete.
var ErrBlobStoreShrunk = errors.New("minca/mirror: blob store lost segments")

// ImportResult is what one import pass read.
type ImportResult struct {
	Writers     int   `json:"writers"`
	Segments    int   `json:"segments"`
	Versions    int   `json:"versions"`
	Stored      int   `json:"stored"` // versions new to the store
	Unavailable int   `json:"unavailable"`
	Bytes       int64 `json:"bytes"`
	Listed      int   `json:"listed"` // segment names listed (all of them on a full rescan)
}

// segmentBudget is the count of segments in a store past which a full
// rescan warns: sync services slow down past about 100,000 files (F12),
// and compaction keeps each writer's count low.
const segmentBudget = 10_000

// admitChunk is how many versions go to one Admit: one atomic, synced
// batch each.
const admitChunk = 2000

// Import lists the other writers' segments, reads those not read yet and
// admits every version in them through the judge, as from a peer (02 §9),
// idempotently. A segment that cannot be read yet (a placeholder, a torn
// or partial file, F3, F4) is retried on a later pass, sooner when its
// size changes; one gone since it was listed is skipped (F8). Names are
// hints: a segment is identified by its content.
func (m *Mirror) Import(ctx context.Context) (ImportResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res ImportResult
	if err := m.loadWriter(ctx); err != nil {
		return res, err
	}
	if err := m.resolvePending(ctx); err != nil {
		return res, err
	}
	full := m.rescan
	m.rescan = false // a clone found below asks for the next pass to be full
	writers, err := m.writers(ctx)
	if err != nil {
		return res, err
	}
	for _, w := range writers {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if w == m.w.ID {
			if err := m.checkOwn(ctx); err != nil {
				return res, err
			}
			if w == m.w.ID {
				continue
			}
			// Cloned: the old id is another writer's from now on.
		}
		res.Writers++
		if err := m.importWriter(ctx, w, full || m.rescan, &res); err != nil {
			return res, err
		}
	}
	if m.o.Salvage {
		if err := m.salvage(ctx, &res); err != nil {
			return res, err
		}
	}
	if full && res.Listed > segmentBudget {
		m.o.Logger.Warn("mirror: the blob store holds many segments; writers that never compact slow sync services down (F12)", "segments", res.Listed)
	}
	return res, nil
}

// writers lists the writer ids with segments, and every writer this
// store read before (a writer that vanished is a loss, not nothing).
func (m *Mirror) writers(ctx context.Context) ([]string, error) {
	set := map[string]bool{}
	if d, ok := m.b.(engine.BlobDirs); ok {
		ws, err := d.Dirs(ctx, segment.Prefix)
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			set[w] = true
		}
	} else {
		after := ""
		for {
			page, err := m.b.List(ctx, segment.Prefix, after, 1000)
			if err != nil {
				return nil, err
			}
			for _, b := range page {
				if n, ok := segment.ParseName(b.Name); ok {
					set[n.Writer] = true
				}
				after = b.Name
			}
			if len(page) < 1000 {
				break
			}
		}
	}
	if m.known == nil {
		m.known = map[string]bool{}
		var ws []string
		if _, err := m.loadJSON(ctx, m.metaKey("writers"), &ws); err != nil {
			return nil, err
		}
		for _, w := range ws {
			m.known[w] = true
		}
	}
	grew := false
	for w := range set {
		if !m.known[w] {
			m.known[w], grew = true, true
		}
	}
	for w := range m.known {
		set[w] = true
	}
	if grew {
		ws := make([]string, 0, len(m.known))
		for w := range m.known {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		if err := m.saveJSON(ctx, m.metaKey("writers"), ws); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(set))
	for w := range set {
		if segment.ValidWriterID(w) {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *Mirror) readState(ctx context.Context, w string) (*readState, error) {
	if r, ok := m.reads[w]; ok {
		return r, nil
	}
	r := &readState{}
	if _, err := m.loadJSON(ctx, m.metaKey("read", w), r); err != nil {
		return nil, err
	}
	m.reads[w] = r
	if r.MaxSeq > m.maxSeq[w] {
		m.maxSeq[w] = r.MaxSeq
	}
	return r, nil
}

// listAll lists every name under prefix after a bound, page by page.
func (m *Mirror) listAll(ctx context.Context, prefix, after string) ([]engine.BlobInfo, error) {
	var out []engine.BlobInfo
	for {
		page, err := m.b.List(ctx, prefix, after, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out, nil
		}
		after = page[len(page)-1].Name
	}
}

func (m *Mirror) importWriter(ctx context.Context, w string, full bool, res *ImportResult) error {
	r, err := m.readState(ctx, w)
	if err != nil {
		return err
	}
	done := make(map[string]bool, len(r.Done))
	maxDone := ""
	for _, n := range r.Done {
		done[n] = true
		maxDone = max(maxDone, n)
	}
	after := ""
	if !full {
		after = maxDone // new segments sort after everything read (S8)
	}
	listed, err := m.listAll(ctx, segment.WriterPrefix(w), after)
	if err != nil {
		return err
	}
	res.Listed += len(listed)
	var top uint64
	for _, b := range listed {
		if n, ok := segment.ParseName(b.Name); ok && n.Writer == w {
			top = max(top, n.Seq)
		}
	}
	if full && m.maxSeq[w] > 0 && top < m.maxSeq[w] {
		return fmt.Errorf("%w: writer %s listed up to segment %d, now %d", ErrBlobStoreShrunk, w, m.maxSeq[w], top)
	}
	if top > m.maxSeq[w] {
		m.maxSeq[w] = top
	}
	now := m.o.Now()
	var todo []engine.BlobInfo
	for _, b := range listed {
		n, ok := segment.ParseName(b.Name)
		if !ok || n.Writer != w || done[b.Name] {
			continue
		}
		if b.Pending { // a placeholder: not downloaded yet (F3)
			res.Unavailable++
			m.stats.Unavailable++
			continue
		}
		if f, bad := m.failed[b.Name]; bad && f.size == b.Size && now.Before(f.next) {
			continue // torn last time and unchanged: wait
		}
		todo = append(todo, b)
	}
	m.stats.SegmentsToRead += int64(len(todo))
	changed := false
	err = m.readSegments(ctx, todo, res, func(name string) error {
		done[name], changed = true, true
		return m.saveRead(ctx, w, r, done, nil)
	})
	if err != nil {
		return err
	}
	if full {
		// Forget what is no longer listed (compacted away), so the state
		// stays as small as the writer's live segments.
		live := make(map[string]bool, len(listed))
		for _, b := range listed {
			live[b.Name] = true
		}
		return m.saveRead(ctx, w, r, done, live)
	}
	if changed || r.MaxSeq != m.maxSeq[w] {
		return m.saveRead(ctx, w, r, done, nil)
	}
	return nil
}

func (m *Mirror) saveRead(ctx context.Context, w string, r *readState, done, live map[string]bool) error {
	r.Done = r.Done[:0]
	for n := range done {
		if live == nil || live[n] {
			r.Done = append(r.Done, n)
		}
	}
	sort.Strings(r.Done)
	r.MaxSeq = m.maxSeq[w]
	return m.saveJSON(ctx, m.metaKey("read", w), r)
}

func (m *Mirror) retryLater(b engine.BlobInfo, now time.Time) {
	f := m.failed[b.Name]
	if f.size != b.Size {
		f.tries = 0
	}
	f.tries++
	f.size = b.Size
	f.next = now.Add(min(time.Second<<min(f.tries, 16), time.Hour))
	m.failed[b.Name] = f
	m.stats.Unavailable++
}

// admitLines decodes each line as a version and admits them in chunks.
// A line that is not a version is counted as refused: the segment's
// checksum says its writer wrote it, not that it is valid.
func (m *Mirror) admitLines(ctx context.Context, lines [][]byte, res *ImportResult) error {
	vs := make([]*record.Version, 0, min(len(lines), admitChunk))
	flush := func() error {
		if len(vs) == 0 {
			return nil
		}
		err := m.admitCounted(ctx, res, func() ([]engine.Outcome, error) { return m.s.Admit(ctx, m.from, vs) })
		vs = vs[:0]
		return err
	}
	for _, l := range lines {
		v, err := record.Decode(l)
		if err != nil {
			m.stats.Refused++
			continue
		}
		vs = append(vs, v)
		if len(vs) == admitChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// checkOwn lists our own writer's segments: another writer's under our id
// means a clone (F11); our live segments missing means the store lost them
// (F10).
func (m *Mirror) checkOwn(ctx context.Context) error {
	listed, err := m.listAll(ctx, segment.WriterPrefix(m.w.ID), "")
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, b := range listed {
		have[b.Name] = true
		n, ok := segment.ParseName(b.Name)
		if !ok || n.Writer != m.w.ID {
			continue
		}
		ours, err := m.isOurs(ctx, n)
		if err != nil {
			return err
		}
		if !ours {
			why := fmt.Sprintf("segment %s is not one this store wrote", b.Name)
			if err := m.rotate(ctx, why); err != nil {
				return err
			}
			// The old id is now another writer's: read all of it.
			r := &readState{}
			m.reads[m.w.Clones[len(m.w.Clones)-1]] = r
			return nil
		}
	}
	for _, s := range m.w.Own {
		if !have[s.Name] && !pendingHas(m.w.Pending, s.Name) {
			return fmt.Errorf("%w: our segment %s is gone", ErrBlobStoreShrunk, s.Name)
		}
	}
	return nil
}

func pendingHas(p *pendingSegment, name string) bool { return p != nil && p.Name == name }

// salvage reads strays a sync service made of segments (conflict copies,
// "name 2", copied folders) and admits what they hold when they check
// out. Each is read once per size; nothing is written or deleted (F1).
func (m *Mirror) salvage(ctx context.Context, res *ImportResult) error {
	st, ok := m.b.(engine.BlobStrays)
	if !ok {
		return nil
	}
	strays, err := st.Strays(ctx, "")
	if err != nil {
		return err
	}
	for _, b := range strays {
		if !strings.Contains(b.Name, ".seg") || b.Pending {
			continue
		}
		if size, seen := m.salvaged[b.Name]; seen && size == b.Size {
			continue
		}
		data, err := m.b.Get(ctx, b.Name)
		if err != nil {
			continue // gone or not downloaded: next pass
		}
		seg, err := m.codec.Decode(data)
		m.salvaged[b.Name] = b.Size
		if err != nil {
			continue
		}
		m.stats.Salvaged++
		res.Segments++
		if err := m.admitLines(ctx, seg.Lines, res); err != nil {
			return err
		}
	}
	return nil
}
