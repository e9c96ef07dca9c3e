package carrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/minca-go/minca/carry"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/atomicfile"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/store"
	"github.com/minca-go/minca/transport"
)

// Files in a carrier's directory. They hold its secrets, so they stay
// there and never go into its store, which may be a bucket.
const (
	keyName    = "carrier.key"
	grantsName = "grants.json"
	lockName   = "carrier.lock"
)

// ErrLocked: another process runs a carrier in this directory.
var ErrLocked = errors.New("minca/carrier: the carrier directory is in use by another process")

// ErrClosed: the carrier is closed.
var ErrClosed = errors.New("minca/carrier: closed")

// Options configure [Open].
type Options struct {
	// Dir is the carrier's directory: its key, the carry grants it
	// accepted, its lock and, by default, its store. Required.
	Dir string
	// Store is its store's URL (package store: pebble:, sqlite:, memory:,
	// folder:, s3://), made where missing. Default pebble:Dir/store.
	Store string
	// StoreOptions are how the store is opened (S3 credentials, CacheDir,
	// Adopt); the carrier sets Judge and Create. Default nil: store's
	// defaults, but CacheDir, the index of a folder: or s3:// store, is
	// Dir/cache.
	StoreOptions *store.Options
	// FlushEvery is how often what a folder: or s3:// store took in is
	// made durable in its blob store (store.Store.Flush), besides at
	// Close. Default 5 s; at least 10 ms.
	FlushEvery time.Duration
	// Logger receives the carrier's logs. Default: discarded.
	Logger *slog.Logger
}

func (o *Options) resolve() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Dir == "" {
		return r, errors.New("minca/carrier: Options.Dir is required")
	}
	if r.Store == "" {
		r.Store = "pebble:" + filepath.Join(r.Dir, "store")
	}
	switch {
	case r.FlushEvery == 0:
		r.FlushEvery = 5 * time.Second
	case r.FlushEvery < 10*time.Millisecond:
		return r, fmt.Errorf("minca/carrier: Options.FlushEvery %v is less than 10 ms", r.FlushEvery)
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Carrier is a running carrier (06 §4.1). See the package doc.
type Carrier struct {
	o     Options
	lock  *flock.Flock
	key   *identity.PrivateKey
	sto   *store.Store
	st    *engine.Store
	judge *judge.PrivateJudge
	notes *identity.Checker
	hub   *hub
	// matched are the versions matched against wakes lately.
	matched *seenIDs

	// scan makes reading carry spaces one at a time.
	scan sync.Mutex

	mu       sync.Mutex
	closed   bool
	accounts map[string]*account // by carry space
	changed  chan struct{}       // closed and replaced when the spaces carried change

	stop   context.CancelFunc
	wg     sync.WaitGroup
	closer sync.Once
}

// account is what the carrier holds for one account: its grant, its carry
// space and that space's key, and what the carry space says.
type account struct {
	grant  *connect.CarryGrant
	g      *space.Genesis
	ring   *seal.Keyring
	passes map[string]*carry.Pass // by space
	wakes  []carry.Wake
}

// Open runs a carrier in o.Dir (made 0700 if missing), locked to this
// process until Close: its key (made on first use), its store, and the
// carry spaces it was given, read again from the store.
func Open(ctx context.Context, opts *Options) (*Carrier, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("minca/carrier: directory: %w", err)
	}
	c := &Carrier{o: o, lock: flock.New(filepath.Join(o.Dir, lockName)), notes: &identity.Checker{},
		accounts: map[string]*account{}, changed: make(chan struct{}), hub: newHub(), matched: newSeenIDs(watchBuffer)}
	ok, err := c.lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("minca/carrier: locking %s: %w", o.Dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrLocked, o.Dir)
	}
	fail := func(err error) (*Carrier, error) {
		if c.stop != nil {
			c.stop()
			c.wg.Wait()
		}
		if c.sto != nil {
			c.sto.Close()
		}
		c.lock.Unlock()
		return nil, err
	}
	keyPath := filepath.Join(o.Dir, keyName)
	c.key, err = identity.ReadKeyFile(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		if c.key, err = identity.GenerateKey(); err == nil {
			err = identity.WriteKeyFile(keyPath, c.key)
		}
	}
	if err != nil {
		return fail(fmt.Errorf("minca/carrier: its key: %w", err))
	}
	c.judge = judge.NewPrivateJudge(c.notes, rings{c})
	var so store.Options
	if o.StoreOptions != nil {
		so = *o.StoreOptions
	}
	so.Judge, so.Create, so.ReadOnly = c.judge, true, false
	so.Waiting = store.PeersBounded(so.Waiting)
	if so.CacheDir == "" {
		so.CacheDir = filepath.Join(o.Dir, "cache") // a folder: or s3:// store's index
	}
	if so.Logger == nil {
		so.Logger = o.Logger
	}
	if c.sto, err = store.Open(ctx, o.Store, &so); err != nil {
		return fail(err)
	}
	c.st = c.sto.Engine()
	c.judge.Source = c.st
	bg, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	sub := c.st.Subscribe("", watchBuffer)
	c.wg.Go(func() { c.watch(bg, sub) })
	grants, err := c.readGrants()
	if err != nil {
		return fail(err)
	}
	for _, g := range grants {
		if err := c.take(ctx, g); err != nil {
			return fail(err)
		}
	}
	if store.IsBlobURL(o.Store) {
		c.wg.Go(func() { c.flushLoop(bg) })
	}
	return c, nil
}

// Close stops the carrier: a folder: or s3:// store is flushed, every
// subscription ends, and the store closes.
func (c *Carrier) Close() error {
	var err error
	c.closer.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		if c.stop != nil {
			c.stop()
		}
		c.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		errs := []error{c.Flush(ctx)}
		c.hub.close()
		errs = append(errs, c.sto.Close(), c.lock.Unlock())
		err = errors.Join(errs...)
	})
	return err
}

// Flush makes what the store took in durable in its blob store, for a
// folder: or s3:// store; nothing for a local one.
func (c *Carrier) Flush(ctx context.Context) error {
	if !store.IsBlobURL(c.o.Store) {
		return nil
	}
	if err := c.sto.Flush(ctx); err != nil {
		return fmt.Errorf("minca/carrier: flushing its store: %w", err)
	}
	return nil
}

func (c *Carrier) flushLoop(ctx context.Context) {
	t := time.NewTicker(c.o.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.Flush(ctx); err != nil && ctx.Err() == nil {
				c.o.Logger.Warn("flushing the store", "err", err)
			}
		}
	}
}

// DID is the carrier's key: what peers and keepers lists name (06 §4.1).
func (c *Carrier) DID() string { return c.key.DID() }

// Self is how the carrier shows itself on the wire: its key and no note,
// so peers see from: null (06 §4.1).
func (c *Carrier) Self() transport.Self { return transport.Carrier(c.key) }

// Store is the carrier's version store. Write to it only through Admit.
func (c *Carrier) Store() *engine.Store { return c.st }

// Accept takes a carry grant (06 §4.3): checked as a carrier MUST
// (connect.CheckCarryGrant, reading the invite as a view-only invite), its
// carry space kept and read, and the grant remembered in the carrier's
// directory. A grant for a carry space it already holds replaces it.
func (c *Carrier) Accept(ctx context.Context, g *connect.CarryGrant) error {
	if err := connect.CheckCarryGrant(g, readInvite); err != nil {
		return err
	}
	if err := c.take(ctx, g); err != nil {
		return err
	}
	return c.writeGrants()
}

// readInvite reads a carry grant's invite for connect.CheckCarryGrant.
func readInvite(text string) (connect.CarryInvite, error) {
	g, k, err := carry.ParseViewInvite(text)
	if err != nil {
		return connect.CarryInvite{}, err
	}
	return connect.CarryInvite{Space: g.ID, Genesis: g, HasKey: k != nil}, nil
}

// take holds a checked grant's carry space and reads it.
func (c *Carrier) take(ctx context.Context, g *connect.CarryGrant) error {
	gen, k, err := carry.ParseViewInvite(g.Invite)
	if err != nil {
		return err
	}
	ring, err := seal.NewKeyring(gen.ID, gen.EncryptionKeyID)
	if err != nil {
		return err
	}
	ring.Offer(k)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.accounts[gen.ID] = &account{grant: g, g: gen, ring: ring, passes: map[string]*carry.Pass{}}
	c.mu.Unlock()
	if err := judge.AddGenesis(ctx, c.st, gen); err != nil {
		return err
	}
	c.hub.send(Event{Type: EventCarrying, Account: g.DID, Space: gen.ID})
	return c.read(ctx, gen.ID)
}

// storedGrant is a grant as the carrier keeps it in grants.json.
type storedGrant = json.RawMessage

func (c *Carrier) readGrants() ([]*connect.CarryGrant, error) {
	b, err := os.ReadFile(filepath.Join(c.o.Dir, grantsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("minca/carrier: its grants: %w", err)
	}
	var raw []storedGrant
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", engine.ErrCorrupt, grantsName, err)
	}
	out := make([]*connect.CarryGrant, 0, len(raw))
	for i, r := range raw {
		g, err := connect.ParseCarryGrant(r)
		if err == nil {
			err = connect.CheckCarryGrant(g, readInvite)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d]: %v", engine.ErrCorrupt, grantsName, i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// writeGrants keeps the grants of the accounts carried, atomically, 0600.
func (c *Carrier) writeGrants() error {
	c.mu.Lock()
	ids := make([]string, 0, len(c.accounts))
	for id := range c.accounts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	raw := make([]storedGrant, 0, len(ids))
	for _, id := range ids {
		b, err := canonical.Marshal(c.accounts[id].grant.Value())
		if err != nil {
			c.mu.Unlock()
			return err
		}
		raw = append(raw, b)
	}
	c.mu.Unlock()
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(c.o.Dir, grantsName), b, 0o600); err != nil {
		return fmt.Errorf("minca/carrier: writing its grants: %w", err)
	}
	return nil
}

// rings gives the judge the carrier's keys: its carry spaces' only.
type rings struct{ c *Carrier }

func (r rings) Keyring(spaceID string) *seal.Keyring {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if a, ok := r.c.accounts[spaceID]; ok {
		return a.ring
	}
	return nil
}
