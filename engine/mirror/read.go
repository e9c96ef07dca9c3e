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
	vs     []*record.Version // none for a segment with no versions, or one not read
	bad    int               // lines that are not versions
	last   bool              // the segment's last piece
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
// goroutine fetches and checks (checksum, zstd, record shape) the next
// chunk while an engine.Pipeline checks the one before on every core,
// decides the one before that and commits the one before that. done is
// called once every version of a segment is admitted, in order; a segment
// that cannot be read now (a placeholder, F3) is retried later, one gone
// since it was listed is done (F8). One that fails its checks is bad if it
// failed with the same bytes Reread ago or more, else it goes to again (a
// torn or partial file, F4, or damage not yet confirmed: read it again).
// done and again are called by the pipeline, one batch at a time, before
// readSegments returns.
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
	p := m.pipeline(ctx, res, func(pc *piece) error { return m.took(pc, res, done, again) })
	for pc := range pieces {
		err := pc.err
		if err == nil && len(pc.vs) > 0 {
			err = m.genesesFirst(ctx, p)
		}
		if err == nil {
			err = p.Add(ctx, &pc)
		}
		if err != nil {
			p.Close()
			return err
		}
	}
	if err := p.Close(); err != nil {
		return err
	}
	return ctx.Err()
}

// pipeline admits pieces into the store, counting each one's outcomes
// into res and the mirror's stats before then passes it to took.
func (m *Mirror) pipeline(ctx context.Context, res *ImportResult, took func(*piece) error) *engine.Pipeline[*piece] {
	return engine.NewPipeline(ctx, m.s, m.from, engine.Stages[*piece]{
		Versions: func(_ context.Context, pc *piece) ([]*record.Version, error) { return pc.vs, nil },
		Done: func(pc *piece, r engine.Result) error {
			if r.Err != nil {
				return fmt.Errorf("minca/mirror: admit: %w", r.Err)
			}
			m.counted(r, res)
			return took(pc)
		},
	})
}

// genesesFirst keeps the blob store's geneses before a pass admits its
// first version (importGeneses), once what p was given is done with: the
// pipeline's Done counts into the same stats.
func (m *Mirror) genesesFirst(ctx context.Context, p *engine.Pipeline[*piece]) error {
	if m.o.Geneses == nil || m.genesesIn {
		return nil
	}
	if err := p.Flush(); err != nil {
		return err
	}
	return m.importGeneses(ctx)
}

// took acts on a piece read and, when it had versions, admitted.
func (m *Mirror) took(pc *piece, res *ImportResult, done func(name string) error, again func(engine.BlobInfo)) error {
	switch pc.status {
	case pieceGone:
		m.forget(pc.b.Name)
		return done(pc.b.Name)
	case pieceNotYet:
		m.retryLater(pc.b, m.o.Now())
		res.Unavailable++
		return nil
	case pieceFailed:
		if m.failedRead(*pc) {
			again(pc.b)
		}
		return nil
	}
	m.forget(pc.b.Name)
	m.stats.Refused += int64(pc.bad)
	if !pc.last {
		return nil
	}
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
	return nil
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
			last := start+admitChunk >= len(lines)
			pc := piece{b: b, vs: vs, bad: bad, last: last}
			if last {
				pc.bytes = int64(len(data))
			}
			if !send(pc) {
				return
			}
		}
	}
}

// counted counts what an admission did.
func (m *Mirror) counted(r engine.Result, res *ImportResult) {
	for _, o := range r.Outcomes {
		if o.Verdict == engine.Refused {
			m.stats.Refused++
		}
	}
	res.Stored += r.Stored
	res.Versions += len(r.Outcomes)
	m.stats.Stored += int64(r.Stored)
	m.stats.Admitted += int64(len(r.Outcomes))
}
