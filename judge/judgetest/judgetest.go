// Package judgetest opens what tests of the full judge (02 §9.3–§9.5) stand
// on: a memory store judged by it, holding one space. It is test machinery,
// never linked into the minca binary.
package judgetest

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/space"
)

// Store opens a memory store judged by j — a [*judge.SpaceJudge] or a
// [*judge.PrivateJudge] — as j's source, with opts' other settings (nil for
// one worker), and adds g's genesis to it unless g is nil. The store is
// closed when the test ends.
func Store(t testing.TB, j engine.Judge, g *space.Genesis, opts *engine.Options) *engine.Store {
	t.Helper()
	var full *judge.SpaceJudge
	switch x := j.(type) {
	case *judge.SpaceJudge:
		full = x
	case *judge.PrivateJudge:
		full = x.SpaceJudge
	default:
		t.Fatalf("judgetest: %T is not the full judge", j)
	}
	o := engine.Options{Workers: 1}
	if opts != nil {
		o = *opts
	}
	o.Judge = j
	st, err := engine.Open(memory.Open(nil), &o)
	if err != nil {
		t.Fatal(err)
	}
	full.Source = st
	t.Cleanup(func() { st.Close() })
	if g != nil {
		if err := judge.AddGenesis(context.Background(), st, g); err != nil {
			t.Fatal(err)
		}
	}
	return st
}
