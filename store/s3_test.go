package store_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/store"
)

// s3Server is gofakes3 on loopback, with bucket "bkt", that counts the
// requests that write and can be made to stall.
type s3Server struct {
	srv    *httptest.Server
	be     *s3mem.Backend
	writes atomic.Int64 // PUT, POST and DELETE requests
	stall  atomic.Bool  // every request hangs until the client gives up
}

func newS3(t *testing.T) *s3Server {
	t.Helper()
	f := &s3Server{be: s3mem.New()}
	if err := f.be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	next := gofakes3.New(f.be).Server()
	quit := make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.stall.Load() {
			select {
			case <-r.Context().Done():
			case <-quit:
			}
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			f.writes.Add(1)
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(quit) }) // runs first: stalled handlers return
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return f
}

func (f *s3Server) url(prefix string) string {
	return "s3://bkt/" + prefix + "?region=us-east-1&path-style=true&endpoint=" + f.srv.URL
}

// objects counts the objects in the bucket.
func (f *s3Server) objects(t *testing.T) int {
	t.Helper()
	l, err := f.be.ListBucket("bkt", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Contents)
}

func s3Opts(cache string, f func(*store.Options)) *store.Options {
	return judged(cache, func(o *store.Options) {
		o.S3 = &s3.Options{Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), MaxAttempts: 2}
		if f != nil {
			f(o)
		}
	})
}

// s3://: made only when asked, exported by Flush alone, read by another
// device.
func TestS3Store(t *testing.T) {
	f := newS3(t)
	dir := t.TempDir()
	url := f.url("p")
	vs := versions(t, "s3", 50, 8)

	_, err := store.Open(ctx, url, s3Opts(filepath.Join(dir, "c1"), nil))
	wantNoStore(t, err, url)
	if n := f.objects(t); n != 0 {
		t.Fatalf("a must-exist open left %d objects", n)
	}
	missing(t, filepath.Join(dir, "c1"))

	st := open(t, url, s3Opts(filepath.Join(dir, "c1"), func(o *store.Options) { o.Create = true }))
	admit(t, st, vs)
	marker := f.objects(t)
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f.objects(t) <= marker {
		t.Fatal("Flush wrote no segment")
	}
	st.Close()
	other := open(t, url, s3Opts(filepath.Join(dir, "c2"), nil))
	defer other.Close()
	if n := holds(t, other, vs); n != len(vs) {
		t.Fatalf("another device reads %d of %d versions", n, len(vs))
	}
}

// Opened read-only, an S3 store makes no request that writes: read-only
// credentials can restore. (The probe for conditional writes waits for the
// first write.)
func TestS3ReadOnlyWritesNothing(t *testing.T) {
	f := newS3(t)
	dir := t.TempDir()
	url := f.url("p")
	vs := versions(t, "s3 ro", 20, 9)
	st := open(t, url, s3Opts(filepath.Join(dir, "c1"), func(o *store.Options) { o.Create = true }))
	admit(t, st, vs)
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	w := f.writes.Load()
	ro := open(t, url, s3Opts(filepath.Join(dir, "c2"), func(o *store.Options) { o.ReadOnly = true }))
	defer ro.Close()
	if n := holds(t, ro, vs); n != len(vs) {
		t.Fatalf("read-only: %d of %d versions", n, len(vs))
	}
	if got := f.writes.Load() - w; got != 0 {
		t.Fatalf("a read-only open made %d requests that write", got)
	}
}

// Close does no network work: with the server gone it returns at once,
// and what was not flushed is not in the bucket.
func TestS3CloseOffline(t *testing.T) {
	f := newS3(t)
	st := open(t, f.url("p"), s3Opts(t.TempDir(), func(o *store.Options) { o.Create = true }))
	admit(t, st, versions(t, "s3 close", 20, 10))
	n := f.objects(t)
	f.stall.Store(true)
	start := time.Now()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %v", d)
	}
	if f.objects(t) != n {
		t.Fatal("Close exported")
	}
}

// Ctrl-C while an S3 request hangs, in an open and in a Flush: each
// returns promptly with ctx's error.
func TestS3Cancel(t *testing.T) {
	f := newS3(t)
	url := f.url("p")
	st := open(t, url, s3Opts(t.TempDir(), func(o *store.Options) { o.Create = true }))
	defer st.Close()
	admit(t, st, versions(t, "s3 cancel", 20, 11))

	f.stall.Store(true)
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err := st.Flush(cctx)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("flush cancelled while S3 hangs: %v after %v", err, time.Since(start))
	}

	for _, create := range []bool{false, true} {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(200*time.Millisecond, cancel)
		start = time.Now()
		_, err = store.Open(cctx, url, s3Opts(t.TempDir(), func(o *store.Options) { o.Create = create }))
		if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
			t.Fatalf("open (create %v) cancelled while S3 hangs: %v after %v", create, err, time.Since(start))
		}
		if errors.Is(err, engine.ErrNoStore) {
			t.Fatalf("an interrupted open reported no store: %v", err)
		}
	}
	f.stall.Store(false)
	if err := st.Flush(ctx); err != nil {
		t.Fatalf("flush after the interruption: %v", err)
	}
}

// Case 7 through an s3:// store: its index, kept by the prefix's location,
// remembers the store there; the prefix emptied, an open that would create
// it is refused before anything is written, naming the id it held; Adopt
// sets it up anew and exports everything there.
func TestS3StoreEmptiedRefused(t *testing.T) {
	f := newS3(t)
	cache := t.TempDir()
	url := f.url("p")
	vs := versions(t, "s3 emptied", 20, 16)
	st := open(t, url, s3Opts(cache, func(o *store.Options) { o.Create = true }))
	admit(t, st, vs)
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	was := st.Blobs().(engine.BlobStoreID).StoreID()
	st.Close()
	l, err := f.be.ListBucket("bkt", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range l.Contents {
		if _, err := f.be.DeleteObject("bkt", o.Key); err != nil {
			t.Fatal(err)
		}
	}
	w := f.writes.Load()
	_, err = store.Open(ctx, url, s3Opts(cache, func(o *store.Options) { o.Create = true }))
	var ce *mirror.StoreChangedError
	if !errors.As(err, &ce) || ce.Remembered != was || ce.Found != "" || !strings.Contains(err.Error(), was) {
		t.Fatalf("create on an emptied prefix: %v", err)
	}
	if n := f.writes.Load() - w; n != 0 || f.objects(t) != 0 {
		t.Fatalf("a refused open made %d requests that write", n)
	}
	st = open(t, url, s3Opts(cache, func(o *store.Options) { o.Create, o.Adopt = true, true }))
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	other := open(t, url, s3Opts(t.TempDir(), nil))
	defer other.Close()
	if n := holds(t, other, vs); n != len(vs) {
		t.Fatalf("adopted: another device reads %d of %d versions", n, len(vs))
	}
}
