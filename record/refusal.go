package record

import (
	"strings"

	"github.com/minca-go/minca/identity"
)

// Refusal is why a version is refused: a stable reason code (the 02 §9 step
// before the slash), the member it concerns and a message naming the rule.
type Refusal struct {
	Code    string
	Field   string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// Step is the part of the code before the slash: "shape", "crypto",
// "note", "chain", "key", "loose".
func (r *Refusal) Step() string {
	step, _, _ := strings.Cut(r.Code, "/")
	return step
}

func refuse(code, field, msg string) *Refusal {
	return &Refusal{Code: code, Field: field, Message: msg}
}

// Reason codes. They are a stable contract: tools print them and tests,
// peers and people match on them.
const (
	// Shape (02 §4.6, §3.1, §10).
	CodeNotObject  = "shape/object"   // the version is not a JSON object
	CodeMember     = "shape/member"   // a required member is missing or of the wrong type (§3.1)
	CodeKey        = "shape/key"      // §4.6 #1
	CodeSeq        = "shape/seq"      // §4.6 #2
	CodeFirst      = "shape/first"    // §4.6 #3: seq 0 with prev or genesis
	CodeLater      = "shape/later"    // §4.6 #4: seq > 0 without prev and genesis, or naming itself
	CodeSeen       = "shape/seen"     // §4.6 #5
	CodeFlag       = "shape/flag"     // §4.6 #6: deleted or retain not true
	CodeDelete     = "shape/delete"   // §4.6 #7, deleted: a body or a bodyHash
	CodeBodyHash   = "shape/bodyHash" // §4.6 #7, not deleted: bodyHash not a string of 1–128
	CodeLinks      = "shape/links"    // §4.6 #8, §5.1
	CodeBody       = "shape/body"     // §4.6 #9, §3.3 step 4: the body does not hash to bodyHash
	CodeRetainStub = "shape/retain"   // §4.6 #10: retained but no body (a stub of a retained version)
	CodeLog        = "shape/log"      // §4.6 #11, §4.10
	CodeTags       = "shape/tags"     // §10: tags a list of at most 64 strings

	// Crypto gate (02 §3.3, §9.2).
	CodeID        = "crypto/id"        // step 1: id is not the content id of the signed part
	CodeAuthor    = "crypto/author"    // step 2: author is not a P-256 did:key
	CodeSignature = "crypto/signature" // step 3: the signature does not verify

	// Capability gate (02 §9.3); the note's own codes are identity's.
	CodeCreatedAt = "note/createdAt" // §9.3 step 1: createdAt does not parse
	CodeNoProof   = "note/unchecked" // a proof no note checker was given to judge
	CodeNoteError = "note/error"     // a note checker failed without a reason code
	// The note's own refusals carry identity's codes (identity.Codes):
	// note/shape, note/signature, note/audience, note/command, …

	// Chain and first version (02 §4.6 bullets, §4.7).
	CodeChainKey        = "chain/key"        // §4.7 #1
	CodeChainCollection = "chain/collection" // §4.7 #2
	CodeChainSeq        = "chain/seq"        // §4.7 #3
	CodeChainGenesis    = "chain/genesis"    // §4.7 #4
	CodeChainFirst      = "chain/first"      // §4.6: the first version it names is not this record's

	// Whose a key is (02 §4.1).
	CodeKeyKind  = "key/kind"  // a first version outside sys.* at a key of neither kind
	CodeKeyOwner = "key/owner" // an owned key whose owner part is not the root's
	CodeKeySys   = "key/sys"   // a first version in sys.* at an owned or shared key

	// Loose versions (02 §3.5).
	CodeLooseMember     = "loose/member"     // check 1: a member a loose version must not have, or seq ≠ 0
	CodeLooseCollection = "loose/collection" // check 2: not the collection expected, or not 1–128 characters
	CodeLooseBody       = "loose/body"       // check 2: no body
	CodeLooseCreatedAt  = "loose/createdAt"  // check 2: createdAt is not a time
	CodeLooseTo         = "loose/to"         // check 2: to not a string of at most 128 characters
	CodeLooseFuture     = "loose/future"     // check 4: createdAt more than 5 minutes after now
)

// Codes lists every reason code this package produces, for documentation
// and for tools that check a code is known; the note codes at its end are
// identity's, which the capability gate passes on.
func Codes() []string {
	return append([]string{
		CodeNotObject, CodeMember, CodeKey, CodeSeq, CodeFirst, CodeLater, CodeSeen, CodeFlag,
		CodeDelete, CodeBodyHash, CodeLinks, CodeBody, CodeRetainStub, CodeLog, CodeTags,
		CodeID, CodeAuthor, CodeSignature, CodeCreatedAt, CodeNoProof, CodeNoteError,
		CodeChainKey, CodeChainCollection, CodeChainSeq, CodeChainGenesis, CodeChainFirst,
		CodeKeyKind, CodeKeyOwner, CodeKeySys,
		CodeLooseMember, CodeLooseCollection, CodeLooseBody, CodeLooseCreatedAt, CodeLooseTo, CodeLooseFuture,
	}, identity.Codes()...)
}
