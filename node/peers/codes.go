package peers

// Reason codes of the sync session (docs/sync.md §7.4). A session ends
// with one in NEG-ERR; a message that breaks the framing ends the whole
// connection with one in transport's bye.
const (
	CodeDone         = "sync/done"          // a one-shot reconciliation finished
	CodeClosed       = "sync/closed"        // ended on purpose: the node closes, the space is left
	CodeNotHeld      = "sync/not-held"      // the space is not held here, or the peer may not read it: the same answer
	CodeMalformed    = "sync/malformed"     // a message that is not one of §7.1's (ends the connection)
	CodeUnexpected   = "sync/unexpected"    // a message out of order: an answer nobody asked for, NEG-MSG after NEG-CLOSE
	CodeNegMalformed = "sync/neg-malformed" // a negentropy message negentropy refuses
	CodeNegTooLong   = "sync/neg-too-long"  // more rounds, or more differences, than the limits
	CodeChanged      = "sync/changed"       // the sync order changed under the reconciliation: open again
	CodeBehind       = "sync/behind"        // this side fell behind its live events: open again to reconcile
	CodeWantFlood    = "sync/want-flood"    // more WANTs unanswered than MaxWantsOut
	CodePushFlood    = "sync/push-flood"    // more pushes unacknowledged than MaxPushesOut
	CodeRefused      = "sync/refused"       // too many versions the judge refused (forged, mangled)
	CodeUseless      = "sync/useless"       // too many versions that brought nothing
	CodeTooMany      = "sync/sessions"      // more sessions on one connection than the limit
	CodeInternal     = "sync/internal"      // this side failed (its store); try again later
	CodeScope        = "sync/scope"         // the responder holds fewer collections: the message lists them; open again with those
	CodeSlow         = "sync/slow"          // the peer sent more that needs an answer while not reading the last for Limits.SlowAfter (ends the connection)
	CodeRate         = "sync/rate"          // more NEG-OPENs than the peer's rate (Limits.OpenRate)
	CodeForged       = "sync/forged"        // versions failing the crypto gate past Limits.Forgeries: the peer is refused for a while (ends the connection)
)

// retryable reports whether an opener opens a session that ended so
// again after Reopen, not Rescan: what ends it is a moment's state, not
// a refusal, or a message lost on the way that only a new session gets
// past (CodeFileUnanswered: the file waiting on it is asked again there).
func retryable(code string) bool {
	switch code {
	case CodeChanged, CodeBehind, CodeInternal, CodeScope, CodeFileUnanswered:
		return true
	}
	return false
}
