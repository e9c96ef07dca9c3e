package mirror

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
	"github.com/minca-go/minca/record"
)

// piece is one chunk of a segment, read, decoded and checked by the
// reading goroutine, for the admitting one.
type piece struct {
	b      engine.BlobInfo
	p      *engine.Prepared // nil for a segment with no versions, or one not read
	bad    int              // lines that are not versions
	last   bool             // the segment's last piece
	status pieceStatus
	bytes  int64
	err    error // stops the import
	// A segment that failed its checks (pieceFailed): the SHA-256 of the
	// bytes read, and what is wrong with them.
	sum     [32]byte
	problem Problem
}

type pieceStatus uint8

const (
	pieceOK pieceStatus = iota
	pieceGone
	pieceNotYet
	pieceFailed
)

// readSegments reads segments and admits their versions, pipelined: one
// goroutine fetches, checks (checksum, zstd, record shape) and prepares
// (the judge's checks on every core) the next chunk while this one admits
// the last. done is called once every version of a segment is admitted,
// in order; a segment that cannot be read now (a placeholder, F3) is
// retried later, one gone since it was listed is done (F8). One that
// fails its checks is bad if it failed with the same bytes Reread ago or
// more, else it goes to again (a torn or partial file, F4, or damage not
// yet confirmed: read it again).
func (m *Mirror) readSegments(ctx context.Context, bs []engine.BlobInfo, res *ImportResult, done func(name string) error, again func(engine.BlobInfo)) error {
	if len(bs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pieces := make(chan piece, 2)
	go m.produce(ctx, bs, pieces)
	defer func() {
		cancel()
		for range pieces { // let the reader finish
		}
	}()
	for pc := range pieces {
		if pc.err != nil {
			return pc.err
		}
		switch pc.status {
		case pieceGone:
			m.forget(pc.b.Name)
			if err := done(pc.b.Name); err != nil {
				return err
			}
			continue
		case pieceNotYet:
			m.retryLater(pc.b, m.o.Now())
			res.Unavailable++
			continue
		case pieceFailed:
			if m.failedRead(pc) {
				again(pc.b)
			}
			continue
		}
		m.forget(pc.b.Name)
		m.stats.Refused += int64(pc.bad)
		if pc.p != nil {
			if err := m.admitPrepared(ctx, pc.p, res); err != nil {
				return err
			}
		}
		if pc.last {
			res.Segments++
			res.Bytes += pc.bytes
			m.stats.SegmentsRead++
			m.stats.BytesRead += pc.bytes
			if err := done(pc.b.Name); err != nil {
				return err
			}
			if m.o.Progress != nil {
				m.o.Progress(m.stats)
			}
		}
	}
	return ctx.Err()
}

// produce is the reading goroutine of readSegments. It touches nothing of
// the mirror's state but its codec, which nothing else uses meanwhile.
func (m *Mirror) produce(ctx context.Context, bs []engine.BlobInfo, out chan<- piece) {
	defer close(out)
	send := func(pc piece) bool {
		select {
		case out <- pc:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, b := range bs {
		data, err := m.b.Get(ctx, b.Name)
		switch {
		case errors.Is(err, engine.ErrBlobNotFound):
			if !send(piece{b: b, status: pieceGone, last: true}) {
				return
			}
			continue
		case errors.Is(err, engine.ErrBlobUnavailable):
			if !send(piece{b: b, status: pieceNotYet, last: true}) {
				return
			}
			continue
		case err != nil:
			send(piece{err: err})
			return
		}
		seg, err := m.codec.Decode(data)
		if err != nil {
			var se *segment.Error
			if !errors.As(err, &se) {
				send(piece{err: err})
				return
			}
			// Partial, torn or mangled: a sync in flight, or damage.
			// The consumer tells which by reading it again (failedRead).
			pc := piece{b: b, status: pieceFailed, last: true, sum: sha256.Sum256(data), problem: problemOf(b.Name, data, err)}
			if !send(pc) {
				return
			}
			continue
		}
		if n, ok := segment.ParseName(b.Name); ok && !n.Matches(&seg.Trailer) {
			m.o.Logger.Info("mirror: a segment's name does not match its content; reading it by content", "name", b.Name, "writer", seg.Writer, "seq", seg.Seq)
		}
		lines := seg.Lines
		if len(lines) == 0 {
			if !send(piece{b: b, last: true, bytes: int64(len(data))}) {
				return
			}
			continue
		}
		for start := 0; start < len(lines); start += admitChunk {
			chunk := lines[start:min(start+admitChunk, len(lines))]
			vs := make([]*record.Version, 0, len(chunk))
			bad := 0
			for _, l := range chunk {
				v, err := record.Decode(l)
				if err != nil {
					bad++ // the checksum says its writer wrote it, not that it is valid
					continue
				}
				vs = append(vs, v)
			}
			var p *engine.Prepared
			if len(vs) > 0 {
				if p, err = m.s.Prepare(ctx, vs); err != nil {
					send(piece{err: fmt.Errorf("minca/mirror: %w", err)})
					return
				}
			}
			last := start+admitChunk >= len(lines)
			pc := piece{b: b, p: p, bad: bad, last: last}
			if last {
				pc.bytes = int64(len(data))
			}
			if !send(pc) {
				return
			}
		}
	}
}

// admitPrepared admits one prepared chunk and counts what it did.
func (m *Mirror) admitPrepared(ctx context.Context, p *engine.Prepared, res *ImportResult) error {
	return m.admitCounted(ctx, res, func() ([]engine.Outcome, error) { return m.s.AdmitPrepared(ctx, m.from, p) })
}

// admitCounted runs admit between two readings of the store's stats, so
// what it stored can be counted from their difference.
func (m *Mirror) admitCounted(ctx context.Context, res *ImportResult, admit func() ([]engine.Outcome, error)) error {
	if err := m.importGeneses(ctx); err != nil {
		return err
	}
	before, err := m.s.Stats(ctx)
	if err != nil {
		return err
	}
	outs, err := admit()
	if err != nil {
		return fmt.Errorf("minca/mirror: admit: %w", err)
	}
	after, err := m.s.Stats(ctx)
	if err != nil {
		return err
	}
	m.counted(outs, before, after, res)
	return nil
}

// counted counts what an admission did.
func (m *Mirror) counted(outs []engine.Outcome, before, after engine.Stats, res *ImportResult) {
	for _, o := range outs {
		if o.Verdict == engine.Refused {
			m.stats.Refused++
		}
	}
	n := max(0, after.Versions-before.Versions) // new to the store (a count: others may admit too)
	res.Stored += int(n)
	res.Versions += len(outs)
	m.stats.Stored += n
	m.stats.Admitted += int64(len(outs))
}
