package mirror

import (
	"context"
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// ExportResult is what one export pass wrote.
type ExportResult struct {
	Segments []string `json:"segments"`
	Versions int      `json:"versions"`
	Bytes    int64    `json:"bytes"`
}

// Export writes every change since the last export as this writer's next
// segments, BatchVersions at most each, versions as the store holds them
// now (02 §4.5: a stub if superseded since). What came from this blob
// store — imported by this mirror or any other of the same blob store, in
// this run or an earlier one — is not written back ([Source]).
func (m *Mirror) Export(ctx context.Context) (ExportResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res ExportResult
	m.genesesOut = nil // listed again, when needed, each pass
	if err := m.loadWriter(ctx); err != nil {
		return res, err
	}
	if err := m.resolvePending(ctx); err != nil {
		return res, err
	}
	for {
		lines, cursor, err := m.nextBatch(ctx)
		if err != nil {
			return res, err
		}
		if cursor == m.w.Cursor {
			break
		}
		if len(lines) == 0 {
			m.w.Cursor = cursor // all skipped: only the cursor moves
			if err := m.saveWriter(ctx); err != nil {
				return res, err
			}
			continue
		}
		if m.w.Seq >= segment.MaxSeq {
			return res, errors.New("minca/mirror: writer sequence exhausted")
		}
		// The geneses the segment's versions need go first: a reader
		// that sees the segment finds them.
		if err := m.exportGeneses(ctx, lines); err != nil {
			return res, err
		}
		// So are the files they name (docs/stores.md, Files).
		if err := m.exportFiles(ctx, lines); err != nil {
			return res, err
		}
		data, t, err := m.codec.Encode(segment.Header{Writer: m.w.ID, Seq: m.w.Seq + 1}, lines)
		if err != nil {
			return res, err
		}
		err = m.publish(ctx, data, &t, cursor, nil)
		if errors.Is(err, errClone) {
			if err := m.rotate(ctx, err.Error()); err != nil {
				return res, err
			}
			continue // the same batch, under the new id
		}
		if err != nil {
			return res, err
		}
		res.Segments = append(res.Segments, t.Name())
		res.Versions += len(lines)
		res.Bytes += int64(len(data))
		m.stats.Exported += int64(len(lines))
	}
	return res, nil
}

// nextBatch reads changes after the cursor: the lines of up to
// BatchVersions versions and the cursor after them.
func (m *Mirror) nextBatch(ctx context.Context) ([][]byte, uint64, error) {
	cursor := m.w.Cursor
	var lines [][]byte
	seen := map[canonical.ID]bool{}
	for c, err := range m.s.Changes(ctx, cursor) {
		if err != nil {
			return nil, 0, fmt.Errorf("minca/mirror: changes: %w", err)
		}
		if len(lines) >= m.o.BatchVersions {
			break
		}
		cursor = c.Seq
		if m.froms[c.From] || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		b, err := m.s.VersionJSON(ctx, c.ID)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("minca/mirror: version %s: %w", c.ID, err)
		}
		lines = append(lines, b)
	}
	return lines, cursor, nil
}
