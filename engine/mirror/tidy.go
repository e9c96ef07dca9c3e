package mirror

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// tidy removes what a sync service duplicated or brought back of this
// writer's and of the store's (F1, F5, F7): compacted-away segments of
// ours that came back, copies of this writer's segments under other names
// ("… (conflicted copy).seg", "… 2.seg", "segments 2/…"), once proven
// byte-identical to the segment kept — or, for a segment compacted away,
// to what this writer published at its sequence — and copies of the
// marker identical to it. It is the writer's to do: the copies are its
// own segments (02 §4.9). What it cannot prove identical it leaves, and
// says so on Logger, once per name.
func (m *Mirror) tidy(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.loadWriter(ctx); err != nil {
		return err
	}
	if bm, ok := m.b.(engine.BlobMarkers); ok {
		removed, left, err := bm.TidyMarkers(ctx)
		if err != nil {
			return err
		}
		for _, n := range removed {
			m.o.Logger.Info("mirror: removed a copy of the store marker identical to it", "name", n)
		}
		for _, n := range left {
			m.tell(n, "mirror: a copy of the store marker with other content, left (the store's id is the smallest valid id among the markers)")
		}
	}
	own, err := m.listAll(ctx, segment.WriterPrefix(m.w.ID), "")
	if err != nil {
		return err
	}
	if err := m.dropResurrected(ctx, own); err != nil {
		return err
	}
	st, ok1 := m.b.(engine.BlobStrays)
	rm, ok2 := m.b.(engine.BlobStrayRemover)
	if !ok1 || !ok2 {
		return nil
	}
	strays, err := st.Strays(ctx, "")
	if err != nil {
		return err
	}
	// Names of ours that are no segment's ("…-desktop-4f2.seg": a copy
	// whose decoration is in our grammar) are candidates too.
	for _, b := range own {
		if _, ok := segment.ParseName(b.Name); !ok {
			strays = append(strays, b)
		}
	}
	live := map[string]bool{}
	for _, s := range m.w.Own {
		live[s.Name] = true
	}
	for _, b := range strays {
		orig, ok := copyOf(b.Name, m.w.ID)
		if !ok || b.Pending || pendingHas(m.w.Pending, orig.Name()) {
			continue // not ours, or not comparable yet (a placeholder)
		}
		data, err := m.b.Get(ctx, b.Name)
		if err != nil {
			continue // gone, or not downloaded: a later round
		}
		if why := m.provenCopy(ctx, orig, live[orig.Name()], data); why != "" {
			m.tell(b.Name+"\x00"+why, "mirror: a copy of one of our segments that is not proven identical, left", "name", b.Name, "of", orig.Name(), "why", why)
			continue
		}
		if err := rm.RemoveStray(ctx, b.Name, data); err != nil {
			m.tell(b.Name+"\x00remove", "mirror: a copy of one of our segments could not be removed, left", "name", b.Name, "err", err)
			continue
		}
		m.stats.Duplicates++
		m.o.Logger.Info("mirror: removed a copy of one of our segments, identical to it", "name", b.Name, "of", orig.Name())
	}
	return nil
}

// provenCopy returns "" when data is the segment orig of ours: the same
// bytes as the live segment, or — for one compacted away — a segment
// whose checksum holds and whose content hash is the one this writer
// published at that sequence. Otherwise it says why not.
func (m *Mirror) provenCopy(ctx context.Context, orig segment.NameInfo, live bool, data []byte) string {
	if live {
		keep, err := m.b.Get(ctx, orig.Name())
		if err != nil {
			return "the segment it copies cannot be read: " + err.Error()
		}
		if !bytes.Equal(keep, data) {
			return "its bytes differ from the segment's"
		}
		return ""
	}
	t, err := segment.ReadTrailer(data)
	if err != nil {
		return "it fails its checks: " + err.Error()
	}
	if t.Name() != orig.Name() {
		return "its content is segment " + t.Name()
	}
	ours, err := m.isOurs(ctx, orig)
	if err != nil || !ours {
		return "not a segment this store published"
	}
	return ""
}

// tell logs a message once per key for the life of the mirror.
func (m *Mirror) tell(key, msg string, args ...any) {
	if m.told[key] {
		return
	}
	m.told[key] = true
	if len(args) == 0 {
		args = []any{"name", key}
	}
	m.o.Logger.Warn(msg, args...)
}

// copyOf reads the segment a stray's name says it copies, when that is one
// of writer's: "segments<decoration>/<writer><decoration>/<seq>-<hash>
// <decoration>.seg" with one decoration at least. A hint; the content
// decides (provenCopy).
func copyOf(name, writer string) (segment.NameInfo, bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return segment.NameInfo{}, false
	}
	top, w, file := parts[0], parts[1], parts[2]
	const stem = 12 + 1 + 32
	if !strings.HasPrefix(strings.ToLower(top), "segments") || !strings.HasPrefix(strings.ToLower(w), writer) ||
		len(file) <= stem || !strings.HasSuffix(strings.ToLower(file), ".seg") {
		return segment.NameInfo{}, false
	}
	n, ok := segment.ParseName(segment.WriterPrefix(writer) + file[:stem] + ".seg")
	if !ok || n.Name() == name {
		return segment.NameInfo{}, false
	}
	return n, true
}

// dropResurrected deletes segments of ours, among listed, that compaction
// replaced and a sync service brought back (F7): published by this writer
// (their hash is the one it recorded at their sequence), neither live nor
// being published nor waiting out their grace. What they hold is in the
// live segments that replaced them.
func (m *Mirror) dropResurrected(ctx context.Context, listed []engine.BlobInfo) error {
	keep := map[string]bool{}
	for _, s := range m.w.Own {
		keep[s.Name] = true
	}
	for _, r := range m.w.Retired {
		keep[r.Name] = true
	}
	if m.w.Pending != nil {
		keep[m.w.Pending.Name] = true
	}
	for _, b := range listed {
		n, ok := segment.ParseName(b.Name)
		if !ok || n.Writer != m.w.ID || keep[b.Name] {
			continue
		}
		ours, err := m.isOurs(ctx, n)
		if err != nil {
			return err
		}
		if !ours {
			continue // another writer's under our id: checkOwn's (F11)
		}
		if err := m.b.Delete(ctx, b.Name); err != nil {
			return fmt.Errorf("minca/mirror: delete %s: %w", b.Name, err)
		}
		m.stats.Deleted++
		m.stats.BytesFreed += b.Size
		m.o.Logger.Info("mirror: deleted a compacted-away segment of ours that came back", "name", b.Name)
	}
	return nil
}
