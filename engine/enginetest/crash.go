package enginetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/minca-go/minca/canonical"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/longtest"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/record"
)

const (
	envChild = "MINCA_ENGINETEST_CHILD"
	envDir   = "MINCA_ENGINETEST_DIR"
)

// childMode runs this process as the child a crash or lock test started,
// and reports whether it did.
func childMode(t *testing.T, openPath func(string) (engine.KV, error)) bool {
	mode, dir := os.Getenv(envChild), os.Getenv(envDir)
	switch mode {
	case "crash":
		crashChild(t, dir, openPath)
	case "lock":
		kv, err := openPath(dir)
		if err != nil {
			fmt.Printf("refused: %v\n", err)
			if errors.Is(err, engine.ErrLocked) {
				fmt.Println("is ErrLocked")
			}
			return true
		}
		kv.Close()
		fmt.Println("opened")
	default:
		return false
	}
	return true
}

// child re-executes this test binary running only the current top-level
// test, as a child in the given mode.
func child(t *testing.T, mode, dir string) *exec.Cmd {
	parts := strings.Split(t.Name(), "/")
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(parts[0])+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envDir+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// crashChild imports versions into the store at dir until it is killed,
// printing each id stored once its batch's admission says it is durable
// ("ack ID"). Batches are pipelined as an import makes them: each is
// decided while the one before it commits.
func crashChild(t *testing.T, dir string, openPath func(string) (engine.KV, error)) {
	kv, err := openPath(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	s, err := engine.Open(kv, &engine.Options{Judge: Judge{}})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	w, err := NewWriter(SpaceID("crash"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	out := bufio.NewWriter(os.Stdout)
	var tops []*record.Version
	// Each batch is decided while the one before it commits, as an import
	// makes them; its ids are acknowledged once it is durable.
	p := engine.NewPipeline(ctx, s, "import", engine.Stages[[]*record.Version]{
		Versions: func(_ context.Context, vs []*record.Version) ([]*record.Version, error) { return vs, nil },
		Done: func(_ []*record.Version, r engine.Result) error {
			if r.Err != nil {
				fmt.Println("admit:", r.Err)
				os.Exit(1)
			}
			for _, o := range r.Outcomes {
				if o.Verdict == engine.Stands {
					fmt.Fprintln(out, "ack", o.ID)
				}
			}
			return out.Flush()
		},
	})
	for n := 0; n < 200_000; {
		var batch []*record.Version
		for range 1 + r.IntN(40) {
			var v *record.Version
			if len(tops) > 0 && r.IntN(3) > 0 {
				i := r.IntN(len(tops))
				v, err = w.Next(tops[i], Body(r, n))
				tops[i] = v
			} else {
				v, err = w.First("app.note", Body(r, n))
				tops = append(tops, v)
			}
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			batch = append(batch, v)
			n++
		}
		if err := p.Add(ctx, batch); err != nil {
			fmt.Println("admit:", err)
			os.Exit(1)
		}
	}
	if err := p.Close(); err != nil {
		fmt.Println("admit:", err)
		os.Exit(1)
	}
	s.Close()
}

// testCrash kills a child importing into one store with SIGKILL at random
// moments; after each kill the store opens, checks clean, and holds every
// version whose import was acknowledged. Six kills; three under -short or
// -race (each kill starts a child process, slow to start under -race);
// sixty with -long.
func testCrash(t *testing.T, openPath func(string) (engine.KV, error)) {
	kills := 6
	if testing.Short() || race.Enabled {
		kills = 3
	}
	if longtest.Enabled() {
		kills = 60
	}
	dir := filepath.Join(t.TempDir(), "store")
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	acked := map[string]bool{}
	for i := range kills {
		cmd := child(t, "crash", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		first, ok := <-lines
		if !ok || !strings.HasPrefix(first, "ack ") {
			cmd.Wait()
			t.Fatalf("run %d: the child said %q", i, first)
		}
		acked[strings.TrimPrefix(first, "ack ")] = true
		deadline := time.After(time.Duration(r.IntN(300)) * time.Millisecond)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				if id, ok := strings.CutPrefix(l, "ack "); ok {
					acked[id] = true
				}
			case <-deadline:
				break read
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			if id, ok := strings.CutPrefix(l, "ack "); ok {
				acked[id] = true
			}
		}
		cmd.Wait()

		kv, err := openPath(dir)
		if err != nil {
			t.Fatalf("run %d: reopen after SIGKILL: %v", i, err)
		}
		s, err := engine.Open(kv, nil)
		if err != nil {
			t.Fatalf("run %d: engine open after SIGKILL: %v", i, err)
		}
		probs, err := s.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("run %d: check: %s", i, p)
		}
		for id := range acked {
			d, err := canonical.ParseID(id) // the child's word, read here
			if err == nil {
				_, _, err = s.Standing(ctx, d)
			}
			if err != nil {
				t.Errorf("run %d: acknowledged %s: %v", i, id, err)
			}
		}
		s.Close()
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills, %d acknowledged versions all held", kills, len(acked))
}

// testLock: a second opener of one store, in this process or another, gets
// a clear error naming the path.
func testLock(t *testing.T, openPath func(string) (engine.KV, error)) {
	dir := filepath.Join(t.TempDir(), "store")
	kv, err := openPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if kv2, err := openPath(dir); err == nil {
		kv2.Close()
		kv.Close()
		t.Fatal("a second open in one process succeeded")
	} else if !errors.Is(err, engine.ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second open in this process: %v (want ErrLocked naming %s)", err, dir)
	}
	out, err := child(t, "lock", dir).Output()
	if err != nil {
		t.Fatalf("lock child: %v (%s)", err, out)
	}
	// It names the process holding it: this one.
	if !strings.Contains(string(out), "is ErrLocked") || !strings.Contains(string(out), dir) || !strings.Contains(string(out), fmt.Sprintf("open in process %d ", os.Getpid())) {
		t.Errorf("another process opening the store said: %s", out)
	}
	kv.Close()
	out, err = child(t, "lock", dir).Output()
	if err != nil || !strings.Contains(string(out), "opened") {
		t.Errorf("after close, another process could not open: %s %v", out, err)
	}
}

// testReopen: what was committed is there after close and open, counters
// included.
func testReopen(t *testing.T, openPath func(string) (engine.KV, error)) {
	dir := filepath.Join(t.TempDir(), "store")
	sp := SpaceID("reopen")
	vs := CorpusVersions(t, sp, CorpusOptions{Versions: 100, Seed: 9})
	open := func() *engine.Store {
		kv, err := openPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := engine.Open(kv, &engine.Options{Judge: Judge{}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	admit(t, s, "p", vs[:50]...)
	before := snapshot(t, s, vs)
	s.Close()
	s = open()
	if got := snapshot(t, s, vs); got != before {
		t.Fatalf("after reopening:\n%s\nbefore:\n%s", got, before)
	}
	admit(t, s, "p", vs[50:]...)
	clean(t, s)
	s.Close()
}
