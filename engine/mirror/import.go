package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// Bad are the segments that are bad (ErrBadSegment), by name: found
	// in this pass, or earlier and not readable since.
	Bad []Problem `json:"bad"`
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
// idempotently. A segment that cannot be read yet (a placeholder, F3) is
// retried on a later pass, sooner when it changes; one gone since it was
// listed is skipped (F8). Names are hints: a segment is identified by its
// content.
//
// A segment that fails its checks is read again Options.Reread later, in
// this pass: if its bytes changed it is a file still arriving (F4) and is
// retried on a later pass; if they did not, it is bad. Bad segments stop
// nothing: every other segment is read, and then Import returns a
// [*BadSegmentsError] ([ErrBadSegment]) naming each, also in the result.
// A bad segment is read again when it changes and on later passes (with
// backoff), so a good copy that arrives is taken in.
func (m *Mirror) Import(ctx context.Context) (ImportResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := ImportResult{Bad: []Problem{}}
	full := m.rescan
	// Geneses are read once a pass, before its first version is admitted
	// (genesesFirst), and on a full pass even with nothing new: a sync
	// service may bring one after the segments that need it.
	m.genesesIn = false
	if m.bound {
		// Every pass reads the markers again (a few small files at the
		// root): a copy with a smaller id may have arrived, or another
		// store taken this one's place.
		if err := m.bind(ctx); err != nil {
			return res, err
		}
	}
	if err := m.loadWriter(ctx); err != nil {
		return res, err
	}
	if err := m.resolvePending(ctx); err != nil {
		return res, err
	}
	m.rescan = false // a clone found below asks for the next pass to be full
	writers, err := m.writers(ctx)
	if err != nil {
		return res, err
	}
	if full {
		if err := m.importGeneses(ctx); err != nil {
			return res, err
		}
	}
	var again []suspect
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
		if err := m.importWriter(ctx, w, full || m.rescan, &res, &again); err != nil {
			return res, err
		}
	}
	if err := m.readAgain(ctx, again, &res); err != nil {
		return res, err
	}
	if m.o.Salvage {
		if err := m.salvage(ctx, &res); err != nil {
			return res, err
		}
	}
	if full || res.Segments > 0 {
		if err := m.importFiles(ctx); err != nil {
			return res, err
		}
	}
	m.logTakenIn(ctx, res)
	if full && res.Listed > segmentBudget {
		m.o.Logger.Warn("mirror: the blob store holds many segments; writers that never compact slow sync services down (F12)", "segments", res.Listed)
	}
	err = badError(m.bad)
	if err != nil {
		res.Bad = err.(*BadSegmentsError).Segments
	}
	return res, err
}

// logTakenIn says on Logger what a pass took in, when it read anything,
// and how many versions the store holds aside waiting (02 §9.5): a
// device whose versions wait for a genesis it lacks is seen, not silent.
func (m *Mirror) logTakenIn(ctx context.Context, res ImportResult) {
	if res.Segments == 0 {
		return
	}
	attrs := []any{"segments", res.Segments, "versions", res.Versions, "new", res.Stored}
	msg := fmt.Sprintf("mirror: took in %d new of %d versions from %d segments", res.Stored, res.Versions, res.Segments)
	if st, err := m.s.Stats(ctx); err == nil && st.Waiting > 0 {
		msg += fmt.Sprintf("; %d wait for what they need (their space's genesis, or the versions they follow)", st.Waiting)
		attrs = append(attrs, "waiting", st.Waiting)
	}
	m.o.Logger.Info(msg, attrs...)
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

// suspect is a segment to read again before a pass ends.
type suspect struct {
	writer string
	b      engine.BlobInfo
}

func (m *Mirror) importWriter(ctx context.Context, w string, full bool, res *ImportResult, again *[]suspect) error {
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
		after = maxDone // new segments sort after everything read (S8)…
		for name := range m.failed {
			// …and those that did not read are listed again, to see
			// whether they changed.
			if n, ok := segment.ParseName(name); ok && n.Writer == w {
				after = min(after, segment.NameSeqBound(w, n.Seq))
			}
		}
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
		if !m.o.Adopt {
			return engine.Errorf(ErrBlobStoreShrunk, "the blob store lost segments: writer %s listed up to segment %d, now %d", w, m.maxSeq[w], top)
		}
		m.o.Logger.Warn("mirror: adopting a blob store that lost segments (Options.Adopt)", "writer", w, "listed", m.maxSeq[w], "now", top)
		m.maxSeq[w] = top
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
		if f, ok := m.failed[b.Name]; ok && f.size == b.Size && f.mod.Equal(b.ModTime) && now.Before(f.next) {
			continue // failed last time and unchanged: wait
		}
		todo = append(todo, b)
	}
	m.stats.SegmentsToRead += int64(len(todo))
	// A segment that failed and is no longer listed was deleted or
	// compacted away (the listing starts before every one that failed).
	live := make(map[string]bool, len(listed))
	for _, b := range listed {
		live[b.Name] = true
	}
	for name := range m.failed {
		if n, ok := segment.ParseName(name); ok && n.Writer == w && !live[name] {
			m.forget(name)
		}
	}
	changed := false
	err = m.readSegments(ctx, todo, res, func(name string) error {
		changed = true
		return m.markRead(ctx, w, r, name)
	}, func(b engine.BlobInfo) { *again = append(*again, suspect{w, b}) })
	switch {
	case err != nil:
		return err
	case full:
		// Forget what is no longer listed (compacted away), so the state
		// stays as small as the writer's live segments.
		return m.saveRead(ctx, w, r, live)
	case changed || r.MaxSeq != m.maxSeq[w]:
		return m.saveRead(ctx, w, r, nil)
	}
	return nil
}

// readAgain reads the segments that failed their checks in this pass once
// more, Reread after their first failing read: the same bytes failing
// again make them bad; other bytes failing mean a file still arriving,
// retried on a later pass.
func (m *Mirror) readAgain(ctx context.Context, again []suspect, res *ImportResult) error {
	if len(again) == 0 {
		return nil
	}
	var until time.Time
	for _, s := range again {
		until = later(until, m.failed[s.b.Name].first.Add(m.o.Reread))
	}
	if err := sleepUntil(ctx, until, m.o.Now); err != nil {
		return err
	}
	byWriter := map[string][]engine.BlobInfo{}
	var ws []string
	for _, s := range again {
		if byWriter[s.writer] == nil {
			ws = append(ws, s.writer)
		}
		byWriter[s.writer] = append(byWriter[s.writer], s.b)
	}
	for _, w := range ws {
		r, err := m.readState(ctx, w)
		if err != nil {
			return err
		}
		err = m.readSegments(ctx, byWriter[w], res, func(name string) error {
			return m.markRead(ctx, w, r, name)
		}, func(b engine.BlobInfo) {
			m.retryLater(b, m.o.Now()) // still changing: a later pass
			res.Unavailable++
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sleepUntil waits until now() reaches t, or ctx ends.
func sleepUntil(ctx context.Context, t time.Time, now func() time.Time) error {
	d := t.Sub(now())
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func (m *Mirror) markRead(ctx context.Context, w string, r *readState, name string) error {
	r.Done = append(r.Done, name)
	return m.saveRead(ctx, w, r, nil)
}

// saveRead saves what was read of writer w, sorted and once each; with
// live, only names in it.
func (m *Mirror) saveRead(ctx context.Context, w string, r *readState, live map[string]bool) error {
	sort.Strings(r.Done)
	out := r.Done[:0]
	for i, n := range r.Done {
		if (i == 0 || n != r.Done[i-1]) && (live == nil || live[n]) {
			out = append(out, n)
		}
	}
	r.Done = out
	r.MaxSeq = m.maxSeq[w]
	return m.saveJSON(ctx, m.metaKey("read", w), r)
}

// failure is a segment that did not read: a placeholder, or bytes that
// failed their checks.
type failure struct {
	size  int64
	mod   time.Time // as listed
	next  time.Time // not read again before, unless it changes
	tries int
	// For bytes that failed their checks: their SHA-256, and when bytes
	// with this sum first failed.
	sum   [32]byte
	first time.Time
}

// retryLater backs off reading a segment that cannot be read now.
func (m *Mirror) retryLater(b engine.BlobInfo, now time.Time) {
	f := m.failed[b.Name]
	if f.size != b.Size || !f.mod.Equal(b.ModTime) {
		f.tries = 0
	}
	f.tries++
	f.size, f.mod = b.Size, b.ModTime
	f.next = now.Add(backoff(f.tries))
	m.failed[b.Name] = f
	m.stats.Unavailable++
}

func backoff(tries int) time.Duration { return min(time.Second<<min(tries, 16), time.Hour) }

// failedRead records a read whose bytes failed their checks, and reports
// whether to read it again in this pass. The same bytes failing Reread
// after they first did make the segment bad.
func (m *Mirror) failedRead(pc piece) (again bool) {
	now := m.o.Now()
	f, had := m.failed[pc.b.Name]
	if had && !f.first.IsZero() && f.sum == pc.sum && now.Sub(f.first) >= m.o.Reread {
		f.tries++
		f.size, f.mod = pc.b.Size, pc.b.ModTime
		f.next = now.Add(backoff(f.tries))
		m.failed[pc.b.Name] = f
		if old, known := m.bad[pc.b.Name]; !known || old != pc.problem {
			m.stats.Bad++
			m.o.Logger.Warn("mirror: bad segment: it fails its checks with the same bytes on two reads; its versions are not read from it (read again when it changes)",
				"name", pc.b.Name, "versions", pc.problem.Versions, "code", pc.problem.Code, "reason", pc.problem.Reason)
		}
		m.bad[pc.b.Name] = pc.problem
		return false
	}
	if !had || f.sum != pc.sum || f.first.IsZero() {
		f = failure{sum: pc.sum, first: now, tries: f.tries}
	}
	f.size, f.mod, f.next = pc.b.Size, pc.b.ModTime, time.Time{}
	m.failed[pc.b.Name] = f
	return true
}

// forget drops what is known of a segment that read, or is gone.
func (m *Mirror) forget(name string) {
	delete(m.failed, name)
	delete(m.bad, name)
}

// admitLines decodes each line as a version and admits them in chunks.
// A line that is not a version is counted as refused: the segment's
// checksum says its writer wrote it, not that it is valid.
func (m *Mirror) admitLines(ctx context.Context, lines [][]byte, res *ImportResult) error {
	p := m.pipeline(ctx, res, func(pc *piece) error {
		m.stats.Refused += int64(pc.bad)
		return nil
	})
	for start := 0; start < len(lines); start += admitChunk {
		pc := &piece{}
		for _, l := range lines[start:min(start+admitChunk, len(lines))] {
			if v, err := record.Decode(l); err == nil {
				pc.vs = append(pc.vs, v)
			} else {
				pc.bad++
			}
		}
		var err error
		if len(pc.vs) > 0 {
			err = m.genesesFirst(ctx, p)
		}
		if err == nil {
			err = p.Add(ctx, pc)
		}
		if err != nil {
			p.Close()
			return err
		}
	}
	return p.Close()
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
	var gone []string
	for _, s := range m.w.Own {
		if !have[s.Name] && !pendingHas(m.w.Pending, s.Name) {
			gone = append(gone, s.Name)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	if !m.o.Adopt {
		return engine.Errorf(ErrBlobStoreShrunk, "the blob store lost segments: our segment %s is gone", gone[0])
	}
	// Adopting the store as it is: what it lost of ours is written again,
	// everything from the first change; compaction merges the repeats.
	m.o.Logger.Warn("mirror: adopting a blob store that lost our segments (Options.Adopt); exporting everything again", "gone", len(gone), "first", gone[0])
	m.w.Own = slices.DeleteFunc(m.w.Own, func(s ownSegment) bool { return !have[s.Name] })
	m.w.Cursor = 0
	return m.saveWriter(ctx)
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
