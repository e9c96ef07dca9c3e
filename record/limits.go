package record

// The limits of 02 §10.
const (
	MaxKeyLen        = 128       // a record key: 1–128 characters of [a-z0-9:._-]
	MaxOwnedNameLen  = 101       // the name in an owned key
	MaxSeen          = 64        // ids in seen
	MaxSeenIDLen     = 128       // characters of one id in seen
	MaxLinks         = 32        // links per version
	MaxTags          = 64        // tags per version
	MaxTopics        = 8         // topics per collection
	MaxBodyHashLen   = 128       // characters of bodyHash (§4.6 #7)
	MaxLogPrevLen    = 128       // characters of log.prev (§4.6 #11)
	MaxToLen         = 128       // characters of a loose version's to (§3.1)
	MaxCollectionLen = 128       // characters of a loose version's collection (§3.5)
	MaxSafeInteger   = 1<<53 - 1 // the largest seq and log.n (§4.6)
)
