package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/store"
)

// storeURLHelp describes the store URLs a verb's --store takes, and
// blobURLHelp the blob store URLs of --to, --from and --blobs.
const (
	storeURLHelp = store.URLForms
	blobURLHelp  = store.BlobURLForms
)

// adoptHelp is the --adopt flag's help, on every verb that writes.
const adoptHelp = "take a blob store as found when it is not the one this store mirrored to there before (a folder emptied, removed or set up again) or lost segments; without it such a store is refused. It applies to BLOBURL and to a folder: or s3:// store's own"

// storeAccess is how a verb opens its store: only a verb that writes
// creates one, and a verb that only reads opens it read-only.
type storeAccess int

const (
	readStore   storeAccess = iota // must exist; read only (get, history, export, stats, check)
	useStore                       // must exist; read and write (backup, compact: the mirror's state)
	createStore                    // made where there is none (import, restore --store, mirror)
)

// storeSpec is how a verb opens its store and blob stores, from its flags:
// the one place every verb gets --store and what goes with it.
type storeSpec struct {
	s     *stdio
	url   string
	adopt bool
	s3    *s3Flags
	// listsDamage: the verb reports what the store lacks itself (store
	// check, as problem lines); otherwise open leaves it to exitCode.
	listsDamage bool
	// judge is --judge ("full" or "roots"; "" for verbs without it, which
	// admit with the roots judge).
	judge string
	// mem, when set, is what the store and its judge keep in memory
	// (store import's --memory); nil is every default.
	mem *importMemory
}

// storeFlags adds to a verb's flags --store (its default is
// $MINCA_STORE), --timeout and --connect-timeout (for S3, wherever the
// store or a blob store may be one) and, when the verb writes (adopt),
// --adopt.
func storeFlags(fs *flags, adopt bool) *storeSpec {
	sp := &storeSpec{s: fs.s}
	fs.StringVar(&sp.url, "store", os.Getenv("MINCA_STORE"), "the store `URL` (default $MINCA_STORE): "+storeURLHelp)
	sp.s3 = addS3Flags(fs)
	if adopt {
		fs.BoolVar(&sp.adopt, "adopt", false, adoptHelp)
	}
	return sp
}

// s3Flags are --timeout and --connect-timeout: how long S3 requests may
// stall, and opening a bucket may take. 0 leaves the URL's timeout= and
// connect-timeout=, else the s3 package's defaults (30 s each).
type s3Flags struct {
	timeout, connectTimeout time.Duration
}

// addS3Flags adds --timeout and --connect-timeout to a verb that may open
// an S3 store.
func addS3Flags(fs *flags) *s3Flags {
	f := &s3Flags{}
	fs.Func("timeout", "S3: give up a request that makes no progress for this `DURATION` and retry it (default 30s, or the URL's timeout=)", durationFlag(&f.timeout))
	fs.Func("connect-timeout", "S3: give up opening a bucket, retries included, after this `DURATION`: exit 4 (default 30s, or the URL's connect-timeout=)", durationFlag(&f.connectTimeout))
	return f
}

// options are the s3.Options these flags set.
func (f *s3Flags) options() *s3.Options {
	return &s3.Options{Timeout: f.timeout, ConnectTimeout: f.connectTimeout}
}

// durationFlag parses a positive Go duration into d.
func durationFlag(d *time.Duration) func(string) error {
	return func(v string) error {
		x, err := time.ParseDuration(v)
		if err != nil || x <= 0 {
			return fmt.Errorf("%q: want a positive duration such as 30s or 500ms", v)
		}
		*d = x
		return nil
	}
}

// options are the store.Options of an open with these flags.
func (sp *storeSpec) options(create, readOnly bool) *store.Options {
	o := &store.Options{Judge: defaultJudge(), Logger: sp.s.logger(), Create: create, ReadOnly: readOnly, Adopt: sp.adopt,
		S3: sp.s3.options(), Waiting: store.PeersBounded(engine.WaitingLimits{}), Geneses: judge.MirrorGeneses, CacheDir: sp.s.cacheDir}
	if sp.mem != nil {
		o.Memory = sp.mem.store
		o.Judge = &judge.Judge{Notes: noteChecker(), Verifier: sp.verifier()}
	}
	return o
}

// verifier is the crypto gate of the store's judge: nil (the judge's own)
// unless --memory says how many verdicts it keeps.
func (sp *storeSpec) verifier() *record.Verifier {
	if sp.mem == nil {
		return nil
	}
	return &record.Verifier{Cache: &record.VerdictCache{Size: sp.mem.verdicts}}
}

// open opens the store (store.Open), with the node's judge. A missing
// store is an error wrapping engine.ErrNoStore (exit 3); a bad URL is bad
// usage. A folder: or s3:// store with bad segments opens with everything
// else: the verb does its work with what is there, and exitCode names the
// bad segments last and exits 1 (a read never passes for a whole one).
func (sp *storeSpec) open(ctx context.Context, a storeAccess) (*store.Store, error) {
	if sp.url == "" {
		return nil, usageError("--store URL is required (%s)", storeURLHelp)
	}
	o := sp.options(a == createStore, a == readStore)
	// The full judge reads each space's history from the store it judges
	// for. A folder: or s3:// store admits its blob store's segments as it
	// opens, its geneses first: the judge reads that store from then on.
	var full *judge.PrivateJudge
	if sp.judge == "full" {
		full = judge.NewPrivateJudge(noteChecker(), nil) // a store holds no keys
		if v := sp.verifier(); v != nil {
			full.Base.Verifier = v
		}
		o.Judge = full
		o.Geneses = func(e *engine.Store) mirror.Geneses {
			full.Source = e
			return judge.MirrorGeneses(e)
		}
	}
	st, err := store.Open(ctx, sp.url, o)
	if err != nil {
		return nil, usageIfBadURL(err)
	}
	if full != nil {
		full.Source = st.Engine()
	}
	if d := st.Damage(); d != nil && !sp.listsDamage {
		sp.s.damage = append(sp.s.damage, d)
	}
	return st, nil
}

// openBlobs opens the blob store a URL names (store.OpenBlobsFor) for the
// store s to mirror to (nil: for no store). create makes a new store (its
// marker) where there is none, unless s remembers another there and not
// --adopt; without it a missing one is an error wrapping engine.ErrNoStore
// (exit 3). A folder or prefix holding segments but no marker is never
// adopted.
func (sp *storeSpec) openBlobs(ctx context.Context, s *engine.Store, url string, create bool) (engine.Blobs, error) {
	b, err := store.OpenBlobsFor(ctx, s, url, sp.options(create, false))
	return b, usageIfBadURL(err)
}

// failed is failed(err) for an error met reading or writing the store:
// named as the store's, by its URL, where err names no store of its own
// (an engine's error, where a backend's names its files).
func (sp *storeSpec) failed(err error) error {
	return failed(namedAs("store "+store.ShortURL(sp.url), err))
}

// namedAs is err said as about subject ("store URL") where it names no
// store of its own (engine.Subject), so the store is named once.
func namedAs(subject string, err error) error {
	if engine.Subject(err) != "" {
		return err
	}
	return &engine.StoreError{Subject: subject, Msg: err.Error(), Err: err}
}

// usageIfBadURL makes a bad store URL a usage error (exit 2).
func usageIfBadURL(err error) error {
	if errors.Is(err, store.ErrBadURL) {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}
