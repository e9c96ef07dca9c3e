package node_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/store"
)

func TestOpenOneProcessPerDirectory(t *testing.T) {
	tn := newNode(t, nil)
	_, err := node.Open(context.Background(), tn.options(nil))
	if !errors.Is(err, node.ErrLocked) {
		t.Fatalf("a second node in the same directory: %v, want ErrLocked", err)
	}
	tn.reopen(nil) // closing released the lock
}

func TestOpenClosesWhenItsContextEnds(t *testing.T) {
	tn := newNode(t, nil)
	tn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	n, err := node.Open(ctx, tn.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n2, err := node.Open(context.Background(), tn.options(nil))
		if err == nil {
			n2.Close()
			break
		}
		if !errors.Is(err, node.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("the node did not close when its context ended: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := n.Put(context.Background(), "x", "app.a", map[string]any{}, nil); !errors.Is(err, node.ErrClosed) {
		t.Fatalf("a write after the context ended: %v, want ErrClosed", err)
	}
}

// A context that ends while the node opens (a SIGTERM during `serve`'s
// start, after the store is open) closes the node at once, on the
// context's goroutine, racing nothing Open still writes; under -race a
// data race fails this test (1 `serve` in 9 in the README's walkthrough).
func TestOpenWithAContextEndingMeanwhileCloses(t *testing.T) {
	tn := newNode(t, nil)
	tn.Close()
	n, err := node.Open(&endsWhenWatched{Context: context.Background()}, tn.options(nil))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := n.Put(context.Background(), "x", "app.a", map[string]any{}, nil)
		if errors.Is(err, node.ErrClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a write to a node whose context ended while it opened: %v, want ErrClosed", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.Close()
}

// endsWhenWatched is a context that ends the moment something waits on
// it: Open only checks Err while it opens the store and the rest, and
// waits on Done once, for its stop, so the context ends right then.
type endsWhenWatched struct {
	context.Context
	watched atomic.Bool
}

func (c *endsWhenWatched) Done() <-chan struct{} {
	c.watched.Store(true)
	d := make(chan struct{})
	close(d)
	return d
}

func (c *endsWhenWatched) Err() error {
	if c.watched.Load() {
		return context.Canceled
	}
	return nil
}

func TestOpenWithoutAccountKeyNeedsANote(t *testing.T) {
	dir := t.TempDir()
	o := &node.Options{Dir: dir, Store: "memory:"}
	_, err := node.Open(context.Background(), o)
	if !errors.Is(err, node.ErrNoNote) {
		t.Fatalf("no account key and no note: %v, want ErrNoNote", err)
	}
	// The session key was made: the account issues a note to it.
	sk, err := identity.ReadKeyFile(dir + "/session.key")
	if err != nil {
		t.Fatal(err)
	}
	acc, _ := identity.GenerateKey()
	note, err := identity.IssueNote(acc, identity.NoteOptions{Aud: sk.DID(), Cmd: "/record"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := canonical.Marshal(note.Object())
	if err := os.WriteFile(dir+"/session.note", b, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Account() != acc.DID() || n.HasAccountKey() || n.Registry() != "" {
		t.Fatalf("a node with a note acts for %s (account key %v, registry %q)", n.Account(), n.HasAccountKey(), n.Registry())
	}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "given", Founders: []string{acc.DID()}, CreatedAt: "2026-01-01T00:00:00Z", Nonce: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	v, err := n.Put(context.Background(), g.ID, "app.note", map[string]any{"by": "note"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Author != sk.DID() {
		t.Fatalf("signed by %s, not the session key %s", v.Author, sk.DID())
	}
	sps, err := n.Spaces(context.Background())
	if err != nil || len(sps) != 1 || sps[0].ID != g.ID {
		t.Fatalf("a node without the account key keeps %v (%v), want only the space it was given", sps, err)
	}
}

// 06 §1.2: "the delegation is renewed before it expires".
func TestTheDelegationIsRenewedBeforeItExpires(t *testing.T) {
	tn := newNode(t, &node.Options{SessionLife: 24 * time.Hour, RenewCheck: 5 * time.Millisecond})
	g := tn.space("renew", nil)
	notes := map[string]bool{}
	for h := 0; h < 96; h++ {
		v, err := tn.Put(context.Background(), g.ID, "app.note", map[string]any{"h": h}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := identity.DecodeNote(v.Proof)
		if err != nil {
			t.Fatal(err)
		}
		now := tn.clock.Now()
		if !n.HasExp || !now.Before(time.Unix(n.Exp, 0)) {
			t.Fatalf("at %v a version carries a note that has run out (exp %v)", now, time.Unix(n.Exp, 0))
		}
		if n.Iss != tn.account.DID() || n.Sub != tn.account.DID() || n.Cmd != "/" || n.Aud != v.Author {
			t.Fatalf("the session note is {iss %s, sub %s, cmd %s, aud %s}, want the account, cmd / and the session key", n.Iss, n.Sub, n.Cmd, n.Aud)
		}
		if time.Unix(n.Exp, 0).Sub(now) > 24*time.Hour {
			t.Fatalf("the note runs for more than SessionLife: exp %v at %v", time.Unix(n.Exp, 0), now)
		}
		notes[n.Nonce] = true
		tn.clock.Add(time.Hour)
	}
	if len(notes) < 4 {
		t.Fatalf("4 days of writes used %d notes, want one a day at least", len(notes))
	}
	// With nothing written, the node renews on its own.
	_, before, _ := tn.Session()
	tn.clock.Add(23 * time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, now, _ := tn.Session()
		if now.Nonce != before.Nonce {
			if !tn.clock.Now().Before(time.Unix(now.Exp, 0)) {
				t.Fatal("renewed to a note that has run out")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the note was not renewed while nothing was written")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// 06 §1.2, 02 §9.3: "records outlive the session that wrote them".
func TestRecordsOutliveTheSessionThatWroteThem(t *testing.T) {
	tn := newNode(t, &node.Options{SessionLife: time.Hour})
	g := tn.space("outlive", nil)
	v, err := tn.Put(context.Background(), g.ID, "app.note", map[string]any{"text": "kept"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Long after the note ran out, and after the session signed out, the
	// record stands, here and at a peer that receives it only now.
	tn.clock.Add(30 * 24 * time.Hour)
	tn.reopen(&node.Options{SessionLife: time.Hour})
	cur, err := tn.Store().Current(context.Background(), g.ID, v.Key)
	if err != nil || cur.ID != v.ID {
		t.Fatalf("after the note ran out the record reads %v, %v", cur, err)
	}
	peer := newNode(t, nil)
	if err := peer.JoinGenesis(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	var history []*record.Version
	for x, err := range tn.Store().Export(context.Background(), g.ID) {
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, x)
	}
	outs, err := peer.Store().Admit(context.Background(), "peer", history)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict != engine.Stands {
			t.Fatalf("a month later a peer judges %s %v (%v)", o.ID, o.Verdict, o.Refusal)
		}
	}
}

func TestTheRootKeyNeverSignsRecords(t *testing.T) {
	tn := newNode(t, nil)
	g := tn.space("root", nil)
	if _, err := tn.Put(context.Background(), g.ID, "app.note", map[string]any{"a": 1}, nil); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []string{g.ID, tn.Registry()} {
		n := 0
		for v, err := range tn.Store().Export(context.Background(), sp) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if v.Author == tn.account.DID() || v.Proof == nil {
				t.Fatalf("%s in %s is signed by the account key itself", v.ID, sp)
			}
		}
		if n == 0 {
			t.Fatalf("nothing written in %s", sp)
		}
	}
}

// The node directory records the store the node runs on, its path made
// absolute: opened again without naming one, from anywhere, the node finds
// the same store. A folder or a bucket is a mirror, not the node's store.
func TestTheNodeDirectoryRemembersItsStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "sqlite:node.sqlite", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	g, err := n.CreateSpace(ctx, "remembered", nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	t.Chdir(t.TempDir())
	if n, err = node.Open(ctx, &node.Options{Dir: dir, Account: acc}); err != nil {
		t.Fatal(err)
	}
	_, ok, err := judge.GenesisOf(ctx, n.Store(), g.ID)
	n.Close()
	if err != nil || !ok {
		t.Fatalf("opened again, the node does not hold the space it made: %v", err)
	}
	if _, err := node.Open(ctx, &node.Options{Dir: dir, Store: "folder:" + t.TempDir(), Account: acc}); !errors.Is(err, store.ErrBadURL) {
		t.Fatalf("a folder as the node's store: %v, want store.ErrBadURL", err)
	}
}
