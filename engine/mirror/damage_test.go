package mirror_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
)

// Case 1 (issue 12): a segment with one byte flipped stays bad across
// reads. Import reads every other segment, then fails with ErrBadSegment
// naming it and the versions its trailer says it held; Round still
// exports; Verify reports it; a good copy put back is taken in.
func TestCorruptSegment(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("corrupt")
	a := newDevice(t, space, b, 1, nil)
	writeAndExport(t, a, 0, 3)
	bad := writeAndExport(t, a, 10, 7)
	writeAndExport(t, a, 20, 4)
	good, err := b.Get(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x01
	m.WriteFile(root+bad, flipped)

	opts := &mirror.Options{Reread: 5 * time.Millisecond}
	c := newDevice(t, space, b, 2, opts)
	res, err := c.m.Import(ctx)
	if !errors.Is(err, mirror.ErrBadSegment) {
		t.Fatalf("import over a flipped byte: %v", err)
	}
	var be *mirror.BadSegmentsError
	if !errors.As(err, &be) || len(be.Segments) != 1 {
		t.Fatalf("not a BadSegmentsError naming one segment: %#v", err)
	}
	p := be.Segments[0]
	if p.Name != bad || p.Versions != 7 || p.Code != "segment/checksum" {
		t.Fatalf("problem %+v, want %s with 7 versions", p, bad)
	}
	if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "7 versions") {
		t.Fatalf("the message does not name it: %v", err)
	}
	if res.Stored != 7 || len(res.Bad) != 1 || res.Bad[0] != p {
		t.Fatalf("every other segment is read: %+v", res)
	}
	if got := len(heldSet(t, c.s)); got != 7 {
		t.Fatalf("%d versions held, want the other segments' 7", got)
	}

	// Verify names it too, and nothing else.
	probs, err := mirror.Verify(ctx, b, &mirror.VerifyOptions{Reread: time.Millisecond})
	if err != nil || len(probs) != 1 || probs[0] != p {
		t.Fatalf("verify: %+v %v", probs, err)
	}

	// A round still exports what c wrote, and still says it.
	c.create(99)
	if err := c.m.Round(ctx); !errors.Is(err, mirror.ErrBadSegment) {
		t.Fatalf("round: %v", err)
	}
	wc, _ := c.m.Writer(ctx)
	if len(segmentsOf(t, b, wc)) != 1 {
		t.Fatal("a bad segment stopped the export")
	}

	// The sync service delivers a good copy: it is taken in.
	m.WriteFile(root+bad, good)
	res, err = c.m.Import(ctx)
	if err != nil || res.Stored != 7 || len(res.Bad) != 0 {
		t.Fatalf("the good copy: %+v %v", res, err)
	}
	if probs, err := mirror.Verify(ctx, b, nil); err != nil || len(probs) != 0 {
		t.Fatalf("verify after the good copy: %+v %v", probs, err)
	}
	if got := len(heldSet(t, c.s)); got != 15 {
		t.Fatalf("%d versions held, want 15", got)
	}
}

// A fresh mirror (a restore run again) over a segment that stays bad
// reports it each time, and one over a placeholder (not damage) does not.
func TestCorruptSegmentEachRun(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("corrupt runs")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 2)
	pend := writeAndExport(t, a, 10, 2)
	data, _ := b.Get(ctx, seg)
	m.WriteFile(root+seg, data[:len(data)-3]) // truncated: no trailer
	m.SetDataless(root+pend, true)
	s := newStore(t)
	for run := 0; run < 2; run++ {
		r := newMirror(t, s, b, &mirror.Options{Reread: time.Millisecond})
		res, err := r.Import(ctx)
		var be *mirror.BadSegmentsError
		if !errors.As(err, &be) || len(be.Segments) != 1 || be.Segments[0].Name != seg || be.Segments[0].Versions != -1 {
			t.Fatalf("run %d: %v", run, err)
		}
		if res.Unavailable != 1 {
			t.Fatalf("run %d: the placeholder: %+v", run, res)
		}
	}
	probs, err := mirror.Verify(ctx, b, &mirror.VerifyOptions{Reread: time.Millisecond})
	if err != nil || len(probs) != 2 {
		t.Fatalf("verify: %+v %v", probs, err)
	}
	codes := probs[0].Code + "," + probs[1].Code
	if codes != "segment/magic,segment/unavailable" && codes != "segment/unavailable,segment/magic" {
		t.Fatalf("verify codes %s", codes)
	}
}

// A segment of the writer's own that is damaged where it is stored is
// repaired by its next compaction: everything it exported is written
// again from the store, and readers get every version back.
func TestOwnSegmentRepaired(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("own damaged")
	opts := &mirror.Options{CompactAt: -1, Reread: time.Millisecond}
	a := newDevice(t, space, b, 1, opts)
	writeAndExport(t, a, 0, 3)
	bad := writeAndExport(t, a, 10, 4)
	data, _ := b.Get(ctx, bad)
	data[len(data)/2] ^= 0x20
	m.WriteFile(root+bad, data)
	c := newDevice(t, space, b, 2, opts)
	if _, err := c.m.Import(ctx); !errors.Is(err, mirror.ErrBadSegment) {
		t.Fatalf("import: %v", err)
	}
	a.create(30) // not exported yet: not for compaction to write
	res, err := a.m.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rewrote) != 2 || len(res.Wrote) != 1 || res.Versions != 7 || res.Deleted != 2 {
		t.Fatalf("compaction over a bad segment of ours: %+v", res)
	}
	if _, err := b.Get(ctx, bad); err == nil {
		t.Fatal("the bad segment is still there")
	}
	if res, err := c.m.Import(ctx); err != nil || len(res.Bad) != 0 {
		t.Fatalf("import after the repair: %+v %v", res, err)
	}
	if got := len(heldSet(t, c.s)); got != 7 {
		t.Fatalf("the reader holds %d versions, want 7", got)
	}
	if exp, err := a.m.Export(ctx); err != nil || exp.Versions != 1 {
		t.Fatalf("the unexported version: %+v %v", exp, err)
	}
}
