package node_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/folder/foldertest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
)

// syncedLog is a log both devices' mirrors write to.
type syncedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A second device added to an account by its key file (what `minca init
// --account-key FILE` does) and sharing the first device's data folder
// through a sync service (the simulator: deliveries late, partial, as
// placeholders, duplicated) follows the whole account: the account's
// spaces arrive, with their geneses, the public records read and the
// private ones open, the mirror says on its log what it took in, and what
// the second device writes reaches the first.
func TestSecondDeviceByAccountKeyThroughASharedFolder(t *testing.T) {
	ctx := context.Background()
	roots := []string{"/home/ada/Dropbox/minca", "/home/ada-laptop/iCloud/minca"}
	sim := foldertest.New(foldertest.Options{
		Seed: 22,
		Devices: []foldertest.Device{
			{Name: "desktop", Root: roots[0], Style: foldertest.Dropbox},
			{Name: "laptop", Root: roots[1], Style: foldertest.ICloud},
		},
		Partial: 0.1, Placeholder: 0.1, Duplicate: 0.1,
	})
	dirA, dirB := t.TempDir(), t.TempDir()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dirA, node.AccountKeyName)
	if err := identity.WriteKeyFile(keyFile, k); err != nil {
		t.Fatal(err)
	}
	open := func(dir string) *node.Node {
		n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "pebble:" + filepath.Join(dir, "store")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a := open(dirA)
	lists, err := a.CreateSpace(ctx, "Lists", nil)
	if err != nil {
		t.Fatal(err)
	}
	diary, err := a.CreateSpace(ctx, "Diary", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	milk, err := a.Put(ctx, lists.ID, "app.todo", obj("text", "Buy milk"), nil)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := a.Put(ctx, diary.ID, "app.entry", obj("text", "Dear diary"), nil)
	if err != nil {
		t.Fatal(err)
	}

	// The second device: the account's key file, kept in its directory.
	if _, err := node.KeepAccountKey(dirB, keyFile); err != nil {
		t.Fatal(err)
	}
	b := open(dirB)
	if !b.HasAccountKey() || b.Account() != k.DID() || b.Registry() != a.Registry() {
		t.Fatalf("the second device: account key %v, account %s, registry %s", b.HasAccountKey(), b.Account(), b.Registry())
	}

	log := &syncedLog{}
	mirrors := make([]*mirror.Mirror, 2)
	for i, n := range []*node.Node{a, b} {
		fb, err := folder.Open(roots[i], &folder.Options{FS: sim.FS, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := mirror.New(n.Store(), fb, &mirror.Options{Geneses: judge.MirrorGeneses(n.Store()), Reread: time.Microsecond,
			Logger: slog.New(slog.NewTextHandler(log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		mirrors[i] = m
	}
	// The devices' mirrors run between the service's steps, until what is
	// wanted holds.
	until := func(what string, ok func() bool) {
		t.Helper()
		for step := 0; step < 300; step++ {
			for _, m := range mirrors {
				if err := m.Round(ctx); err != nil && !errors.Is(err, mirror.ErrBadSegment) {
					t.Fatal(err)
				}
			}
			if ok() {
				return
			}
			if step == 200 {
				sim.Settle() // every delivery whole from here
			}
			sim.Step()
		}
		t.Fatalf("%s: not after 300 steps of the sync service\n%s", what, log)
	}
	reads := func(n *node.Node, sp, key, text string) bool {
		cur, err := n.Get(ctx, sp, key)
		if err != nil {
			return false
		}
		shown, err := cur.JSON()
		return err == nil && bytes.Contains(shown, []byte(text))
	}
	until("the second device reads the first's records", func() bool {
		sps, err := b.Spaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, s := range sps {
			ids = append(ids, s.ID)
		}
		return slices.Contains(ids, lists.ID) && slices.Contains(ids, diary.ID) &&
			reads(b, lists.ID, milk.Key, `"Buy milk"`) && reads(b, diary.ID, entry.Key, `"opened":{"body":{"text":"Dear diary"}}`)
	})
	if !strings.Contains(log.String(), "mirror: took in") {
		t.Errorf("the mirrors said nothing of what they took in:\n%s", log)
	}
	// And back: the second device writes in both spaces; the first reads.
	eggs, err := b.Put(ctx, lists.ID, "app.todo", obj("text", "Buy eggs"), nil)
	if err != nil {
		t.Fatal(err)
	}
	more, err := b.Put(ctx, diary.ID, "app.entry", obj("text", "Dear diary, again"), nil)
	if err != nil {
		t.Fatal(err)
	}
	until("the first device reads the second's records", func() bool {
		return reads(a, lists.ID, eggs.Key, `"Buy eggs"`) && reads(a, diary.ID, more.Key, `"Dear diary, again"`)
	})
	for _, n := range []*node.Node{a, b} {
		if st, err := n.Store().Stats(ctx); err != nil || st.Waiting != 0 {
			t.Errorf("versions left waiting: %+v %v", st, err)
		}
	}
}
