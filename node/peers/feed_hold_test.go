package peers_test

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/node/peers"
)

// A space's feed takes the store's events one by one only while a live
// session follows it: after a sync that is not live, what is written to
// the space is counted, not taken (and an index built before it is not
// used again); while a live session runs, each id admitted is taken, and
// pushed.
func TestFeedTakesEventsOnlyForLiveSessions(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	for i := range 5 {
		a.put(g.ID, "app.notes", i)
	}
	ca, cb, _ := pair(t, a, b, nil)
	go b.peers.Serve(context.Background(), cb, false, "accept")
	sum, err := a.peers.Sync(context.Background(), ca, []string{g.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Spaces) != 1 || sum.Spaces[0].Code != peers.CodeDone {
		t.Fatalf("spaces: %+v", sum.Spaces)
	}
	taken, passed, ok := peers.FeedCounts(a.peers, g.ID)
	if !ok {
		t.Fatal("a has no feed of the space it synced")
	}
	for i := range 3 {
		a.put(g.ID, "app.notes", 10+i)
	}
	taken2, passed2, _ := peers.FeedCounts(a.peers, g.ID)
	if taken2 != taken || passed2 < passed+3 { // a batch each
		t.Fatalf("no live session: took %d → %d ids, counted %d → %d batches; want none taken, 3 or more counted", taken, taken2, passed, passed2)
	}
	// The order changed since the last index was built: the next
	// session builds one again.
	builds := peers.IndexBuilds(a.peers)
	if _, err := a.peers.Sync(context.Background(), ca, []string{g.ID}); err != nil {
		t.Fatal(err)
	}
	if n := peers.IndexBuilds(a.peers) - builds; n != 1 {
		t.Fatalf("%d indexes built after the space changed, want 1", n)
	}

	serveLive(t, a, b)
	eventually(t, 10*time.Second, "a's session of g is live", func() bool {
		for _, st := range a.peers.Status() {
			for _, s := range st.Sessions {
				if s.Space == g.ID && s.Phase == peers.PhaseLive {
					return true
				}
			}
		}
		return false
	})
	taken, _, _ = peers.FeedCounts(a.peers, g.ID)
	for i := range 3 {
		a.put(g.ID, "app.notes", 20+i)
	}
	eventually(t, 10*time.Second, "the live versions reach b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	if taken2, _, _ = peers.FeedCounts(a.peers, g.ID); taken2 < taken+3 {
		t.Fatalf("a live session followed: took %d → %d ids, want 3 more", taken, taken2)
	}
}
