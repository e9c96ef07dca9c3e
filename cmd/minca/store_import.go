package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// importBatch is how many versions one Admit takes: large enough that the
// synced commit is paid rarely, small enough to keep memory flat.
const importBatch = 1000

func runStoreImport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store import", "store import --store URL [FILE|-]\n\nAdmits versions (JSON lines, or one JSON value) through the node's judge — by\ndefault the full judge, which needs each space's genesis (minca space join) —\nin atomic synced batches. Prints one line per version:\n{\"id\",\"outcome\":\"stands|withdrawn|later|refused\",\"stored\":\"whole|stub|-\",\"reason\"?,\"message\"?}\nand a summary on stderr.")
	url := storeFlag(fs)
	from := fs.String("from", "import", "the source named in remembered refusals")
	which := judgeFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("store import takes at most one FILE")
	}
	in, closeIn, err := openInput(s, fs.Arg(0))
	if err != nil {
		return err
	}
	defer closeIn()
	st, err := openWithJudge(*url, *which)
	if err != nil {
		return err
	}
	defer st.Close()
	imp := &importer{s: s, st: st, from: *from, start: time.Now(), counts: map[string]int{}}
	imp.progress = isTerminal(s.err)
	if err := imp.run(ctx, in); err != nil {
		return failed(err)
	}
	imp.summary()
	return nil
}

type importer struct {
	s        *stdio
	st       *engine.Store
	from     string
	start    time.Time
	counts   map[string]int
	n        int
	progress bool
	lastShow time.Time
}

// line is one input line: a decoded version, or why it could not be.
type line struct {
	v   *record.Version
	id  any
	err error
}

// run reads, checks and admits in a pipeline: while one batch commits, the
// next is decided, and the one after is parsed and its signatures
// verified.
func (imp *importer) run(ctx context.Context, in io.Reader) error {
	type prepared struct {
		lines []line
		p     *engine.Prepared
		err   error
	}
	batches := make(chan []line, 1)
	ready := make(chan prepared, 1)
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		var cur []line
		err := readValues(in, func(raw []byte, val any, perr error) error {
			l := line{err: perr}
			if perr == nil {
				l.id = idOf(val)
				l.v, l.err = record.FromValue(val)
			}
			cur = append(cur, l)
			if len(cur) == importBatch {
				select {
				case batches <- cur:
				case <-ctx.Done():
					return ctx.Err()
				}
				cur = nil
			}
			return nil
		})
		if len(cur) > 0 && err == nil {
			batches <- cur
		}
		readErr <- err
	}()
	go func() {
		defer close(ready)
		for ls := range batches {
			var vs []*record.Version
			for _, l := range ls {
				if l.v != nil {
					vs = append(vs, l.v)
				}
			}
			p, err := imp.st.Prepare(ctx, vs)
			ready <- prepared{ls, p, err}
			if err != nil {
				return
			}
		}
	}()
	// Each batch is decided while the one before it commits; outcomes are
	// printed once their batch is durable.
	type admitted struct {
		lines []line
		a     *engine.Admission
	}
	var last *admitted
	flush := func() error {
		if last == nil {
			return nil
		}
		outs, err := last.a.Wait()
		if err != nil {
			return err
		}
		return imp.print(last.lines, outs)
	}
	for b := range ready {
		if b.err != nil {
			return b.err
		}
		a, err := imp.st.Submit(ctx, imp.from, b.p)
		if err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		last = &admitted{b.lines, a}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := <-readErr; err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return nil
}

func (imp *importer) print(ls []line, outs []engine.Outcome) error {
	k := 0
	for _, l := range ls {
		var o *canonical.Object
		if l.v == nil {
			code, msg := reasonOf(l.err)
			o = canonical.NewObject("id", l.id, "outcome", "refused", "stored", "-", "reason", code, "message", msg)
		} else {
			out := outs[k]
			k++
			o = canonical.NewObject("id", out.ID, "outcome", out.Verdict.String(), "stored", out.Stored.String())
			if out.Refusal != nil {
				o.Set("reason", out.Refusal.Code)
				o.Set("message", out.Refusal.Message)
			}
		}
		outcome, _ := o.Get("outcome")
		imp.counts[outcome.(string)]++
		imp.n++
		if err := writeJSONLine(imp.s.out, o); err != nil {
			return err
		}
	}
	if imp.progress && time.Since(imp.lastShow) > 250*time.Millisecond {
		imp.lastShow = time.Now()
		fmt.Fprintf(imp.s.err, "\rimported %d versions (%.0f/s)   ", imp.n, float64(imp.n)/time.Since(imp.start).Seconds())
	}
	return nil
}

func (imp *importer) summary() {
	if imp.progress {
		fmt.Fprint(imp.s.err, "\r\033[K")
	}
	secs := time.Since(imp.start).Seconds()
	fmt.Fprintf(imp.s.err, "imported %d versions in %.1fs (%.0f/s): %d stand, %d withdrawn, %d later, %d refused\n",
		imp.n, secs, float64(imp.n)/secs, imp.counts["stands"], imp.counts["withdrawn"], imp.counts["later"], imp.counts["refused"])
}

// isTerminal reports whether w is a terminal, for progress lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
