package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/blobstest"
)

func name(i int) string { return fmt.Sprintf("segments/w%d/%012d-x.seg", i%3, i) }

func TestParseURL(t *testing.T) {
	l, err := ParseURL("s3://bkt/minca/alice?endpoint=http://127.0.0.1:9000&region=eu-west-1&path-style=true&checksum=when_required&timeout=10s&connect-timeout=1m")
	if err != nil {
		t.Fatal(err)
	}
	if l.Bucket != "bkt" || l.Prefix != "minca/alice/" || l.Endpoint != "http://127.0.0.1:9000" || l.Region != "eu-west-1" || !l.PathStyle || l.Checksum != "when_required" ||
		l.Timeout != 10*time.Second || l.ConnectTimeout != time.Minute {
		t.Fatalf("%+v", l)
	}
	if l2, err := ParseURL(l.String()); err != nil || l2 != l {
		t.Fatalf("round trip: %+v %v", l2, err)
	}
	for _, bad := range []string{"s3:///x", "http://bkt/x", "s3://bkt/Upper", "s3://bkt/x?bogus=1", "s3://bkt/x?checksum=always", "s3://bkt/x?endpoint=ftp://h", "s3://bkt/x?path-style=maybe", "s3://bkt/x?timeout=0s", "s3://bkt/x?timeout=-1s", "s3://bkt/x?connect-timeout=soon"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// Locate names the objects, not how they are reached: one string for
// every URL of one bucket and prefix on one server, another for another.
func TestLocate(t *testing.T) {
	same := []string{
		"s3://bkt/a/b?endpoint=http://127.0.0.1:9000&region=eu-west-1&path-style=true",
		"s3://bkt/a/b/?endpoint=HTTP://127.0.0.1:9000/&checksum=when_required&timeout=5s&connect-timeout=1m",
		"s3://bkt//a/b?endpoint=http://key:secret@127.0.0.1:9000",
	}
	want := "s3://bkt/a/b?endpoint=http://127.0.0.1:9000"
	for _, u := range same {
		l, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Locate(); got != want {
			t.Errorf("%s: Locate %q, want %q", u, got, want)
		}
		if strings.Contains(l.Locate(), "secret") {
			t.Errorf("%s: Locate holds the credentials", u)
		}
	}
	seen := map[string]string{}
	for _, u := range []string{
		"s3://bkt/a/b?endpoint=http://127.0.0.1:9000",
		"s3://bkt/a/c?endpoint=http://127.0.0.1:9000",
		"s3://bkt/a?endpoint=http://127.0.0.1:9000",
		"s3://other/a/b?endpoint=http://127.0.0.1:9000",
		"s3://bkt/a/b?endpoint=http://127.0.0.1:9001",
		"s3://bkt/a/b?endpoint=https://127.0.0.1:9000",
		"s3://bkt/a/b?endpoint=http://[::1]:9000",
		"s3://bkt/a/b?endpoint=http://[::1]",
		"s3://bkt/a/b?endpoint=http://minio.local/s3",
		"s3://bkt/a/b",
	} {
		l, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[l.Locate()]; ok {
			t.Errorf("%s and %s: one Locate %q", u, other, l.Locate())
		}
		seen[l.Locate()] = u
		if _, err := ParseURL(l.Locate()); err != nil {
			t.Errorf("%s: Locate %q is not a URL ParseURL takes: %v", u, l.Locate(), err)
		}
	}
	for u, want := range map[string]string{
		"s3://bkt/a?endpoint=https://s3.example.com:443/": "s3://bkt/a?endpoint=https://s3.example.com",
		"s3://bkt?region=us-west-2":                       "s3://bkt/",
	} {
		l, _ := ParseURL(u)
		if got := l.Locate(); got != want {
			t.Errorf("%s: Locate %q, want %q", u, got, want)
		}
	}
	// An open store says the same, as an engine.BlobLocator.
	_, ep := fakeS3(t)
	s := openFake(t, ep, "minca/p", "", true)
	var loc engine.BlobLocator = s
	if l, _ := ParseURL(fakeURL(ep, "minca/p", "")); loc.Locate() != l.Locate() || !strings.HasPrefix(loc.Locate(), "s3://") {
		t.Fatalf("Store.Locate %q, want %q", loc.Locate(), l.Locate())
	}
}

// The Blobs contract in both checksum modes, through throttling, 500s,
// connection resets and bodies cut off mid-way, with pages of 7 keys.
func TestContractThroughFaults(t *testing.T) {
	for _, mode := range []string{"when_supported", "when_required"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			f, ep := fakeS3(t)
			f.maxKeys = 7
			s := openFake(t, ep, "minca/p", mode, true)
			if !s.Conditional() {
				t.Fatal("gofakes3 honours If-None-Match on PutObject; the probe said it does not")
			}
			f.failing.Store(true)
			const n = 60
			for i := 1; i <= n; i++ {
				if err := s.Put(ctx, name(i), body(i)); err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
			}
			if err := s.Put(ctx, name(1), []byte("other")); !errors.Is(err, engine.ErrBlobExists) {
				t.Fatalf("overwrite: %v", err)
			}
			for i := 1; i <= n; i++ {
				b, err := s.Get(ctx, name(i))
				if err != nil || !bytes.Equal(b, body(i)) {
					t.Fatalf("get %d: %d bytes, %v", i, len(b), err)
				}
			}
			all, err := s.List(ctx, "segments/", "", 0)
			if err != nil || len(all) != n {
				t.Fatalf("list: %d, %v", len(all), err)
			}
			for i := 1; i < len(all); i++ {
				if all[i-1].Name >= all[i].Name {
					t.Fatal("listing out of order")
				}
			}
			w1, err := s.List(ctx, "segments/w1/", name(4), 5)
			if err != nil || len(w1) != 5 || w1[0].Name != name(7) {
				t.Fatalf("page after %s: %v %v", name(4), w1, err)
			}
			dirs, err := s.Dirs(ctx, "segments/")
			if err != nil || fmt.Sprint(dirs) != "[w0 w1 w2]" {
				t.Fatalf("dirs %v %v", dirs, err)
			}
			if _, err := s.Get(ctx, name(n+1)); !errors.Is(err, engine.ErrBlobNotFound) {
				t.Fatalf("get missing: %v", err)
			}
			if err := s.Delete(ctx, name(1)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, name(1)); !errors.Is(err, engine.ErrBlobNotFound) {
				t.Fatalf("get deleted: %v", err)
			}
			f.failing.Store(false)
			if f.SlowDowns.Load() == 0 || f.ServerErrors.Load() == 0 || f.Resets.Load() == 0 || f.BodyCuts.Load() == 0 {
				t.Fatalf("not every fault was injected: slowdown %d, 5xx %d, resets %d, cut bodies %d",
					f.SlowDowns.Load(), f.ServerErrors.Load(), f.Resets.Load(), f.BodyCuts.Load())
			}
			t.Logf("%d requests; %d SlowDown, %d 500, %d resets, %d cut bodies", f.Requests.Load(), f.SlowDowns.Load(), f.ServerErrors.Load(), f.Resets.Load(), f.BodyCuts.Load())
		})
	}
}

// Listing while keys are added: what a page missed, the next round finds
// (S2). Pages of 7.
func TestListWhileWriting(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	f.maxKeys = 7
	s := openFake(t, ep, "", "", true)
	for i := 1; i <= 40; i += 2 {
		if err := s.Put(ctx, name(i), body(i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	after := ""
	for added := 2; ; added += 2 {
		page, err := s.List(ctx, "segments/w0/", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page {
			seen[b.Name] = true
			after = b.Name
		}
		if added <= 40 {
			if err := s.Put(ctx, name(added), body(added)); err != nil {
				t.Fatal(err)
			}
		}
		if len(page) < 3 && added > 40 {
			break
		}
	}
	all, err := s.List(ctx, "segments/w0/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		seen[b.Name] = true
	}
	for i := 3; i <= 40; i += 3 {
		if !seen[name(i)] {
			t.Fatalf("%s never listed", name(i))
		}
	}
}

// A server without conditional writes: the probe notices, and Put still
// never overwrites (S3).
func TestNoConditionalWrites(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	f.stripIfNoneMatch = true
	s := openFake(t, ep, "x", "", true)
	if s.Conditional() {
		t.Fatal("the probe missed that If-None-Match is ignored")
	}
	if err := s.Put(ctx, name(1), body(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, name(1), []byte("other")); !errors.Is(err, engine.ErrBlobExists) {
		t.Fatalf("overwrite: %v", err)
	}
	if b, _ := s.Get(ctx, name(1)); !bytes.Equal(b, body(1)) {
		t.Fatal("overwritten")
	}
}

// A server that fails on the SDK's checksum headers works with
// checksum=when_required, and not without it (S6).
func TestChecksumHeadersRejected(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	s := openFake(t, ep, "x", "when_required", true)
	f.rejectChecksums = true
	if err := s.Put(ctx, name(1), body(1)); err != nil {
		t.Fatalf("when_required: %v", err)
	}
	if b, err := s.Get(ctx, name(1)); err != nil || !bytes.Equal(b, body(1)) {
		t.Fatalf("when_required get: %v", err)
	}
	f.rejectChecksums = false
	s2 := openFake(t, ep, "x", "when_supported", false)
	f.rejectChecksums = true
	if err := s2.Put(ctx, name(2), body(2)); err == nil {
		t.Fatal("when_supported sent no checksum header; the test shows nothing")
	}
}

// A prefix with no marker is never taken for an empty store (F10, S1).
func TestMarker(t *testing.T) {
	ctx := context.Background()
	_, ep := fakeS3(t)
	u := "s3://bkt/nothing?path-style=true&endpoint=" + ep
	if _, err := Open(ctx, u, testOptions(false)); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("open without a marker: %v", err)
	}
	if _, err := Open(ctx, "s3://nope/x?path-style=true&endpoint="+ep, testOptions(true)); !errors.Is(err, engine.ErrBlobStoreGone) || !strings.Contains(err.Error(), "there is no bucket nope") {
		t.Fatalf("open in a bucket that does not exist: %v", err)
	}
	s := openFake(t, ep, "m", "", true)
	if err := s.Put(ctx, name(1), body(1)); err != nil {
		t.Fatal(err)
	}
	again := openFake(t, ep, "m", "", true)
	if again.StoreID() != s.StoreID() {
		t.Fatal("a second open made a new marker")
	}
	k := s.key(MarkerName)
	if _, err := s.c.DeleteObject(ctx, deleteInput(s.loc.Bucket, k)); err != nil {
		t.Fatal(err)
	}
	s.markerSeen.Store(0) // as once the 10 s a seen marker counts for are over
	if _, err := s.List(ctx, "segments/", "", 0); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("list without the marker: %v", err)
	}
	if err := s.Delete(ctx, name(1)); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("delete without the marker: %v", err)
	}
	if _, err := Open(ctx, "s3://bkt/m?path-style=true&endpoint="+ep, testOptions(true)); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("adopting a prefix with segments and no marker: %v", err)
	}
}

func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name  string
		noCAS bool
	}{{"conditional", false}, {"no-cas", true}} {
		t.Run(c.name, func(t *testing.T) {
			blobstest.Run(t, func(t *testing.T) engine.Blobs {
				f, ep := fakeS3(t)
				f.maxKeys = 7
				f.stripIfNoneMatch = c.noCAS
				s := openFake(t, ep, "conf", "", true)
				f.failing.Store(true)
				return s
			})
		})
	}
}
