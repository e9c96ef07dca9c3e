package mirror

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/minca-go/minca/engine/mirror/internal/segment"
)

// ErrBadSegment: a segment in the blob store fails its checks (checksum,
// frame, zstd, limits) with the same bytes on reads [Options.Reread]
// apart — damaged, not a file still arriving (DESIGN, Segments). The
// versions it holds cannot be read from it; every other segment's are.
// Errors carrying it are a [*BadSegmentsError], which names each.
var ErrBadSegment = errors.New("minca/mirror: bad segment")

// Problem is a segment that failed verification or import, by name.
type Problem struct {
	Name string `json:"name"`
	// Code is the segment's defect ("segment/checksum", "segment/short",
	// "segment/magic", "segment/zstd", …), or why it was not verified:
	// "segment/unavailable" (a placeholder not downloaded), "segment/unsettled"
	// (its bytes changed between two reads: a sync in flight).
	Code string `json:"code"`
	// Versions is how many versions its trailer says it holds; -1 (JSON
	// null) when the trailer is unreadable.
	Versions int    `json:"versions"`
	Reason   string `json:"reason"`
}

// MarshalJSON writes Versions as null when it is unknown.
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	out := struct {
		plain
		Versions *int `json:"versions"`
	}{plain: plain(p)}
	if p.Versions >= 0 {
		out.Versions = &p.Versions
	}
	return json.Marshal(out)
}

// String is the problem in one line, naming the segment and what it held.
func (p Problem) String() string {
	held := "an unknown number of versions (its trailer is unreadable)"
	if p.Versions >= 0 {
		held = fmt.Sprintf("%d versions by its trailer", p.Versions)
	}
	return fmt.Sprintf("%s: %s: %s; it held %s", p.Name, p.Code, p.Reason, held)
}

// BadSegmentsError names the bad segments one pass found ([ErrBadSegment]).
type BadSegmentsError struct {
	Segments []Problem // sorted by name
}

func (e *BadSegmentsError) Error() string {
	var b strings.Builder
	if len(e.Segments) == 1 {
		b.WriteString("bad segment ")
	} else {
		fmt.Fprintf(&b, "%d bad segments: ", len(e.Segments))
	}
	for i, p := range e.Segments {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrBadSegment) hold.
func (e *BadSegmentsError) Unwrap() error { return ErrBadSegment }

// problemOf describes a segment whose bytes failed to decode with err.
func problemOf(name string, data []byte, err error) Problem {
	p := Problem{Name: name, Code: "segment/unreadable", Versions: -1, Reason: err.Error()}
	var se *segment.Error
	if errors.As(err, &se) {
		p.Code, p.Reason = se.Code, se.Msg
	}
	if t, ok := segment.PeekTrailer(data); ok {
		p.Versions = int(t.Count)
	}
	return p
}

// badError is the error for the segments in bad, or nil.
func badError(bad map[string]Problem) error {
	if len(bad) == 0 {
		return nil
	}
	e := &BadSegmentsError{}
	for _, p := range bad {
		e.Segments = append(e.Segments, p)
	}
	sort.Slice(e.Segments, func(i, j int) bool { return e.Segments[i].Name < e.Segments[j].Name })
	return e
}
