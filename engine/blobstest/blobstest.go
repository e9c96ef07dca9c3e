// Package blobstest is the conformance suite every [engine.Blobs] backend
// runs from its own tests (backends/folder on the OS and in memory,
// backends/s3 on gofakes3 behind faults): the contract of engine/blobs.go —
// visible whole or not at all, never overwritten, listed in byte order from
// a bound, names outside the grammar refused.
package blobstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/minca-go/minca/engine"
)

// Run runs the suite. open returns a new, empty store.
func Run(t *testing.T, open func(t *testing.T) engine.Blobs) {
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, open(t)) })
	t.Run("NeverOverwrites", func(t *testing.T) { testNeverOverwrites(t, open(t)) })
	t.Run("ListOrderAndBounds", func(t *testing.T) { testList(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
	t.Run("Names", func(t *testing.T) { testNames(t, open(t)) })
	t.Run("ConcurrentPuts", func(t *testing.T) { testConcurrent(t, open(t)) })
	t.Run("Dirs", func(t *testing.T) { testDirs(t, open(t)) })
}

var ctx = context.Background()

func name(w, i int) string { return fmt.Sprintf("segments/w%d/%012d-x.seg", w, i) }

func body(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1+i*37%500) }

func testPutGet(t *testing.T, b engine.Blobs) {
	for i := 1; i <= 5; i++ {
		if err := b.Put(ctx, name(0, i), body(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(ctx, "segments/w0/empty", nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		got, err := b.Get(ctx, name(0, i))
		if err != nil || !bytes.Equal(got, body(i)) {
			t.Fatalf("get %s: %d bytes, %v", name(0, i), len(got), err)
		}
	}
	if got, err := b.Get(ctx, "segments/w0/empty"); err != nil || len(got) != 0 {
		t.Fatalf("empty object: %q %v", got, err)
	}
	_, err := b.Get(ctx, name(0, 99))
	if !errors.Is(err, engine.ErrBlobNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	var be *engine.BlobError
	if !errors.As(err, &be) || be.Name != name(0, 99) {
		t.Fatalf("a not-found error keeps the name: %v", err)
	}
}

func testNeverOverwrites(t *testing.T, b engine.Blobs) {
	if err := b.Put(ctx, name(0, 1), []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, name(0, 1), []byte("second")); !errors.Is(err, engine.ErrBlobExists) {
		t.Fatalf("second put: %v", err)
	}
	if got, _ := b.Get(ctx, name(0, 1)); string(got) != "first" {
		t.Fatalf("overwritten: %q", got)
	}
}

func listAll(t *testing.T, b engine.Blobs, prefix, after string, limit int) []string {
	t.Helper()
	var out []string
	for {
		page, err := b.List(ctx, prefix, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page {
			out = append(out, x.Name)
			after = x.Name
		}
		if limit <= 0 || len(page) < limit {
			return out
		}
	}
}

func testList(t *testing.T, b engine.Blobs) {
	var want []string
	for w := 0; w < 3; w++ {
		for i := 1; i <= 9; i++ {
			if err := b.Put(ctx, name(w, i), body(i)); err != nil {
				t.Fatal(err)
			}
			want = append(want, name(w, i))
		}
	}
	sort.Strings(want)
	for _, limit := range []int{0, 1, 4, 27, 1000} {
		got := listAll(t, b, "segments/", "", limit)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d: %v", limit, got)
		}
	}
	if got := listAll(t, b, "segments/w1/", name(1, 4), 2); fmt.Sprint(got) != fmt.Sprint(want[13:18]) {
		t.Fatalf("w1 after 4: %v", got)
	}
	if got := listAll(t, b, "segments/w1/000000000002", "", 0); len(got) != 1 || got[0] != name(1, 2) {
		t.Fatalf("a prefix inside a name: %v", got)
	}
	if got := listAll(t, b, "segments/w9/", "", 0); len(got) != 0 {
		t.Fatalf("an empty prefix: %v", got)
	}
	page, err := b.List(ctx, "segments/w2/", "", 0)
	if err != nil || len(page) != 9 || page[0].Size != int64(len(body(1))) {
		t.Fatalf("sizes: %v %v", page, err)
	}
}

func testDelete(t *testing.T, b engine.Blobs) {
	for i := 1; i <= 3; i++ {
		if err := b.Put(ctx, name(0, i), body(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, name(0, 2)); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, name(0, 2)); err != nil {
		t.Fatalf("deleting what is gone: %v", err)
	}
	if got := listAll(t, b, "segments/", "", 0); fmt.Sprint(got) != fmt.Sprint([]string{name(0, 1), name(0, 3)}) {
		t.Fatalf("after delete: %v", got)
	}
	if _, err := b.Get(ctx, name(0, 2)); !errors.Is(err, engine.ErrBlobNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := b.Put(ctx, name(0, 2), []byte("again")); err != nil {
		t.Fatalf("put after delete: %v", err)
	}
}

func testNames(t *testing.T, b engine.Blobs) {
	for _, bad := range []string{"", "Segments/x", "a//b", "a/../b", ".hidden", "a/b.", "a b", "con", "x/nul.seg", "ü"} {
		if err := b.Put(ctx, bad, []byte("x")); !errors.Is(err, engine.ErrBlobName) {
			t.Errorf("put %q: %v", bad, err)
		}
		if err := b.Delete(ctx, bad); !errors.Is(err, engine.ErrBlobName) {
			t.Errorf("delete %q: %v", bad, err)
		}
	}
}

// testConcurrent: many puts of one name at once leave exactly one
// content, and every caller but those who wrote it is told it exists.
func testConcurrent(t *testing.T, b engine.Blobs) {
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.Put(ctx, name(0, 1), body(i+1))
		}()
	}
	wg.Wait()
	got, err := b.Get(ctx, name(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, engine.ErrBlobExists):
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if ok == 0 {
		t.Fatal("no put succeeded")
	}
	found := false
	for i := range errs {
		found = found || (errs[i] == nil && bytes.Equal(got, body(i+1)))
	}
	if !found {
		t.Fatal("the object holds what no successful put wrote")
	}
}

func testDirs(t *testing.T, b engine.Blobs) {
	d, ok := b.(engine.BlobDirs)
	if !ok {
		t.Skip("no BlobDirs")
	}
	for _, w := range []int{2, 0, 1} {
		if err := b.Put(ctx, name(w, 1), body(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(ctx, "segments/readme", []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := d.Dirs(ctx, "segments/")
	if err != nil || fmt.Sprint(got) != "[w0 w1 w2]" {
		t.Fatalf("dirs: %v %v", got, err)
	}
}
