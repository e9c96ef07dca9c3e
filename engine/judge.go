package engine

import (
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// Judge decides whether a version may be kept (02 §9); the store applies its
// verdicts. It is split in two so the costly part runs on every core:
//
//   - Check makes the checks that need the version alone — shape (§4.6),
//     the crypto gate (§3.3), the capability gate (§9.3) — and is called
//     from many goroutines at once, before anything is read from the store.
//   - Decide makes the stateful checks against what the store holds (§4.6
//     bullets, §4.7, §4.1, §9.4) and is called from one goroutine, in
//     admission order, inside the batch: what it sees includes the versions
//     stored earlier in the same batch.
//
// For the store's guarantee that the same versions in any order give the same
// held state, Decide must be a function of the version, what Check returned
// and the held versions it reads: never of time or of arrival order.
type Judge interface {
	// Check returns what it learned (the root, §9.3) or a *record.Refusal.
	// Any other error aborts the admission.
	Check(v *record.Version) (Checked, error)
	// Decide returns the verdict for v against what h holds. An error
	// aborts the admission.
	Decide(h HeldReader, v *record.Version, c Checked) (Decision, error)
}

// Checked is what [Judge.Check] learned from a version alone.
type Checked struct {
	// Root is the account the author acts for (02 §9.3 step 5).
	Root string
}

// Decision is [Judge.Decide]'s verdict.
type Decision struct {
	// Verdict is Stands, Withdrawn, Later or Refused.
	Verdict Verdict
	// Waits names the ids a Later version waits for; it is re-judged when
	// any of them is stored. Required when Later.
	Waits []string
	// Refusal says why, when Refused; when Withdrawn, it may say what took
	// the version away, and the Outcome carries it.
	Refusal *record.Refusal
}

// HeldReader is what a judge may read of the store while deciding.
type HeldReader interface {
	// Held returns a held version as the store has it at hand — judges
	// read only its envelope — or ok false when it is not held. Waiting
	// versions are not held. Ids are digests, parsed where they came in
	// (a version's links: [record.Version.PrevDigest] and the like); the
	// zero ID, what a link that is no id gives, is never held.
	Held(id canonical.ID) (v *record.Version, ok bool, err error)
	// Standing returns a held version's standing, Stands or Withdrawn.
	Standing(id canonical.ID) (standing Verdict, ok bool, err error)
}
