package peers_test

import (
	"strings"
	"testing"
	"time"
)

// A live session with no file to fetch runs no fetcher goroutine (each
// cost a session ~8 KiB of stack); a version naming a file the store
// lacks starts it again, the file is fetched, and it ends again.
func TestIdleLiveSessionRunsNoFetcher(t *testing.T) {
	a, b := newNode(t, nil), newNode(t, nil)
	g := shared(t, a, b)
	a.put(g.ID, "app.notes", 1)
	live(t, a, b)
	eventually(t, 10*time.Second, "the versions reach b", func() bool { return len(b.export(g.ID)) == len(a.export(g.ID)) })
	eventually(t, 10*time.Second, "no fetcher runs with nothing to fetch", func() bool { return fetchers() == 0 })
	f, _ := a.attach(g.ID, noise(300<<10, 7))
	eventually(t, 20*time.Second, "a file named later reaches b", func() bool { return b.holds(f.Hash) })
	eventually(t, 10*time.Second, "no fetcher runs once it is fetched", func() bool { return fetchers() == 0 })
	// And again: the fetchers started and ended once are started again.
	f2, _ := b.attach(g.ID, noise(100<<10, 8))
	eventually(t, 20*time.Second, "a second file reaches a", func() bool { return a.holds(f2.Hash) })
}

// fetchers is how many goroutines run a session's file fetcher.
func fetchers() int {
	n := 0
	for _, g := range ourGoroutines() {
		if strings.Contains(g, "peers.(*session).fetchFiles") {
			n++
		}
	}
	return n
}
