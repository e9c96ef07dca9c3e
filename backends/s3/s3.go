package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/minca-go/minca/engine"
)

// MarkerName is the marker object under every store's prefix.
const MarkerName = "minca-store.json"

// Store is an S3 store.
type Store struct {
	c        *s3.Client
	loc      Location
	o        Options
	endpoint string // for messages: the URL's endpoint, or AWS's for the region
	id       string
	counts   Counts

	probeMu sync.Mutex  // serialises the probe
	probed  atomic.Bool // the probe has run: cas is known
	cas     atomic.Bool

	markerSeen atomic.Int64 // Unix ns the marker was last seen; 0: check
}

// Counts are the requests a store made, retries not counted.
type Counts struct {
	List, Get, Head, Put, Delete atomic.Int64
}

func (c *Counts) of(op string) *atomic.Int64 {
	switch op {
	case "list":
		return &c.List
	case "get":
		return &c.Get
	case "head":
		return &c.Head
	case "put":
		return &c.Put
	}
	return &c.Delete
}

var (
	_ engine.Blobs       = (*Store)(nil)
	_ engine.BlobDirs    = (*Store)(nil)
	_ engine.BlobStoreID = (*Store)(nil)
	_ engine.BlobLocator = (*Store)(nil)
)

// Open connects to the store at url (see [Location]) and reads its
// marker, making it with Options.Create where the prefix holds nothing.
// A store that has its marker is only read: the write probe waits for the
// first Put. Open gives up after Options.ConnectTimeout
// ([engine.ErrUnreachable]); missing or refused credentials are
// [ErrConfig], found before any request is sent.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	o, err := resolve(opts, loc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, o.clock.Now().Add(o.ConnectTimeout))
	defer cancel()
	c, err := client(ctx, loc, &o)
	if err != nil {
		return nil, openError(loc, err)
	}
	s := &Store{c: c, loc: loc, o: o, endpoint: loc.Endpoint}
	if s.endpoint == "" {
		s.endpoint = "https://s3." + c.Options().Region + ".amazonaws.com"
	}
	if err := s.openMarker(ctx); err != nil {
		return nil, openError(loc, err)
	}
	return s, nil
}

// openError is an error of Open: it names the store by bucket and prefix
// ([engine.StoreError]), so that an opener naming it by its URL says so
// once.
func openError(loc Location, err error) error {
	return &engine.StoreError{Subject: loc.name(), Msg: err.Error(), Err: err}
}

// StoreID is the id in the store's marker.
func (s *Store) StoreID() string { return s.id }

// Conditional reports whether the server honours If-None-Match: *, as
// probed before the first write; false until then.
func (s *Store) Conditional() bool { return s.cas.Load() }

// Counts returns the requests made so far.
func (s *Store) Counts() *Counts { return &s.counts }

// Location is where the store is.
func (s *Store) Location() Location { return s.loc }

// Locate implements [engine.BlobLocator]: [Location.Locate].
func (s *Store) Locate() string { return s.loc.Locate() }

func (s *Store) key(name string) string { return s.loc.Prefix + name }

type marker struct {
	Minca string `json:"minca"`
	V     int    `json:"v"`
	ID    string `json:"id"`
}

func (s *Store) openMarker(ctx context.Context) error {
	read := func() error {
		b, err := s.get(ctx, MarkerName)
		if err != nil {
			return err
		}
		var m marker
		if err := json.Unmarshal(b, &m); err != nil || m.Minca != "blobs" || m.V != 1 || !engine.ValidBlobComponent(m.ID) {
			return engine.Errorf(engine.ErrBlobStoreGone, "%s there is not a Minca store marker", MarkerName)
		}
		s.id = m.ID
		return nil
	}
	err := read()
	if apiCode(err) == "NoSuchBucket" {
		return engine.Errorf(engine.ErrBlobStoreGone, "there is no bucket %s", s.loc.Bucket)
	}
	if !errors.Is(err, engine.ErrBlobNotFound) {
		return err
	}
	if !s.o.Create {
		return engine.Errorf(engine.ErrBlobStoreGone, "no %s there", MarkerName)
	}
	l, err := s.list(ctx, "segments/", "", 1)
	if err != nil {
		return err
	}
	if len(l) > 0 {
		return engine.Errorf(engine.ErrBlobStoreGone, "the prefix holds segments but no %s; not adopting it", MarkerName)
	}
	if err := s.writable(ctx); err != nil {
		return err
	}
	var b [10]byte
	_, _ = rand.Read(b[:])
	data, _ := json.Marshal(marker{Minca: "blobs", V: 1, ID: fmt.Sprintf("%x", b)})
	if err := s.put(ctx, MarkerName, data); err != nil && !errors.Is(err, engine.ErrBlobExists) {
		return fmt.Errorf("create marker: %w", err)
	}
	return read()
}

// markerTTL is how long a marker seen stays seen: a backup of many
// segments checks it once in a while, not once a request.
const markerTTL = 10 * time.Second

// check fails when the marker is gone (the prefix was emptied or the
// bucket swapped).
func (s *Store) check(ctx context.Context, op, name string) error {
	if seen := s.markerSeen.Load(); seen != 0 && time.Since(time.Unix(0, seen)) < markerTTL {
		return nil
	}
	k := s.key(MarkerName)
	err := s.do(ctx, "head", MarkerName, func(ctx context.Context, _ int) error {
		_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		return err
	})
	if status(err) == http.StatusNotFound {
		s.markerSeen.Store(0)
		return &engine.BlobError{Op: op, Name: name, Err: engine.Errorf(engine.ErrBlobStoreGone, "%s vanished from %s", MarkerName, s.loc.name())}
	}
	if err != nil {
		return err
	}
	s.markerSeen.Store(time.Now().UnixNano())
	return nil
}

// List implements [engine.Blobs]. The marker is checked once per call.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]engine.BlobInfo, error) {
	if err := s.check(ctx, "list", prefix); err != nil {
		return nil, err
	}
	return s.list(ctx, prefix, after, limit)
}

func (s *Store) list(ctx context.Context, prefix, after string, limit int) ([]engine.BlobInfo, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.loc.Bucket, Prefix: aws.String(s.key(prefix)), MaxKeys: aws.Int32(int32(min(limit, 1000)))}
	if after != "" {
		in.StartAfter = aws.String(s.key(after))
	}
	var out []engine.BlobInfo
	err := s.pages(ctx, prefix, in, func(page *s3.ListObjectsV2Output) bool {
		for _, o := range page.Contents {
			name, ok := strings.CutPrefix(aws.ToString(o.Key), s.loc.Prefix)
			if !ok || !engine.ValidBlobName(name) || name == MarkerName || name <= after {
				continue
			}
			out = append(out, engine.BlobInfo{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
			if len(out) == limit {
				return false
			}
		}
		return true
	})
	return out, err
}

// pages runs a listing page by page, each page a request retried on its
// own, until the last page or until fn returns false.
func (s *Store) pages(ctx context.Context, prefix string, in *s3.ListObjectsV2Input, fn func(*s3.ListObjectsV2Output) bool) error {
	for {
		var page *s3.ListObjectsV2Output
		err := s.do(ctx, "list", prefix, func(ctx context.Context, _ int) error {
			var err error
			page, err = s.c.ListObjectsV2(ctx, in)
			return err
		})
		if err != nil {
			return err
		}
		if !fn(page) || !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// Dirs implements [engine.BlobDirs] with a delimited listing.
func (s *Store) Dirs(ctx context.Context, prefix string) ([]string, error) {
	if err := s.check(ctx, "list", prefix); err != nil {
		return nil, err
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.loc.Bucket, Prefix: aws.String(s.key(prefix)), Delimiter: aws.String("/")}
	var out []string
	err := s.pages(ctx, prefix, in, func(page *s3.ListObjectsV2Output) bool {
		for _, p := range page.CommonPrefixes {
			d := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), s.key(prefix)), "/")
			if engine.ValidBlobComponent(d) {
				out = append(out, d)
			}
		}
		return true
	})
	return out, err
}

// Get implements [engine.Blobs].
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if !engine.ValidBlobName(name) {
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobName}
	}
	return s.get(ctx, name)
}

// get reads an object. The body is read inside the attempt, so one cut
// off mid-way is fetched again like any failed request.
func (s *Store) get(ctx context.Context, name string) ([]byte, error) {
	k := s.key(name)
	var b []byte
	err := s.do(ctx, "get", name, func(ctx context.Context, _ int) error {
		r, err := s.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		if err != nil {
			return err
		}
		defer r.Body.Close()
		if r.ContentLength != nil && *r.ContentLength > s.o.MaxObject {
			return fmt.Errorf("%d bytes is over the limit of %d", *r.ContentLength, s.o.MaxObject)
		}
		b, err = io.ReadAll(io.LimitReader(r.Body, s.o.MaxObject+1))
		switch {
		case err != nil:
			return fmt.Errorf("body cut short: %w", err)
		case int64(len(b)) > s.o.MaxObject:
			return fmt.Errorf("over the limit of %d bytes", s.o.MaxObject)
		case r.ContentLength != nil && int64(len(b)) != *r.ContentLength:
			return fmt.Errorf("body cut short at %d of %d bytes: %w", len(b), *r.ContentLength, io.ErrUnexpectedEOF)
		}
		return nil
	})
	if status(err) == http.StatusNotFound && apiCode(err) != "NoSuchBucket" {
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobNotFound}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Put implements [engine.Blobs]. The first Put probes the server for
// conditional writes. A create whose reply was lost, retried and met by
// 412, is ours when the object holds data; anything else there is
// [engine.ErrBlobExists].
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	if !engine.ValidBlobName(name) || name == MarkerName {
		return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check(ctx, "put", name); err != nil {
		return err
	}
	if err := s.writable(ctx); err != nil {
		return err
	}
	return s.put(ctx, name, data)
}

// put creates name: conditionally where the server allows, else after a
// HEAD (our names are content-addressed, so the race can only write the
// same bytes).
func (s *Store) put(ctx context.Context, name string, data []byte) error {
	if s.cas.Load() {
		return s.create(ctx, name, data, true)
	}
	k := s.key(name)
	err := s.do(ctx, "head", name, func(ctx context.Context, _ int) error {
		_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		return err
	})
	switch {
	case err == nil:
		return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobExists}
	case status(err) != http.StatusNotFound:
		return err
	}
	return s.create(ctx, name, data, false)
}

// create PUTs data at name, with If-None-Match: * when conditional. A 412
// on a retry may be this Put's own earlier attempt, which landed while its
// reply was lost (S3): it is success when the object's bytes are data.
func (s *Store) create(ctx context.Context, name string, data []byte, conditional bool) error {
	k := s.key(name)
	return s.do(ctx, "put", name, func(ctx context.Context, attempt int) error {
		in := &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
		if conditional {
			in.IfNoneMatch = aws.String("*")
		}
		_, err := s.c.PutObject(ctx, in)
		if status(err) != http.StatusPreconditionFailed {
			return err
		}
		if attempt > 1 {
			if ok, err := s.ours(ctx, name, data); err != nil || ok {
				return err
			}
		}
		return engine.ErrBlobExists
	})
}

// Delete implements [engine.Blobs].
func (s *Store) Delete(ctx context.Context, name string) error {
	if !engine.ValidBlobName(name) || name == MarkerName {
		return &engine.BlobError{Op: "delete", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check(ctx, "delete", name); err != nil {
		return err
	}
	k := s.key(name)
	err := s.do(ctx, "delete", name, func(ctx context.Context, _ int) error {
		_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		return err
	})
	if err != nil && status(err) != http.StatusNotFound {
		return err
	}
	return nil
}
