package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/minca-go/minca/engine"
)

// probePrefix names the probe objects. It is outside the name grammar, so
// List never returns one.
const probePrefix = ".minca-probe-"

// probeStale is the age past which a probe object is taken for one a
// process left behind (killed mid-probe) and swept. It is far more than
// a probe takes and than the clock skew SigV4 allows (15 min, S8).
const probeStale = time.Hour

// writable probes the server, once, before the first write: a store only
// read never writes (a restore with read-only credentials works). A probe
// that failed is tried again at the next write.
func (s *Store) writable(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probed.Load() {
		return nil
	}
	if err := s.probe(ctx); err != nil {
		return err
	}
	s.probed.Store(true)
	return nil
}

// probe PUTs one key twice with If-None-Match: *: a server that accepts
// the second has no conditional writes, and Put degrades (S3). The body is
// a random token, so a first PUT whose reply was lost and whose retry met
// 412 is recognised as ours. The object is deleted on every path, and
// probe objects older than probeStale are swept first.
func (s *Store) probe(ctx context.Context) error {
	s.sweepProbes(ctx)
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	name := probePrefix + token
	defer s.dropProbe(ctx, name)
	if err := s.create(ctx, name, []byte(token), true); err != nil {
		return err
	}
	k := s.key(name)
	err := s.do(ctx, "put", name, func(ctx context.Context, _ int) error {
		_, err := s.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: strings.NewReader(token), IfNoneMatch: aws.String("*")})
		return err
	})
	cas := status(err) == http.StatusPreconditionFailed
	if err != nil && !cas {
		return err
	}
	s.cas.Store(cas)
	if !cas {
		s.o.Logger.Warn("the S3 server ignores If-None-Match: *; writes check with HEAD first", "store", s.loc.String())
	}
	return nil
}

// dropProbe deletes a probe object, even when ctx was cancelled mid-probe
// (one attempt, bounded), so that none is left behind; what fails is
// swept by a later probe.
func (s *Store) dropProbe(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(s.o.Timeout, 10*time.Second))
	defer cancel()
	k := s.key(name)
	s.counts.Delete.Add(1)
	if _, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k}); err != nil && status(err) != http.StatusNotFound {
		s.o.Logger.Warn("s3: could not delete a probe object; a later write sweeps it", "key", k, "err", describe(err))
	}
}

// sweepProbes deletes probe objects of ours older than probeStale. It is
// best effort: a failure is logged, and the probe goes on.
func (s *Store) sweepProbes(ctx context.Context) {
	in := &s3.ListObjectsV2Input{Bucket: &s.loc.Bucket, Prefix: aws.String(s.key(probePrefix))}
	var stale []string
	err := s.pages(ctx, probePrefix, in, func(page *s3.ListObjectsV2Output) bool {
		for _, o := range page.Contents {
			if o.LastModified != nil && time.Since(*o.LastModified) > probeStale {
				stale = append(stale, strings.TrimPrefix(aws.ToString(o.Key), s.loc.Prefix))
			}
		}
		return true
	})
	if err != nil {
		if ctx.Err() == nil {
			s.o.Logger.Warn("s3: could not list old probe objects", "err", err)
		}
		return
	}
	for _, name := range stale {
		k := s.key(name)
		err := s.do(ctx, "delete", name, func(ctx context.Context, _ int) error {
			_, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k})
			return err
		})
		if err != nil && status(err) != http.StatusNotFound {
			s.o.Logger.Warn("s3: could not delete an old probe object", "key", k, "err", err)
			return
		}
	}
}

// ours reports whether the object at name holds data: after a create
// whose earlier attempt may have landed (its reply lost), a 412 is our
// own success only if the bytes there are ours.
func (s *Store) ours(ctx context.Context, name string, data []byte) (bool, error) {
	got, err := s.get(ctx, name)
	if errors.Is(err, engine.ErrBlobNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, data), nil
}
