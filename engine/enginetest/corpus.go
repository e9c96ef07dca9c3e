package enginetest

import (
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/internal/corpus"
	"github.com/minca-go/minca/record"
)

// The suite's corpora come from internal/corpus, which the benchmarks the
// minca binary runs share; these names are the suite's for its callers.

// Writer signs versions of one key in one space ([corpus.Writer]).
type Writer = corpus.Writer

// Opt changes an unsigned version before it is signed.
type Opt = corpus.Opt

// CorpusOptions shapes [Corpus].
type CorpusOptions = corpus.Options

// SpaceID returns a space id made from a name.
func SpaceID(name string) string { return corpus.SpaceID(name) }

// NewWriter makes a writer with a new key.
func NewWriter(space string) (*Writer, error) { return corpus.NewWriter(space) }

// Retain sets retain: true.
func Retain(o *canonical.Object) { corpus.Retain(o) }

// Body makes a small body for edit i of a record.
func Body(r *rand.Rand, i int) any { return corpus.Body(r, i) }

// Corpus signs a space's versions ([corpus.Generate]).
func Corpus(space string, o CorpusOptions, emit func(*record.Version) error) error {
	return corpus.Generate(space, o, emit)
}

// CorpusVersions is Corpus collected into a slice, failing tb when the
// corpus cannot be made.
func CorpusVersions(tb testing.TB, space string, o CorpusOptions) []*record.Version {
	tb.Helper()
	var vs []*record.Version
	if err := Corpus(space, o, func(v *record.Version) error { vs = append(vs, v); return nil }); err != nil {
		tb.Fatal(err)
	}
	return vs
}

// Digest is the digest a version's id names, for the store's calls that
// take one; it panics on an id not in its canonical text, which no version
// a test made has.
func Digest(v *record.Version) canonical.ID {
	d, ok := v.Digest()
	if !ok {
		panic("enginetest: the id " + v.ID + " is not a content id in its canonical text")
	}
	return d
}
