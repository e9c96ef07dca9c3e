package filedir

import (
	"bytes"
	"os"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/minca-go/minca/canonical"
)

// However many files are kept at once, at most maxDiskCalls of their
// syncs run at the same time (each holds an OS thread while it blocks);
// the others wait without one, and every file is kept.
func TestKeepsSyncAFewAtOnce(t *testing.T) {
	const files = 8 * maxDiskCalls
	root := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		d := Open(root)
		var mu sync.Mutex
		inSync, most := 0, 0
		release := make(chan struct{})
		d.sync = func(f *os.File) error {
			mu.Lock()
			inSync++
			most = max(most, inSync)
			mu.Unlock()
			<-release
			mu.Lock()
			inSync--
			mu.Unlock()
			return f.Sync()
		}
		var wg sync.WaitGroup
		errs := make(chan error, files)
		keep := make([]func(), files)
		for i := range files {
			data := bytes.Repeat([]byte{byte(i)}, 4096)
			ft, err := d.Partial(canonical.IDOf(data))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ft.Write(data); err != nil {
				t.Fatal(err)
			}
			keep[i] = func() { errs <- ft.Keep(canonical.IDOf(data)) }
		}
		for _, k := range keep {
			wg.Go(k)
		}
		// Every keeper is now in a sync or waiting for a slot.
		synctest.Wait()
		mu.Lock()
		got := inSync
		mu.Unlock()
		if got != maxDiskCalls {
			t.Errorf("%d files kept at once: %d syncs running together, want %d", files, got, maxDiskCalls)
		}
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if most > maxDiskCalls {
			t.Errorf("%d syncs ran together, want at most %d", most, maxDiskCalls)
		}
	})
	for i := range files {
		name := canonical.IDOf(bytes.Repeat([]byte{byte(i)}, 4096)).String()
		if b, err := os.ReadFile(root + "/" + name); err != nil || len(b) != 4096 || b[0] != byte(i) {
			t.Fatalf("file %d not kept whole: %d bytes, %v", i, len(b), err)
		}
	}
}
