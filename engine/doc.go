// Package engine is the version store of a Minca node (DESIGN.md, The
// engine): it keeps what 02 §4.5 says a peer keeps, for many spaces, on an
// ordered key-value store ([KV]) laid out once for every backend
// (backends/pebble, backends/sqlite, backends/memory; a KV that can verify
// its own files whole is a [FileVerifier], which Check uses). It knows
// nothing of notes, access histories or the network: a [Judge] decides
// what may be kept, and the store applies its verdicts.
//
// # What it holds
//
//   - Versions by id: the envelope forever; the body while the version is
//     its record's top version, the first of its record that stands, or
//     retained; a delete is always whole. What a new version displaces is
//     demoted to a stub in the same batch that stores it. A body arriving
//     for a held stub is kept only when that version is current or
//     retained. Nothing taken in is ever dropped (02 §4.5). Versions are
//     laid out in the order they were stored and found by id through a
//     small index, so a batch writes its versions side by side.
//   - Records (space, key): held versions in 02 §4.3 order with their
//     standing (stands or withdrawn, changed later by [Store.SetStanding]);
//     the top version; the readable current: the first that stands, read
//     when whole — a stub there reads as not held (§4.5, §9.5).
//   - Writer lines (§4.10): ids per (space, author, collection, log.n); a
//     fork or break found on arrival is kept and published as an event with
//     its [record.LineProof].
//   - Waiting versions (*later*, §9.5), durable, with what each waits for
//     and the source that sent it, re-judged in the batch that stores it
//     (chains of waiters included). Bounded by Options.MaxWaiting (default
//     100,000) and, for bounded sources (a node's peers), in bytes per
//     source and store-wide and in age ([WaitingLimits]): past a bound the
//     oldest of the source holding the most are dropped as if never
//     received — none was acknowledged as stored, and a peer sends it
//     again. [Stats] counts their bytes and those dropped and expired;
//     [Store.WaitingSources] lists the sources. What was dropped leaves
//     the disk by WaitingLimits.MaxDroppedBytes on a [Reclaimer] KV, not
//     when the KV's compactions come.
//   - Refusals as (peer, id) only, in memory, bounded (Options.MaxRefusals).
//   - The sync order per space: (createdAt in Unix ms, id digest).
//   - Files named by versions' files member, by content id: recorded in
//     the KV, their bytes in a [FileDir] (backends/filedir, or memory),
//     written and read as streams; one fetched in pieces grows as a
//     [PartialFile] and is held only once checked against its hash and
//     size. The files versions held whole name are kept; TidyFiles lets
//     the rest go after a grace (docs/stores.md, Files).
//   - A local change log — each version stored and each body added, with
//     the source it came from, each standing change and each fork found,
//     with what its batch left (the version's standing, its record's
//     readable current version: [Change]) — and meta values for mirrors.
//
// A judge may also implement [Restander] — asked, in the batch, after each
// version it lets in is stored, which held versions' standing to change —
// and [Forgetter], told when a batch it decided is not written. The
// HeldReader it is given also implements [Lister]: held versions by the
// root Check gave them, and versions as held.
//
// Whatever order the same versions arrive in, the held state (ids, whole or
// stub, standing) and the current versions are the same, provided the
// judge's Decide depends only on the version and what is held.
//
// # API
//
// A version is named by the digest its id names (canonical.ID), read once
// where the id comes in — record.Decode for a version's own id and links,
// the CLI, the HTTP API, a peer's message — and never parsed again below:
// the store's calls, the judge's HeldReader and Lister, Restanding and
// Change take and give digests. A judge's Waits stay texts: what a version
// waits for may be no id, and then never arrives.
//
//	Open(kv KV, opts *Options) (*Store, error)
//	(*Store).Close() error
//	(*Store).Admit(ctx, from string, vs []*record.Version) ([]Outcome, error)
//	(*Store).Prepare(ctx, vs) (*Prepared, error)        // Admit in two steps, to pipeline:
//	(*Store).AdmitPrepared(ctx, from, p) ([]Outcome, error) // check the next batch while one commits
//	(*Store).Submit(ctx, from, p) (*Admission, error)   // AdmitPrepared in two steps: decide now,
//	(*Admission).Wait() ([]Outcome, error)              // durable then; decide the next meanwhile
//	NewPipeline[T](ctx, s, from, Stages[T]) *Pipeline[T] // a source's batches, three stages deep:
//	(*Pipeline[T]).Add(ctx, item T) error                // check one, decide the next, commit the one
//	(*Pipeline[T]).Flush() error; Close() error; Err()    // after; Stages.Done gets each Result in order
//	(*Store).SetStanding(ctx, id canonical.ID, to Verdict) error
//	(*Store).Wake(ctx, id canonical.ID) error            // re-judge what waits for a non-version (a genesis)
//	(*Store).Version(ctx, id canonical.ID) (*record.Version, error)    // + VersionJSON
//	(*Store).Current(ctx, space, key string) (*record.Version, error)  // + CurrentJSON
//	(*Store).History(ctx, space, key string) ([]Held, error)
//	(*Store).Standing(ctx, id canonical.ID) (Verdict, Storage, error)
//	(*Store).Changes(ctx, after uint64) iter.Seq2[Change, error]
//	(*Store).ChangeLog(ctx, after uint64) iter.Seq2[Change, error] // + the standing changes
//	(*Store).Export(ctx, space string) iter.Seq2[*record.Version, error] // + ExportJSON
//	(*Store).SyncOrder(ctx, space string, from SyncKey) iter.Seq2[SyncItem, error]
//	(*Store).Spaces(ctx) ([]string, error)
//	(*Store).Line(ctx, space, author, collection string, n int64) ([]string, error)
//	(*Store).LineProofs(ctx, space string) ([]*record.LineProof, error)
//	(*Store).Waiting(yield func(v *record.Version, waits []string) bool) error
//	(*Store).WaitingSources(n int) ([]WaitingSource, error)
//	(*Store).Refused(peer string, id canonical.ID) bool
//	(*Store).PutFile(ctx, hash canonical.ID, data []byte) error; File; HasFile; FileInfo; Files; DeleteFile
//	(*Store).CreateFile(ctx) (*FileWriter, error); OpenFile(ctx, hash) (FileReader, error) // streams
//	(*Store).OpenPartial(ctx, FileRef) (*PartialFile, error)          // fetched in pieces, resumed
//	(*Store).NamedFiles(ctx, space, yield); MissingFiles; TidyFiles(ctx, grace); VerifyFiles
//	(*Store).Meta(ctx, name string) ([]byte, bool, error); SetMeta
//	(*Store).Subscribe(space string, buffer int) *Subscription
//	(*Store).IndexReader() Reader; (*Store).Reindex(ctx) error          // an Indexer's table
//	(*Store).Stats(ctx) (Stats, error)
//	(*Store).Check(ctx, vf *record.Verifier) ([]string, error)
//
// # Admitting a source's batches
//
// Every source that admits more than one batch — the node's own writes, a
// peer's session, an import, a mirror's segments — goes through a
// [Pipeline]: its caller supplies the versions of each batch
// (Stages.Versions: decode, sign, leave out what need not be admitted)
// and what to do with each [Result] (Stages.Done), and the pipeline checks
// one batch on every core ([Store.Prepare]) while it decides the next
// ([Store.Submit]) and the one before commits. Results come in order, each
// once its batch is durable or has failed; a batch decided on top of one
// that failed fails too; a pipeline runs goroutines only while it has batches
// in flight. An [Outcome] says what a caller would otherwise
// read back from the store: whether the version is new to it, whether it
// is its record's top version after the batch, and whether its writer's
// line has a hole before it; [Result.Stored] counts what the batch stored.
//
// # Indexes of current versions
//
// Options.Indexer (package index implements it) is called inside every
// batch that changes a record's readable current version, with the old and
// new one, and writes its own keys (the 'i' table) in the same batch; what
// it returns rides on the EventCurrent of the change. A store is
// reindexed at Open when its index was kept under another layout, or a
// batch was written without the indexer since. A KV may also iterate
// backwards ([ReverseReader], found by type assertion).
//
// # Blob stores (02 §4.9)
//
// [Blobs] is a store of immutable named objects (backends/folder,
// backends/s3); optional abilities (BlobDirs, BlobWatcher, BlobStrays,
// BlobStoreID) are found by type assertion. Segments, mirrors and
// compaction over a Blobs live in package engine/mirror, which uses only
// this package's exported API.
//
// # Guarantees
//
// Admit, AdmitPrepared, Admission.Wait, SetStanding, PutFile and SetMeta
// return only once their batch is committed with sync: a crash after they
// return loses nothing, and a crash before leaves the store as it was (the
// batch is atomic). A batch submitted while the one before it commits is
// decided on that one's writes, and is not written if that one fails. Writes are made
// one at a time; reads run alongside them and see whole batches. All
// methods are safe for concurrent use. Returned versions and byte slices
// belong to the caller.
//
// Errors: [ErrNotFound], [ErrLocked], [ErrClosed], [ErrCorrupt], [ErrLayout] (test with
// errors.Is); refusals are *record.Refusal in [Outcome]. What a person reads
// is one line that names the store once and says what is wrong without
// repeating a sentinel's text: a [*StoreError] ("pebble store db: damaged:
// 000123.sst: …"; [Errorf], [Reason], [Subject]).
package engine
