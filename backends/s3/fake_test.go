package s3

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// faults sits in front of gofakes3 and misbehaves as S3 and S3-compatible
// servers do (catalog S2–S6). It is safe for concurrent use.
type faults struct {
	next http.Handler

	mu          sync.Mutex
	rng         *rand.Rand
	rate        float64 // chance a request fails, when failing is on
	consecutive int     // failures in a row so far; capped so retries end

	failing          atomic.Bool
	maxKeys          int  // force a smaller page than asked (0: no)
	stripIfNoneMatch bool // a server without conditional writes
	rejectChecksums  bool // a server that fails on x-amz-checksum-* headers
	// conflictOnce answers the first PUT of each segment with 409
	// ConditionalRequestConflict; lostReply does the first PUT of each
	// segment and then drops the connection before answering (S3).
	conflictOnce, lostReply bool
	seenPut                 sync.Map

	Requests, SlowDowns, ServerErrors, Resets, BodyCuts atomic.Int64
}

func (f *faults) pick() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing.Load() || f.consecutive >= 2 || f.rng.Float64() >= f.rate {
		f.consecutive = 0
		return -1
	}
	f.consecutive++
	return f.rng.Intn(4)
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Requests.Add(1)
	if f.stripIfNoneMatch {
		r.Header.Del("If-None-Match")
	}
	if f.rejectChecksums {
		for k := range r.Header {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-checksum-") || lk == "x-amz-sdk-checksum-algorithm" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>XAmzContentSHA256Mismatch</Code><Message>checksum headers are not supported</Message></Error>`)
				return
			}
		}
	}
	if f.maxKeys > 0 && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		q := r.URL.Query()
		if n, _ := strconv.Atoi(q.Get("max-keys")); n == 0 || n > f.maxKeys {
			q.Set("max-keys", strconv.Itoa(f.maxKeys))
			r.URL.RawQuery = q.Encode()
		}
	}
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/") && (f.conflictOnce || f.lostReply) {
		if _, again := f.seenPut.LoadOrStore(r.URL.Path, true); !again {
			if f.conflictOnce {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(http.StatusConflict)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code><Message>try again</Message></Error>`)
				return
			}
			f.next.ServeHTTP(httptest.NewRecorder(), r) // done, but the answer is lost
			hijackClose(w)
			return
		}
	}
	switch f.pick() {
	case 0:
		f.SlowDowns.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return
	case 1:
		f.ServerErrors.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
		return
	case 2:
		f.Resets.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		hijackClose(w)
		return
	case 3:
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "" {
			// Headers and half the body, then the connection drops.
			rec := httptest.NewRecorder()
			f.next.ServeHTTP(rec, r)
			if rec.Code == http.StatusOK && rec.Body.Len() > 1 {
				f.BodyCuts.Add(1)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
				w.(http.Flusher).Flush()
				hijackClose(w)
				return
			}
			copyRecorded(w, rec)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("test server cannot hijack")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		if tc, ok := c.(interface{ SetLinger(int) error }); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		c.Close()
	}
}

// fakeS3 runs gofakes3 on loopback behind a fault injector, with one bucket.
func fakeS3(t testing.TB) (*faults, string) {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	f := &faults{next: gofakes3.New(be).Server(), rng: rand.New(rand.NewSource(1)), rate: 0.3}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func testOptions(create bool) *Options {
	return &Options{
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		Create:      create,
		MaxBackoff:  20 * time.Millisecond,
	}
}

func openFake(t testing.TB, endpoint, prefix, checksum string, create bool) *Store {
	t.Helper()
	u := "s3://bkt/" + prefix + "?region=us-east-1&path-style=true&endpoint=" + endpoint
	if checksum != "" {
		u += "&checksum=" + checksum
	}
	s, err := Open(context.Background(), u, testOptions(create))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func body(n int) []byte { return bytes.Repeat([]byte{byte(n)}, 100+n) }

func deleteInput(bucket, key string) *s3.DeleteObjectInput {
	return &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}
}
