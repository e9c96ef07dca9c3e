package mirror

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror/internal/segment"
	"github.com/minca-go/minca/record"
)

// VerifyOptions configure [Verify]. nil means defaults.
type VerifyOptions struct {
	// Reread is how long a segment that fails its checks is given before
	// it is read again, as [Options.Reread]. Default 2 s.
	Reread time.Duration
	// Progress, if set, is called after each segment is read.
	Progress func(VerifyStats)
}

// VerifyStats count what Verify read so far.
type VerifyStats struct {
	Segments int   `json:"segments"` // read so far
	Total    int   `json:"total"`    // listed
	Bytes    int64 `json:"bytes"`
}

// Verify reads every segment of every writer in a blob store and checks
// it whole — frame, checksum, zstd, limits, that each line is a version,
// and that its name says what its content is (DESIGN, Segments) — and
// returns a [Problem] for each that fails, and for each it could not
// verify: a placeholder not downloaded ("segment/unavailable"), or one
// whose bytes changed between two reads ("segment/unsettled"). A segment
// that fails is read again Reread later, as Import does: only the same
// bytes failing twice are damage. A segment gone since it was listed is
// not a problem (compacted away). It reads; it never writes or deletes.
// The error is for what stopped it (the blob store gone, ctx).
func Verify(ctx context.Context, b engine.Blobs, o *VerifyOptions) ([]Problem, error) {
	var opt VerifyOptions
	if o != nil {
		opt = *o
	}
	if opt.Reread < 0 {
		return nil, fmt.Errorf("minca/mirror: VerifyOptions.Reread %v is negative", opt.Reread)
	}
	if opt.Reread == 0 {
		opt.Reread = 2 * time.Second
	}
	c, err := segment.NewCodec(segment.Limits{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var listed []engine.BlobInfo
	for after := ""; ; {
		page, err := b.List(ctx, segment.Prefix, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, bi := range page {
			if _, ok := segment.ParseName(bi.Name); ok {
				listed = append(listed, bi)
			}
			after = bi.Name
		}
		if len(page) < 1000 {
			break
		}
	}
	probs := []Problem{}
	st := VerifyStats{Total: len(listed)}
	type failed struct {
		name  string
		sum   [32]byte
		first Problem
	}
	var again []failed
	// check reads one segment: a problem, or none, or gone.
	check := func(name string) (data []byte, p *Problem, err error) {
		data, err = b.Get(ctx, name)
		switch {
		case errors.Is(err, engine.ErrBlobNotFound):
			return nil, nil, nil
		case errors.Is(err, engine.ErrBlobUnavailable):
			return nil, &Problem{Name: name, Code: "segment/unavailable", Versions: -1, Reason: "not downloaded yet (a placeholder); not verified"}, nil
		case err != nil:
			return nil, nil, err
		}
		st.Bytes += int64(len(data))
		return data, verifyOne(c, name, data), nil
	}
	for _, bi := range listed {
		if err := ctx.Err(); err != nil {
			return probs, err
		}
		if bi.Pending {
			probs = append(probs, Problem{Name: bi.Name, Code: "segment/unavailable", Versions: -1, Reason: "not downloaded yet (a placeholder); not verified"})
		} else {
			data, p, err := check(bi.Name)
			if err != nil {
				return probs, err
			}
			switch {
			case p == nil:
			case data == nil: // not downloaded: not verified
				probs = append(probs, *p)
			default:
				again = append(again, failed{bi.Name, sha256.Sum256(data), *p})
			}
		}
		st.Segments++
		if opt.Progress != nil {
			opt.Progress(st)
		}
	}
	if len(again) > 0 {
		if err := sleepUntil(ctx, time.Now().Add(opt.Reread), time.Now); err != nil {
			return probs, err
		}
	}
	for _, f := range again {
		data, p, err := check(f.name)
		switch {
		case err != nil:
			return probs, err
		case p == nil: // whole now, or gone
		case data != nil && sha256.Sum256(data) != f.sum:
			probs = append(probs, Problem{Name: f.name, Code: "segment/unsettled", Versions: p.Versions,
				Reason: fmt.Sprintf("its bytes changed between two reads %v apart (a sync in flight?) and still fail: %s; not verified", opt.Reread, p.Reason)})
		default:
			probs = append(probs, *p)
		}
	}
	return probs, nil
}

// verifyOne checks one segment's bytes; nil when they are sound.
func verifyOne(c *segment.Codec, name string, data []byte) *Problem {
	s, err := c.Decode(data)
	if err != nil {
		p := problemOf(name, data, err)
		return &p
	}
	if n, ok := segment.ParseName(name); ok && !n.Matches(&s.Trailer) {
		return &Problem{Name: name, Code: "segment/name", Versions: int(s.Count),
			Reason: fmt.Sprintf("its content is segment %s (writer %s, seq %d)", s.Name(), s.Writer, s.Seq)}
	}
	bad := 0
	for _, l := range s.Lines {
		if _, err := record.Decode(bytes.Clone(l)); err != nil {
			bad++
		}
	}
	if bad > 0 {
		return &Problem{Name: name, Code: "segment/lines", Versions: int(s.Count),
			Reason: fmt.Sprintf("%d of its %d lines are not versions", bad, s.Count)}
	}
	return nil
}
