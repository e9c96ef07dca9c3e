package identity

import (
	"testing"
)

// The capability gate on a version under a session note: the note's
// signature is verified once per Checker, not once per version.
func benchmarkCheckNote(b *testing.B, cacheSize int) {
	root, _ := GenerateKey()
	session, _ := GenerateKey()
	n, err := IssueNote(root, NoteOptions{Aud: session.DID(), Cmd: CmdRecord,
		Pol: []any{[]any{"like", ".collection", "app.*"}}})
	if err != nil {
		b.Fatal(err)
	}
	c := &Checker{Resolver: &Resolver{}, CacheSize: cacheSize}
	inv := writeIn("bspace", "app.todo.item", nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.CheckNote(n.Object(), session.DID(), nil, inv); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckNoteCached(b *testing.B)   { benchmarkCheckNote(b, 0) }
func BenchmarkCheckNoteUncached(b *testing.B) { benchmarkCheckNote(b, -1) }

// 06 §2.5's several-spaces policy over a version with a body.
func BenchmarkPolicyHolds(b *testing.B) {
	p, err := ParsePolicy(parseJSON(b, `[["or", [["==", ".space", "ba"], ["==", ".space", "bb"], ["==", ".space", "bspace1"]]],
		["any", ".body.people", ["like", ".name", "A*"]]]`))
	if err != nil {
		b.Fatal(err)
	}
	args := parseJSON(b, testArgs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !p.Holds(args) {
			b.Fatal("does not hold")
		}
	}
}
