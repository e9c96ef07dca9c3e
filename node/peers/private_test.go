package peers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// live connects a (opener) and b and serves both until the test ends.
func live(t *testing.T, a, b *tnode) {
	t.Helper()
	ca, cb, _ := pair(t, a, b, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.peers.Serve(ctx, cb, false, "accept")
	go a.peers.Serve(ctx, ca, true, "dial")
}

// standing is what n holds of a space: each version's id and standing.
func standing(t *testing.T, n *tnode, spaceID string) []string {
	t.Helper()
	var out []string
	for raw, err := range n.Store().ExportJSON(context.Background(), spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		v, err := record.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		verdict, _, err := n.Store().Standing(context.Background(), enginetest.Digest(v))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %v", v.ID, verdict))
	}
	slices.Sort(out)
	return out
}

// opens reports the text n opens of version id in its store.
func opens(n *tnode, id string) (string, error) {
	v, err := n.Store().Version(context.Background(), mustID(id))
	if err != nil {
		return "", err
	}
	o, err := n.Open(context.Background(), v)
	if err != nil {
		return "", err
	}
	if o == nil {
		return "", errors.New("not sealed")
	}
	return fmt.Sprint(o.Body), nil
}

// A private space over sync sessions (issue 15's tests with a private
// space; docs/private-spaces.md): two members and a keeper without the
// key, connected in a line (member — keeper — member) so everything
// between the members passes through the keyless one. Members read each
// other's records; the keeper converges with them on held state and
// standing and opens nothing; a member removed (the key changes) cannot
// open what is written after; a member added later takes the key from
// the boxes sync brings.
func TestPrivateSpaceOverSync(t *testing.T) {
	ctx := context.Background()
	a, b, c, k := newNode(t, nil), newNode(t, nil), newNode(t, nil), newNode(t, nil)
	g, err := a.CreateSpace(ctx, "family", &node.CreateOptions{Private: true,
		Roles: map[string][]space.Grant{"writer": {{Cmd: "/record"}}}})
	if err != nil {
		t.Fatal(err)
	}
	// The keeper is named before b joins: the invite carries it, so b
	// knows it may sync with k.
	ksig, err := k.Signer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteKeepers(ctx, g.ID, []space.Keeper{{DID: ksig.DID(), Name: "keeper"}}); err != nil {
		t.Fatal(err)
	}
	// a assigns b as well as inviting it: b's own sys.assign by the
	// invite reaches nobody by sync until someone lets b read the space
	// (docs/sync.md §7.2), and only members read a private one.
	if _, err := a.Assign(ctx, g.ID, b.Account(), []string{"writer"}); err != nil {
		t.Fatal(err)
	}
	inv, err := a.Invite(ctx, g.ID, []string{"writer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.JoinInvite(ctx, inv); err != nil {
		t.Fatal(err)
	}
	// c is invited now and joins later, after the key has changed: its
	// invite carries K₀ only.
	if _, err := a.Assign(ctx, g.ID, c.Account(), []string{"writer"}); err != nil {
		t.Fatal(err)
	}
	invC, err := a.Invite(ctx, g.ID, []string{"writer"})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	va, err := a.Put(ctx, g.ID, "app.notes", map[string]any{"text": "from a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := b.Put(ctx, g.ID, "app.notes", map[string]any{"text": "from b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	live(t, a, k)
	live(t, b, k)
	converged := func(ns ...*tnode) func() bool {
		return func() bool {
			want := standing(t, ns[0], g.ID)
			for _, n := range ns[1:] {
				if !slices.Equal(standing(t, n, g.ID), want) {
					return false
				}
			}
			return true
		}
	}
	eventually(t, 20*time.Second, "the members and the keeper converge", converged(a, b, k))
	for _, tc := range []struct {
		n    *tnode
		id   string
		text string
	}{{a, vb.ID, "from b"}, {b, va.ID, "from a"}} {
		if got, err := opens(tc.n, tc.id); err != nil || !strings.Contains(got, tc.text) {
			t.Fatalf("a member opens %q: %q %v", tc.text, got, err)
		}
	}
	if _, err := opens(k, va.ID); !errors.Is(err, node.ErrNoKey) {
		t.Fatalf("the keeper opens a member's record: %v", err)
	}
	t.Logf("converged on %d versions", len(standing(t, a, g.ID)))

	// b is removed: the key changes; what a writes after, b holds and
	// cannot open.
	if _, err := a.Remove(ctx, g.ID, b.Account()); err != nil {
		t.Fatal(err)
	}
	after, err := a.Put(ctx, g.ID, "app.notes", map[string]any{"text": "after b left"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the keeper takes what a wrote after the removal", func() bool {
		_, err := k.Store().Version(ctx, enginetest.Digest(after))
		return err == nil
	})
	if got, err := opens(a, after.ID); err != nil || !strings.Contains(got, "after b left") {
		t.Fatalf("a opens its own record: %q %v", got, err)
	}
	if keyOf(t, after) == keyOf(t, va) {
		t.Fatal("the removal changed no key")
	}
	// b may not read the space any more; given the version anyway, it
	// holds no key that opens it.
	kv, err := k.Store().Version(ctx, enginetest.Digest(after))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store().Admit(ctx, "test", []*record.Version{kv}); err != nil {
		t.Fatal(err)
	}
	if got, err := opens(b, after.ID); !errors.Is(err, node.ErrNoKey) {
		t.Fatalf("the removed member opens what was written after: %q %v", got, err)
	}

	// c joins now with K₀, syncs through the keeper alone, and takes the
	// new key from the box a writes once c's member key reaches it.
	if _, err := c.JoinInvite(ctx, invC); err != nil {
		t.Fatal(err)
	}
	live(t, c, k)
	eventually(t, 20*time.Second, "the member who joined after the key change opens what was written after it", func() bool {
		got, err := opens(c, after.ID)
		return err == nil && strings.Contains(got, "after b left")
	})
}

// keyOf is the keyId a version's body is sealed under.
func keyOf(t *testing.T, v *record.Version) string {
	t.Helper()
	s, err := seal.ParseSealed(v.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s.KeyID
}
