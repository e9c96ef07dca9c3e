package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/index"
	"github.com/minca-go/minca/internal/lockholder"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/store"
)

// ErrLocked: another process runs a node in this directory (one process
// per node directory). The error Open returns is a [*LockedError].
var ErrLocked = errors.New("minca/node: the node directory is in use by another process")

// LockedError is a node directory in use by another process: which, when
// the lock file says and that process still runs.
type LockedError struct {
	Dir    string
	Holder lockholder.Holder // PID 0: not known
}

func (e *LockedError) Error() string {
	if e.Holder.PID == 0 {
		return fmt.Sprintf("minca/node: the node directory %s is in use by another process", e.Dir)
	}
	return fmt.Sprintf("minca/node: the node directory %s is in use by %s", e.Dir, e.Holder)
}

// Unwrap makes it an [ErrLocked], and gives the holder when known.
func (e *LockedError) Unwrap() []error {
	if e.Holder.PID == 0 {
		return []error{ErrLocked}
	}
	return []error{ErrLocked, e.Holder}
}

// ErrClosed: the node is closed.
var ErrClosed = errors.New("minca/node: closed")

// Node is a Minca node for one account (DESIGN.md, The node and its local
// API): its store, its session key and note, the spaces it keeps, the
// write path, events and mirrors. Its methods are safe for concurrent use.
type Node struct {
	o     Options
	lock  *flock.Flock
	sto   *store.Store
	st    *engine.Store // sto's engine
	ix    *index.Index  // nil with Options.Querier
	q     Querier
	judge *judge.SpaceJudge
	// pj is the judge the store stores through: judge with private
	// spaces' checks, opening bodies with keys (docs/private-spaces.md §9).
	pj        *judge.PrivateJudge
	keys      *keyStore
	reindex   chan struct{} // reindexSoon's requests
	refill    chan struct{} // refillSoon's requests (carry_fill.go)
	privacyOf sync.Map      // space id → whether it is private (privacy)
	notes     *identity.Checker
	sess      *session
	account   *identity.PrivateKey
	// registry is the account registry's id, registryG its genesis and
	// registryKey its key; "" and nil without the account key.
	registry    string
	registryG   *space.Genesis
	registryKey *seal.Key
	w           *writer
	ev          *events
	// carryMu makes adding, removing and refilling carriers one at a
	// time (06 §4.2: a removal waits for a refill under way).
	carryMu sync.Mutex
	// proveMu makes proving forks one call at a time, so a fork is
	// proven once (ProveForks).
	proveMu sync.Mutex
	mirrors []*mirror.Mirror
	// wants are the files readers asked for and the node lacks (files.go).
	wants fileWants

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
	stopMu    sync.Mutex
	stopCtx   func() bool
}

// Open runs a node in o.Dir (made 0700 if missing), locked to this process
// until Close. When ctx ends the node closes itself; Close waits for that.
func Open(ctx context.Context, opts *Options) (*Node, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("minca/node: node directory: %w", err)
	}
	lockPath := filepath.Join(o.Dir, lockName)
	n := &Node{o: o, lock: flock.New(lockPath), notes: &identity.Checker{}}
	ok, err := n.lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("minca/node: locking %s: %w", o.Dir, err)
	}
	if !ok {
		h, _ := lockholder.Of(lockPath)
		return nil, &LockedError{Dir: o.Dir, Holder: h}
	}
	// Who holds it, for the message of the next one to try.
	_ = lockholder.Record(lockPath)
	fail := func(err error) (*Node, error) {
		n.shutdown()
		return nil, err
	}
	switch {
	case o.Account != nil:
		n.account = o.Account
	case o.AccountKey != "":
		if n.account, err = identity.ReadKeyFile(o.AccountKey); err != nil {
			return fail(fmt.Errorf("minca/node: account key: %w", err))
		}
	}
	if n.account != nil {
		if n.registryG, n.registryKey, err = RegistrySpace(n.account); err != nil {
			return fail(err)
		}
		n.registry = n.registryG.ID
	}
	if n.sess, err = openSession(o, n.account); err != nil {
		return fail(err)
	}
	var scalar func() []byte
	if acct := n.account; acct != nil {
		scalar = acct.Scalar
	}
	n.keys = newKeyStore(o.Dir, scalar)
	n.pj = judge.NewPrivateJudge(n.notes, n.keys)
	n.judge = n.pj.SpaceJudge
	if n.o.Store, err = storeURL(o); err != nil {
		return fail(err)
	}
	var indexer engine.Indexer
	n.q = o.Querier
	if n.q == nil {
		var io index.Options
		if o.Index != nil {
			io = *o.Index
		}
		io.Opener = opener{n.keys}
		if n.ix, err = index.New(&io); err != nil {
			return fail(fmt.Errorf("minca/node: Options.Index: %w", err))
		}
		indexer, n.q = n.ix, indexQuerier{n.ix}
	}
	if n.sto, err = store.Open(ctx, n.o.Store, n.storeOptions(indexer)); err != nil {
		return fail(err)
	}
	n.st = n.sto.Engine()
	n.judge.Source = n.st
	if n.ix != nil {
		n.ix.Attach(n.st)
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.reindex, n.refill = make(chan struct{}, 1), make(chan struct{}, 1)
	if n.ev, err = openEvents(n); err != nil {
		return fail(err)
	}
	n.w = startWriter(n)
	if n.account != nil {
		if err := n.keepRegistry(ctx); err != nil {
			return fail(err)
		}
	}
	if err := n.startMirrors(ctx); err != nil {
		return fail(err)
	}
	n.wg.Add(5)
	go n.tidyFilesLoop()
	go n.renewLoop()
	go n.reindexLoop()
	go n.keyLoop()
	go n.proveLoop()
	if n.account != nil {
		n.wg.Add(1)
		go n.carryLoop()
	}
	// When ctx is already done, AfterFunc runs Close at once on its own
	// goroutine, and Close reads stopCtx: the lock orders the two.
	n.stopMu.Lock()
	n.stopCtx = context.AfterFunc(ctx, func() { n.Close() })
	n.stopMu.Unlock()
	return n, nil
}

// renewLoop renews the session note before it runs out, also while
// nothing is written (06 §1.2).
func (n *Node) renewLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.o.RenewCheck)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			if _, err := n.sess.renewIfDue(); err != nil {
				n.o.Logger.Error("renewing the session note", "err", err)
			}
		}
	}
}

// Close drains the writes in flight, stops the mirrors (each exports what
// it has not yet), ends every subscription and closes the store. It is
// safe to call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.shutdown() })
	return n.closeErr
}

func (n *Node) shutdown() error {
	var errs []error
	n.stopMu.Lock()
	stop := n.stopCtx
	n.stopMu.Unlock()
	if stop != nil {
		stop()
	}
	if n.w != nil {
		n.w.stop()
	}
	if n.cancel != nil {
		n.cancel()
	}
	n.wg.Wait()
	for _, m := range n.mirrors {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := m.Export(ctx); err != nil {
			errs = append(errs, fmt.Errorf("minca/node: mirror export on close: %w", err))
		}
		cancel()
		m.Close()
	}
	if n.ev != nil {
		errs = append(errs, n.ev.close())
	}
	if n.sess != nil {
		errs = append(errs, n.sess.places.Close())
	}
	if n.ix != nil {
		n.ix.Close() // its live queries end
	}
	if n.sto != nil {
		errs = append(errs, n.sto.Close())
	}
	if n.lock.Locked() {
		_ = lockholder.Clear(n.lock.Path())
	}
	errs = append(errs, n.lock.Unlock())
	return errors.Join(errs...)
}

// Dir is the node directory.
func (n *Node) Dir() string { return n.o.Dir }

// Store is the node's version store. Writes to it bypass the node's write
// path; read through it freely.
func (n *Node) Store() *engine.Store { return n.st }

// Judge is the node's judge, the one every version it stores goes through.
func (n *Node) Judge() *judge.SpaceJudge { return n.judge }

// Account is the account the node acts for (06 §1.1).
func (n *Node) Account() string { return n.sess.root() }

// HasAccountKey reports whether the node holds the account key.
func (n *Node) HasAccountKey() bool { return n.account != nil }

// Session is the session key's did:key and the note it signs under now.
func (n *Node) Session() (string, *identity.Note, error) {
	sg, err := n.sess.current()
	if err != nil {
		return "", nil, err
	}
	return sg.DID(), sg.Note(), nil
}

func (n *Node) now() time.Time { return n.o.Now() }
