// Package s3 is an [engine.Blobs] on an S3 bucket or any S3-compatible
// server, through aws-sdk-go-v2 (DESIGN, Backends; catalog S1–S8).
//
// Guarantees:
//   - Put never overwrites: with If-None-Match: * where the server honours
//     it (probed at Open), else by a HEAD first (our names are
//     content-addressed, so the race can only write the same bytes). A 412
//     is [engine.ErrBlobExists] — possibly this client's own earlier
//     attempt that timed out; the caller compares content.
//   - List pages through ListObjectsV2 however small the server's pages,
//     and returns only names in the grammar.
//   - Throttling (503 SlowDown), 5xx and connection resets are retried with
//     exponential backoff and jitter, up to Options.MaxAttempts; a body cut
//     off mid-GET is fetched again.
//   - A marker object (minca-store.json) under the prefix holds the store's
//     id; without it every operation is [engine.ErrBlobStoreGone] (checked
//     at most every 10 s).
//   - Nothing is ordered by LastModified.
//
// A Store is safe for concurrent use.
package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/minca-go/minca/engine"
)

// MarkerName is the marker object under every store's prefix.
const MarkerName = "minca-store.json"

// Options configure a store. nil means defaults.
type Options struct {
	// Credentials replace the standard chain (environment, ~/.aws files,
	// SSO, instance roles). Tests pass static ones. Default nil.
	Credentials aws.CredentialsProvider
	// HTTPClient replaces the SDK's. Default nil.
	HTTPClient *http.Client
	// Create makes the marker when the prefix holds nothing of ours.
	// Default false.
	Create bool
	// MaxAttempts per request, retries included. Default 8.
	MaxAttempts int
	// MaxBackoff between attempts. Default 20 s.
	MaxBackoff time.Duration
	// MaxObject is the largest object Get reads, in bytes. Default 1 GiB.
	MaxObject int64
	// Logger gets the degraded-mode notice. Default: discard.
	Logger *slog.Logger
}

// Store is an S3 store.
type Store struct {
	c      *s3.Client
	loc    Location
	o      Options
	id     string
	cas    bool
	counts Counts

	markerSeen atomic.Int64 // Unix ns the marker was last seen; 0: check
}

// Counts are the requests a store made, retries not counted.
type Counts struct {
	List, Get, Head, Put, Delete atomic.Int64
}

var (
	_ engine.Blobs       = (*Store)(nil)
	_ engine.BlobDirs    = (*Store)(nil)
	_ engine.BlobStoreID = (*Store)(nil)
)

// Open connects to the store at url (see [Location]), reads its marker
// (making it with Options.Create), and probes for conditional writes.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 20 * time.Second
	}
	if o.MaxObject <= 0 {
		o.MaxObject = 1 << 30
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lo := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.MaxAttempts
				so.MaxBackoff = o.MaxBackoff
				so.Backoff = retry.NewExponentialJitterBackoff(o.MaxBackoff)
				// The default token bucket fails requests outright after a
				// burst of throttling; backing off is what S3 asks for (S4).
				so.RateLimiter = ratelimit.None
			})
		}),
	}
	if loc.Region != "" {
		lo = append(lo, config.WithRegion(loc.Region))
	}
	if o.Credentials != nil {
		lo = append(lo, config.WithCredentialsProvider(o.Credentials))
	}
	if o.HTTPClient != nil {
		lo = append(lo, config.WithHTTPClient(o.HTTPClient))
	}
	switch loc.Checksum {
	case "when_required":
		lo = append(lo, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	case "when_supported":
		lo = append(lo, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenSupported),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenSupported))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("minca/s3: aws config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers mostly ignore it
	}
	c := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if loc.Endpoint != "" {
			so.BaseEndpoint = aws.String(loc.Endpoint)
		}
		so.UsePathStyle = so.UsePathStyle || loc.PathStyle
		// Segments carry their own checksum, verified on every read; the
		// SDK's note that a server sent none is noise.
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	s := &Store{c: c, loc: loc, o: o}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	if err := s.openMarker(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// StoreID is the id in the store's marker.
func (s *Store) StoreID() string { return s.id }

// Conditional reports whether the server honours If-None-Match: *.
func (s *Store) Conditional() bool { return s.cas }

// Counts returns the requests made so far.
func (s *Store) Counts() *Counts { return &s.counts }

// Location is where the store is.
func (s *Store) Location() Location { return s.loc }

func (s *Store) key(name string) string { return s.loc.Prefix + name }

// probe PUTs one key twice with If-None-Match: *: a server that accepts
// the second has no conditional writes, and Put degrades (S3).
func (s *Store) probe(ctx context.Context) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	k := s.key(fmt.Sprintf(".minca-probe-%x", b))
	put := func() error {
		s.counts.Put.Add(1)
		_, err := s.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: bytes.NewReader(nil), IfNoneMatch: aws.String("*")})
		return err
	}
	if err := put(); err != nil {
		return fmt.Errorf("minca/s3: probe %s: %w", s.loc, err)
	}
	err := put()
	s.cas = status(err) == http.StatusPreconditionFailed
	s.counts.Delete.Add(1)
	_, derr := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k})
	if err != nil && !s.cas {
		return fmt.Errorf("minca/s3: probe %s: %w", s.loc, err)
	}
	if derr != nil {
		return fmt.Errorf("minca/s3: probe %s: %w", s.loc, derr)
	}
	if !s.cas {
		s.o.Logger.Warn("the S3 server ignores If-None-Match: *; writes check with HEAD first", "store", s.loc.String())
	}
	return nil
}

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
			return fmt.Errorf("%w: %s under %s is not a Minca store marker", engine.ErrBlobStoreGone, MarkerName, s.loc)
		}
		s.id = m.ID
		return nil
	}
	err := read()
	if !errors.Is(err, engine.ErrBlobNotFound) {
		return err
	}
	if !s.o.Create {
		return fmt.Errorf("%w: no %s under %s", engine.ErrBlobStoreGone, MarkerName, s.loc)
	}
	l, err := s.list(ctx, "segments/", "", 1)
	if err != nil {
		return err
	}
	if len(l) > 0 {
		return fmt.Errorf("%w: %s holds segments but no marker; not adopting it", engine.ErrBlobStoreGone, s.loc)
	}
	var b [10]byte
	_, _ = rand.Read(b[:])
	data, _ := json.Marshal(marker{Minca: "blobs", V: 1, ID: fmt.Sprintf("%x", b)})
	if err := s.put(ctx, MarkerName, data); err != nil && !errors.Is(err, engine.ErrBlobExists) {
		return fmt.Errorf("minca/s3: create marker: %w", err)
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
	s.counts.Head.Add(1)
	_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.loc.Bucket, Key: &k})
	if status(err) == http.StatusNotFound {
		s.markerSeen.Store(0)
		return &engine.BlobError{Op: op, Name: name, Err: fmt.Errorf("%w: %s vanished from %s", engine.ErrBlobStoreGone, MarkerName, s.loc)}
	}
	if err != nil {
		return &engine.BlobError{Op: op, Name: name, Err: err}
	}
	s.markerSeen.Store(time.Now().UnixNano())
	return nil
}

func status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
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
	for {
		s.counts.List.Add(1)
		page, err := s.c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, &engine.BlobError{Op: "list", Name: prefix, Err: err}
		}
		for _, o := range page.Contents {
			name, ok := strings.CutPrefix(aws.ToString(o.Key), s.loc.Prefix)
			if !ok || !engine.ValidBlobName(name) || name == MarkerName || name <= after {
				continue
			}
			out = append(out, engine.BlobInfo{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
			if len(out) == limit {
				return out, nil
			}
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return out, nil
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
	for {
		s.counts.List.Add(1)
		page, err := s.c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, &engine.BlobError{Op: "list", Name: prefix, Err: err}
		}
		for _, p := range page.CommonPrefixes {
			d := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), s.key(prefix)), "/")
			if engine.ValidBlobComponent(d) {
				out = append(out, d)
			}
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			return out, nil
		}
		in.ContinuationToken = page.NextContinuationToken
	}
}

// Get implements [engine.Blobs].
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if !engine.ValidBlobName(name) {
		return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobName}
	}
	return s.get(ctx, name)
}

// get reads an object; a body cut off mid-way is read again, with backoff,
// since the SDK's retryer has already returned by then.
func (s *Store) get(ctx context.Context, name string) ([]byte, error) {
	k := s.key(name)
	var last error
	for attempt := 0; attempt < s.o.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt, s.o.MaxBackoff)); err != nil {
				return nil, err
			}
		}
		s.counts.Get.Add(1)
		r, err := s.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		if status(err) == http.StatusNotFound {
			return nil, &engine.BlobError{Op: "get", Name: name, Err: engine.ErrBlobNotFound}
		}
		if err != nil {
			return nil, &engine.BlobError{Op: "get", Name: name, Err: err}
		}
		if r.ContentLength != nil && *r.ContentLength > s.o.MaxObject {
			r.Body.Close()
			return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("%d bytes is over the limit of %d", *r.ContentLength, s.o.MaxObject)}
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, s.o.MaxObject+1))
		r.Body.Close()
		if err == nil && int64(len(b)) > s.o.MaxObject {
			return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("over the limit of %d bytes", s.o.MaxObject)}
		}
		if err == nil && r.ContentLength != nil && int64(len(b)) != *r.ContentLength {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			return b, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last = err
	}
	return nil, &engine.BlobError{Op: "get", Name: name, Err: fmt.Errorf("body cut off %d times: %w", s.o.MaxAttempts, last)}
}

// Put implements [engine.Blobs].
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	if !engine.ValidBlobName(name) || name == MarkerName {
		return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobName}
	}
	if err := s.check(ctx, "put", name); err != nil {
		return err
	}
	return s.put(ctx, name, data)
}

func (s *Store) put(ctx context.Context, name string, data []byte) error {
	k := s.key(name)
	if !s.cas {
		s.counts.Head.Add(1)
		_, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.loc.Bucket, Key: &k})
		switch status(err) {
		case http.StatusNotFound:
		case 0:
			if err == nil {
				return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobExists}
			}
			return &engine.BlobError{Op: "put", Name: name, Err: err}
		default:
			return &engine.BlobError{Op: "put", Name: name, Err: err}
		}
	}
	in := &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if s.cas {
		in.IfNoneMatch = aws.String("*")
	}
	var err error
	for attempt := 0; attempt < s.o.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt, s.o.MaxBackoff)); err != nil {
				return err
			}
			in.Body = bytes.NewReader(data)
		}
		s.counts.Put.Add(1)
		_, err = s.c.PutObject(ctx, in)
		switch status(err) {
		case http.StatusPreconditionFailed:
			return &engine.BlobError{Op: "put", Name: name, Err: engine.ErrBlobExists}
		case http.StatusConflict: // ConditionalRequestConflict: retry (S3)
			continue
		}
		break
	}
	if err != nil {
		return &engine.BlobError{Op: "put", Name: name, Err: err}
	}
	return nil
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
	s.counts.Delete.Add(1)
	_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k})
	if err != nil && status(err) != http.StatusNotFound {
		return &engine.BlobError{Op: "delete", Name: name, Err: err}
	}
	return nil
}

// backoff is "full jitter": a random wait up to min(max, 100 ms × 2^n).
func backoff(attempt int, max time.Duration) time.Duration {
	d := 100 * time.Millisecond << min(attempt, 20)
	if d > max || d <= 0 {
		d = max
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)+1))
	if err != nil {
		return d
	}
	return time.Duration(n.Int64())
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
