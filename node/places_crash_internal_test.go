//go:build unix

package node

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// The child process of TestAKillAtEachStepOfAWriteLosesNothing: it opens
// the node in $MINCA_CRASH_DIR, writes from eight goroutines, prints each
// write acknowledged, and kills itself with SIGKILL when a batch reaches
// the step $MINCA_CRASH_AT once enough are acknowledged.
func TestCrashChildWritesUntilKilled(t *testing.T) {
	dir, step := os.Getenv("MINCA_CRASH_DIR"), os.Getenv("MINCA_CRASH_AT")
	if dir == "" {
		t.Skip("the child of TestAKillAtEachStepOfAWriteLosesNothing")
	}
	ctx := context.Background()
	n, err := Open(ctx, &Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spaceID, err := os.ReadFile(filepath.Join(dir, "space.id"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := 0
	n.w.at = func(at string) {
		mu.Lock()
		enough := acked >= 100
		mu.Unlock()
		if at == step && enough {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way: nothing more is done
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				v, err := n.Put(ctx, string(spaceID), "app.crash", canonical.NewObject("g", float64(g), "i", float64(i)), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked++
				fmt.Fprintf(os.Stdout, "acked %s\n", v.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	n.Close()
}

// 02 §4.10 and "nothing acknowledged is lost": a node killed (SIGKILL,
// a real process) under write load between a batch's places sync and its
// store commit, or between its commit and its answers, loses no write it
// acknowledged, and its writer's line stays one: never two versions at one
// place, each version naming the one before it where that is held, and
// the next write after every place the killed process took.
func TestAKillAtEachStepOfAWriteLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, step := range []string{atPlacesSynced, atCommitted} {
		t.Run(strings.ReplaceAll(step, " ", "-"), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			acc, err := identity.GenerateKey()
			if err != nil {
				t.Fatal(err)
			}
			if err := identity.WriteKeyFile(filepath.Join(dir, "account.key"), acc); err != nil {
				t.Fatal(err)
			}
			n, err := Open(ctx, &Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			g, err := n.CreateSpace(ctx, "crash", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "space.id"), []byte(g.ID), 0o600); err != nil {
				t.Fatal(err)
			}

			cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(cctx, os.Args[0], "-test.run=^TestCrashChildWritesUntilKilled$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MINCA_CRASH_DIR="+dir, "MINCA_CRASH_AT="+step)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var acked []string
			var other []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
					acked = append(acked, id)
				} else {
					other = append(other, sc.Text())
				}
			}
			err = cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %q (%v): %s %s", step, err, strings.Join(other, "\n"), stderr.String())
			}

			n, err = Open(ctx, &Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			for _, id := range acked {
				d, err := canonical.ParseID(id)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := n.st.Version(ctx, d); err != nil {
					t.Fatalf("%d acknowledged, and %s is lost after the kill: %v", len(acked), id, err)
				}
			}
			sg, err := n.sess.current()
			if err != nil {
				t.Fatal(err)
			}
			lines, err := n.sess.places.Read()
			if err != nil {
				t.Fatal(err)
			}
			taken := lines[g.ID]["app.crash"] // the last place the killed process took
			// The line as the store holds it: one version a place at most,
			// each naming the one before it when that is held.
			held := map[int64]string{}
			last := int64(-1)
			for p := int64(0); p <= taken; p++ {
				ids, err := n.st.Line(ctx, g.ID, sg.DID(), "app.crash", p)
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) > 1 {
					t.Fatalf("a fork at place %d: %v", p, ids)
				}
				if len(ids) == 1 {
					held[p], last = ids[0], p
				}
			}
			for p, id := range held {
				d, _ := canonical.ParseID(id)
				v, err := n.st.Version(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				if before, ok := held[p-1]; ok && v.Log.Prev != before {
					t.Fatalf("a break: place %d names %s, the version at %d is %s", p, v.Log.Prev, p-1, before)
				}
			}
			switch step {
			case atPlacesSynced:
				// The batch killed before its commit took places the store
				// never got.
				if last >= taken {
					t.Fatalf("the store holds place %d, the places' log %d: the kill did not come between the places' sync and the commit", last, taken)
				}
			case atCommitted:
				// The batch committed and never answered is in the store.
				if int(last+1) <= len(acked) {
					t.Fatalf("the store holds %d places, %d acknowledged: no batch committed unanswered", last+1, len(acked))
				}
			}
			v, err := n.Put(ctx, g.ID, "app.crash", canonical.NewObject("after", true), nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.Log.N != taken+1 {
				t.Fatalf("after the kill the next write is at place %d; the killed process took up to %d", v.Log.N, taken)
			}
			if ids, err := n.st.Line(ctx, g.ID, sg.DID(), "app.crash", v.Log.N); err != nil || len(ids) != 1 {
				t.Fatalf("place %d holds %v (%v)", v.Log.N, ids, err)
			}
			if before, ok := held[taken]; ok && v.Log.Prev != before {
				t.Fatalf("a break: the next write names %s, the version at %d is %s", v.Log.Prev, taken, before)
			}
			t.Logf("killed at %q: %d acknowledged, all held; the store holds places to %d, the log took to %d", step, len(acked), last, taken)
		})
	}
}
