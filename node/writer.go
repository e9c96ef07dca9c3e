package node

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// writer makes the node's writes one batch at a time (02 §4.10: "writes by
// one key in one space are made one at a time"). It takes the writes
// waiting and, on its own goroutine, derives each version, takes its log
// place under the places' lock, previews it with the judge, and appends
// the places to their log (build), starting their sync at once; then the
// store's admission pipeline (engine.Pipeline) signs the batch and checks
// it on every core (sign) and decides it through the judge, beside that
// sync, and commits it once the places are synced and only then
// (Stages.Before), each stage while the one before works on the next
// batch; the answers wait for its synced commit (answer). So a batch's
// path from build to answer holds one fsync after the work, the store's,
// not two one after the other. Many writers
// waiting share one fsync of the places and one of the store: at most
// two batches are under way, and the next gathers the writers the last
// one answered (gather), so 64 writers make batches of about 32, not
// four of 16 each paying a batch's fixed cost.
type writer struct {
	n     *Node
	q     chan *writeReq
	admit *engine.Pipeline[*staged]
	// slots holds a token for each batch built and not yet answered: at
	// most inFlight.
	slots chan struct{}
	wait  time.Duration // gatherWait

	mu     sync.RWMutex // guards closed against sends on a closed q
	closed bool
	done   chan struct{}

	// The versions signed and not yet known stored — this batch's and
	// those still committing — by space and key, and by id: the next
	// version and the judge's preview read them as if stored.
	pmu  sync.Mutex
	pend map[string]*record.Version
	byID map[canonical.ID]*record.Version

	// at, when set (tests), is told as a batch passes each step a crash
	// may come at: atPlacesSynced, atCommitted.
	at func(step string)
}

// The steps of a batch writer.at is told of.
const (
	atPlacesSynced = "places synced" // its places are durable; its commit has not begun
	atCommitted    = "committed"     // its commit is durable; nothing is answered
)

func startWriter(n *Node) *writer {
	w := &writer{n: n, q: make(chan *writeReq, 4*n.o.MaxBatch), done: make(chan struct{}),
		slots: make(chan struct{}, inFlight), wait: gatherWait, pend: map[string]*record.Version{}, byID: map[canonical.ID]*record.Version{}}
	w.admit = engine.NewPipeline(n.ctx, n.st, "local", engine.Stages[*staged]{
		Versions:  w.sign,
		ReadAhead: func(st *staged) *engine.Ahead { return <-st.ahead },
		// The places are written down before anything signed at them is
		// in the store, whence it leaves (02 §4.10).
		Before:  w.placesSynced,
		Decided: func(st *staged) { close(st.decided) },
		Done:    w.answer,
	})
	go w.run()
	return w
}

// do queues a write and waits for its result. Once queued the write is
// made whatever ctx does, so its result is never a guess.
func (w *writer) do(ctx context.Context, r *writeReq) (*record.Version, error) {
	r.done = make(chan writeResult, 1)
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil, ErrClosed
	}
	select {
	case w.q <- r:
	case <-ctx.Done():
		w.mu.RUnlock()
		return nil, ctx.Err()
	}
	w.mu.RUnlock()
	res := <-r.done
	return res.v, res.err
}

// stop refuses new writes, makes those queued, and returns when done.
func (w *writer) stop() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.q)
	}
	w.mu.Unlock()
	<-w.done
}

func (w *writer) run() {
	defer close(w.done)
	defer w.admit.Close() // every batch built is answered
	var held *writeReq
	last := 1
	for {
		r := held
		if r == nil {
			var ok bool
			if r, ok = <-w.q; !ok {
				return
			}
		}
		w.slots <- struct{}{} // the writes answered meanwhile come back to the queue
		var batch []*writeReq
		batch, held = w.gather(r, last)
		last = len(batch)
		st := w.build(batch)
		if st == nil {
			<-w.slots
			continue
		}
		// The pipeline never stops (answer returns nil) and is closed
		// only here: Add fails for nothing but a bug, answered all the same.
		if err := w.admit.Add(context.Background(), st); err != nil {
			w.answer(st, engine.Result{Err: err})
			continue
		}
		if r.access {
			<-st.decided // the next batch's seen names it
		}
	}
}

// gather makes a batch that starts with r: the writes queued, and, while
// fewer than want are, those that come within w.wait. want is how
// many the batch before took: its writers, answered, are likely writing
// again, and one batch of them all shares one pass through the stages
// (two fsyncs, a commit, a look-ahead in the store) that a batch of the
// first few to come back would pay again for the rest. An access change
// is written alone (the next write's seen names it): one queued behind
// the batch is returned as held, to start the next.
func (w *writer) gather(r *writeReq, want int) (batch []*writeReq, held *writeReq) {
	batch = []*writeReq{r}
	if r.access {
		return batch, nil
	}
	var wait <-chan time.Time
	for len(batch) < w.n.o.MaxBatch {
		var x *writeReq
		var ok bool
		select {
		case x, ok = <-w.q:
		default:
			if len(batch) >= want {
				return batch, nil
			}
			if wait == nil {
				t := time.NewTimer(w.wait)
				defer t.Stop()
				wait = t.C
			}
			select {
			case x, ok = <-w.q:
			case <-wait:
				return batch, nil
			}
		}
		if !ok {
			return batch, nil
		}
		if x.access {
			return batch, x
		}
		batch = append(batch, x)
	}
	return batch, nil
}

// inFlight is how many batches the writer has built and not yet
// answered: one committing (waiting on its fsync) while the next is
// signed and decided. More would share the writers among more, smaller
// batches, each paying a batch's fixed cost again; the store's pipeline
// would take up to three.
const inFlight = 2

// gatherWait is how long a batch waits for the writers of the batch
// before to come back: long enough for a goroutine answered to make its
// next write on a busy machine, short against a batch's fsyncs.
const gatherWait = time.Millisecond

// staged is a batch whose places are appended, to sync, sign and store.
type staged struct {
	batch   []*writeReq
	ps      []*record.Presigned
	idx     []int
	decided chan struct{}
	// synced tells how the sync of the batch's places went: they are
	// written down before the batch commits, whence its versions leave.
	// The sync starts as soon as the batch is built and runs while the
	// batch is signed and decided, so neither the cores nor the batch wait
	// on it.
	synced chan error
	// vs is the batch signed.
	vs []*record.Version
	// prov are the batch's versions as previewed (not signed: their ids
	// are fixed), and ahead what storing them will look up in the store,
	// read beside the places' sync (engine.Store.ReadAhead).
	prov []*record.Version
	// fresh tells which of prov are the first of a record whose key was
	// drawn at random for them (02 §4.1): the store has no head to read.
	fresh []bool
	ahead chan *engine.Ahead
}

// build makes one batch ready to sign: each version derived, its log
// place taken and its judgement previewed, the places appended. The
// writes refused are answered; nil when none is left.
func (w *writer) build(batch []*writeReq) *staged {
	ctx := w.n.ctx
	answered := make([]bool, len(batch))
	reply := func(i int, v *record.Version, err error) {
		answered[i] = true
		batch[i].done <- writeResult{v, err}
	}
	signer, err := w.n.sess.current()
	if err != nil {
		for i := range batch {
			reply(i, nil, err)
		}
		return nil
	}
	root := signer.Root()
	st := &staged{batch: batch, decided: make(chan struct{})}
	heads := map[string][]string{} // each space's access heads, read once a batch
	free := map[[2]string]int64{}  // lines the store holds nothing of from this place on
	syncPlaces, err := w.n.sess.places.UpdateDeferred(func(t *PlaceTxn) error {
		for i, r := range batch {
			draft, u, fresh, err := w.drafted(ctx, r, signer, heads)
			if err != nil {
				reply(i, nil, err)
				continue
			}
			place := t.Peek(r.space, draft.Collection)
			if place, err = w.freeFor(ctx, r.space, signer.DID(), draft.Collection, place, free); err != nil {
				return err
			}
			if place.N == 0 {
				place.Prev = ""
			}
			var pre *record.Presigned
			if u != nil {
				pre, err = u.At(place)
			} else {
				draft.Log = place
				pre, err = draft.Presign(signer)
			}
			if err != nil {
				reply(i, nil, fmt.Errorf("minca/node: signing: %w", err))
				continue
			}
			v, err := pre.Provisional()
			if err != nil {
				reply(i, nil, fmt.Errorf("minca/node: signing: %w", err))
				continue
			}
			d, err := w.n.pj.Preview(overlay{ctx, w.n.st, w}, v, engine.Checked{Root: root})
			if err != nil {
				return err
			}
			if werr := previewed(d); werr != nil {
				reply(i, nil, werr) // the place is given back: nothing left
				continue
			}
			t.Take(r.space, draft.Collection, place.N, v.ID)
			w.hold(v)
			st.prov = append(st.prov, v)
			st.fresh = append(st.fresh, fresh)
			st.ps = append(st.ps, pre)
			st.idx = append(st.idx, i)
		}
		return nil
	})
	if err != nil {
		w.release(st.ps)
		for i := range batch {
			if !answered[i] {
				reply(i, nil, err)
			}
		}
		return nil
	}
	if len(st.ps) == 0 {
		return nil
	}
	st.synced = make(chan error, 1)
	go func() { st.synced <- syncPlaces() }()
	// The store's reads for the batch, while the disk syncs its places:
	// nothing else is done meanwhile but the batch before's work. A read
	// that fails is made again as the batch is decided.
	st.ahead = make(chan *engine.Ahead, 1)
	go func() {
		a, _ := w.n.st.ReadAheadFresh(st.prov, st.fresh)
		st.ahead <- a
	}()
	return st
}

// drafted is a write's draft, made before it queued, on the goroutine
// that asked for it (writer.early): all of it but its log place — the
// rules, key, tags and record top read, the body hashed, the members
// built — so that the places' lock, which every write of the batch waits
// behind, is held for the place, the signed part and the preview alone.
type drafted struct {
	d       *record.Draft
	u       *record.Unplaced
	signer  *identity.SessionSigner
	readTop bool // the draft follows its record's top (not a fresh key)
}

// early drafts a write on its caller's goroutine before it queues (a
// plain write in a space this node holds no keys of: a private space's
// are drafted under the lock, as before). Nothing it finds is answered
// here: a write it cannot draft is drafted again under the lock, where
// its error is given.
func (w *writer) early(ctx context.Context, r *writeReq) {
	if r.access || r.sys || r.del || r.sealWith != nil {
		return
	}
	if ring, err := w.n.keys.load(r.space); err != nil || ring != nil {
		return
	}
	signer, err := w.n.sess.current()
	if err != nil {
		return
	}
	d, readTop, err := w.draft(ctx, r, signer.Root())
	if err != nil {
		return
	}
	u, err := d.Unplaced(signer)
	if err != nil {
		return
	}
	r.early = &drafted{d: d, u: u, signer: signer, readTop: readTop}
}

// drafted gives r's draft as it is made under the places' lock: the
// early one when what it was made from is still so — the same session
// signer, the space's access heads the ones it names as seen (an access
// change is written alone, and the next batch is built once it is
// decided), and, when it follows a record's top, that top — else a new
// one (u nil then: the caller presigns the draft). heads caches each
// space's heads for the batch. fresh: the draft is the first version of a
// record whose key was drawn at random for it.
func (w *writer) drafted(ctx context.Context, r *writeReq, signer *identity.SessionSigner, heads map[string][]string) (d *record.Draft, u *record.Unplaced, fresh bool, err error) {
	if e := r.early; e != nil && e.signer == signer {
		r.early = nil // used once
		hs, ok := heads[r.space]
		if !ok {
			if _, err := w.n.judge.WithHistory(ctx, r.space, func(h *space.History) error {
				hs = h.Heads()
				return nil
			}); err != nil {
				return nil, nil, false, err
			}
			heads[r.space] = hs
		}
		same := slices.Equal(hs, e.d.Seen)
		if same && e.readTop {
			top, err := w.top(ctx, r.space, e.d.Key)
			if err != nil {
				return nil, nil, false, err
			}
			same = (top == nil) == (e.d.After == nil) && (top == nil || top.ID == e.d.After.ID)
		}
		if same {
			return e.d, e.u, !e.readTop, nil
		}
	}
	d, readTop, err := w.draft(ctx, r, signer.Root())
	return d, nil, !readTop, err
}

// sign signs a staged batch on every core — the pipeline's checking
// stage, while the writer builds the next batch and the one before is
// decided. Its places are being synced meanwhile: the batch is signed and
// decided beside that sync, and committed only once it is done
// (Stages.Before), so no version signed at a place leaves before the place
// is written down (02 §4.10). A crash before then loses the batch whole,
// signatures included: nothing signed at those places was ever seen.
func (w *writer) sign(_ context.Context, st *staged) ([]*record.Version, error) {
	vs, err := signAll(st.ps)
	if err != nil {
		return nil, err
	}
	w.n.judge.Base.Vouch(vs)
	st.vs = vs
	return vs, nil
}

// placesSynced waits for a batch's places to be synced: once decided, the
// batch commits only then.
func (w *writer) placesSynced(st *staged) error {
	err := <-st.synced
	if err == nil && w.at != nil {
		w.at(atPlacesSynced)
	}
	return err
}

// answer answers each write of a batch once it is committed and synced,
// or failed.
func (w *writer) answer(st *staged, r engine.Result) error {
	defer func() { <-w.slots }()
	if r.Err == nil && w.at != nil {
		w.at(atCommitted)
	}
	w.release(st.ps)
	for k, i := range st.idx {
		req := st.batch[i]
		if r.Err != nil {
			req.done <- writeResult{nil, fmt.Errorf("minca/node: storing: %w", r.Err)}
			continue
		}
		req.done <- outcome(st.vs[k], r.Outcomes[k])
	}
	return nil
}

// outcome is a stored version's answer.
func outcome(v *record.Version, o engine.Outcome) writeResult {
	switch o.Verdict {
	case engine.Stands:
		return writeResult{v, nil}
	case engine.Withdrawn:
		return writeResult{nil, &WriteError{Code: CodeNotStanding, Message: "stored, but withdrawn at once: " + refusalText(o.Refusal)}}
	case engine.Later:
		return writeResult{nil, writeErr(CodeWaits, "", "held aside by the judge: what it names is not held")}
	}
	return writeResult{nil, fromRefusal(o.Refusal)}
}

// hold makes a signed version readable to the next versions' derivation
// and preview until it is stored.
func (w *writer) hold(v *record.Version) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	w.pend[v.Space+"\n"+v.Key] = v
	d, _ := v.Digest()
	w.byID[d] = v
}

// release forgets versions once stored (or not): the store answers for
// them from then on.
func (w *writer) release(ps []*record.Presigned) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	for _, p := range ps {
		if v, ok := w.byID[p.Digest()]; ok {
			delete(w.byID, p.Digest())
			if w.pend[v.Space+"\n"+v.Key] == v {
				delete(w.pend, v.Space+"\n"+v.Key)
			}
		}
	}
}

func (w *writer) held(id canonical.ID) (*record.Version, bool) {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	v, ok := w.byID[id]
	return v, ok
}

// signAll signs presigned versions on GOMAXPROCS goroutines.
func signAll(ps []*record.Presigned) ([]*record.Version, error) {
	vs := make([]*record.Version, len(ps))
	errs := make([]error, len(ps))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(ps); i = int(next.Add(1) - 1) {
				vs[i], errs[i] = ps[i].Sign()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("minca/node: signing: %w", err)
	}
	return vs, nil
}

func refusalText(r *record.Refusal) string {
	if r == nil {
		return "a change it had not seen took it away"
	}
	return r.Error()
}

// previewed turns the judge's preview into why a version may not leave.
func previewed(d engine.Decision) error {
	switch d.Verdict {
	case engine.Stands:
		return nil
	case engine.Withdrawn:
		return &WriteError{Code: CodeNotStanding, Message: "the judge would store it withdrawn at once: " + refusalText(d.Refusal)}
	case engine.Later:
		return writeErr(CodeWaits, "", fmt.Sprintf("the judge would hold it aside: %v is not held", d.Waits))
	}
	if d.Refusal == nil {
		return writeErr("refused", "", "refused by the judge")
	}
	return fromRefusal(d.Refusal)
}

// freeFor is free for a batch's places: a line whose places from n on the
// store was found to hold none of, in the batch, is not looked up again —
// the batch gives n, n+1, … — so a batch looks up each line once, not
// each place (the store's own writes of the line are this writer's, whose
// places come after). free maps each line to that n.
func (w *writer) freeFor(ctx context.Context, spaceID, author, coll string, p record.Log, free map[[2]string]int64) (record.Log, error) {
	name := [2]string{spaceID, coll}
	if n, ok := free[name]; ok && p.N >= n {
		return p, nil
	}
	held, err := w.n.st.LineHeldFrom(ctx, spaceID, author, coll, p.N)
	if err != nil {
		return p, err
	}
	if !held {
		free[name] = p.N
		return p, nil
	}
	return w.free(ctx, spaceID, author, coll, p)
}

// free moves a place past any the store already holds a version of this
// key at: a places file restored from an older copy, or lines written
// with this key elsewhere and brought by a mirror, never give a place
// twice (02 §4.10). The place given is normally free, one look-up; when it
// is not, the line was written past it, with holes where versions never
// left their writer, so it looks ahead in growing steps for the last place
// taken.
func (w *writer) free(ctx context.Context, spaceID, author, coll string, p record.Log) (record.Log, error) {
	taken := func(n int64) ([]string, error) { return w.n.st.Line(ctx, spaceID, author, coll, n) }
	ids, err := taken(p.N)
	if err != nil || len(ids) == 0 {
		return p, err
	}
	last, lastIDs := p.N, ids
	for step := int64(1); step <= 1<<20; {
		ids, err := taken(last + step)
		if err != nil {
			return p, err
		}
		if len(ids) > 0 {
			last, lastIDs, step = last+step, ids, 1 // look ahead again from here
			continue
		}
		step *= 2
	}
	for {
		ids, err := taken(last + 1)
		if err != nil {
			return p, err
		}
		if len(ids) == 0 {
			return record.Log{N: last + 1, Prev: lastIDs[0]}, nil
		}
		last, lastIDs = last+1, ids
	}
}

// overlay is the store as a judge reads it, with the versions signed
// earlier in the batch as if stored.
type overlay struct {
	ctx context.Context
	st  *engine.Store
	w   *writer
}

var (
	_ engine.HeldReader = overlay{}
	_ engine.Lister     = overlay{}
)

func (o overlay) Held(id canonical.ID) (*record.Version, bool, error) {
	if v, ok := o.w.held(id); ok {
		return v, true, nil
	}
	v, err := o.st.Version(o.ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (o overlay) Standing(id canonical.ID) (engine.Verdict, bool, error) {
	if _, ok := o.w.held(id); ok {
		return engine.Stands, true, nil
	}
	s, _, err := o.st.Standing(o.ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Refused, false, nil
	}
	return s, err == nil, err
}

// ByRoot lists nothing: a preview judges one version, and re-judging
// others (what ByRoot serves) happens only when a change is stored.
func (o overlay) ByRoot(space, root string, fn func(id canonical.ID) bool) error { return nil }

func (o overlay) HeldAsIs(id canonical.ID) (*record.Version, bool, error) { return o.Held(id) }
