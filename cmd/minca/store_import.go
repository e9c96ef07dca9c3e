package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/internal/progress"
	"github.com/minca-go/minca/record"
)

func runStoreImport(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "store import", `store import [--store URL] [--judge full|roots] [FILE…]

Admits versions (JSON lines, or one JSON value) from each FILE in turn, or
stdin, through the node's judge — by default the full judge, which needs each
space's genesis (minca space join) — in atomic synced batches. Prints one
line per version once its batch is durable:
{"id","outcome":"stands|withdrawn|later|refused","stored":"whole|stub|-"},
and for a refused one also "reason", "message" and "line" (its line in the
input; "file" too when there are several). Progress and a summary go to
stderr. Exit 0 when nothing was refused, 1 when a version was, 2 when no
input line is JSON or the input cannot be read. Interrupted (SIGINT, exit
130; SIGTERM, exit 143), it prints the line of every version committed,
then "interrupted after N of M lines; run again to continue": importing
again skips what is held. Its memory is flat in the input's size: each part
is bounded by --memory (docs/stores.md, Memory of store import).`)
	sp := storeFlags(fs, true)
	sp.mem = newImportMemory()
	fs.Var(memoryFlag(sp.mem), "memory", memoryHelp())
	from := fs.String("from", "import", "the source `NAME` in remembered refusals")
	judgeFlag(fs, sp)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	var ins []*input
	defer func() {
		for _, in := range ins {
			in.close()
		}
	}()
	for _, p := range paths {
		in, err := openInput(s, p)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	sto, err := sp.open(ctx, createStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	sp.mem.forBatch(sto.Engine().ImportBatch())
	defer sp.mem.limitHeap()()
	log := s.logger()
	imp := &importer{s: s, sp: sp, log: log, st: sto.Engine(), from: *from, ins: ins, start: time.Now(), counts: map[string]int{}, held: -1}
	if st, err := imp.st.Stats(ctx); err == nil {
		imp.held = st.Versions + st.Waiting
	}
	imp.meter = newMeter(s, log, "store import")
	err = imp.run(ctx, ins)
	imp.meter.Done()
	if ctx.Err() == nil {
		// What was committed goes to a folder: or s3:// store's blob
		// store, also when the input failed part way.
		err = errors.Join(err, sto.Flush(ctx))
	}
	return imp.finish(ctx, err)
}

// importer is one run of store import.
type importer struct {
	s      *stdio
	sp     *storeSpec
	log    *slog.Logger
	st     *engine.Store
	from   string
	ins    []*input
	start  time.Time
	meter  *progress.Meter
	counts map[string]int // outcome lines printed, by outcome
	n      int            // outcome lines printed
	values int            // of them, values that were JSON
	// read counts the values read so far and bytesRead their bytes;
	// written by the reading goroutine.
	read, bytesRead atomic.Int64
	// rest is the values not read when the run stopped early (-1 when not
	// known: input from a pipe); set by the reading goroutine before it
	// closes readDone.
	rest     int
	readDone chan struct{}
	// held is what the store held before the run (versions and waiting
	// ones), so the summary can say how many were new; -1 when not read.
	held int64
}

// line is one input value: a decoded version, or why it could not be.
type line struct {
	v    *record.Version
	id   any
	err  error
	json bool   // the value was JSON
	file string // the input it came from
	n    int    // its line there
}

// run reads, checks and admits in a pipeline (engine.Pipeline): while one
// batch commits, the next is decided, and the one after is parsed and its
// signatures verified. Outcomes are printed once their batch is durable;
// when the run stops early (an interruption, a failed commit) every batch
// submitted before is waited for and printed, so no committed version
// goes unsaid.
func (imp *importer) run(parent context.Context, ins []*input) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	p := engine.NewPipeline(ctx, imp.st, imp.from, engine.Stages[[]line]{
		Versions: func(_ context.Context, ls []line) ([]*record.Version, error) {
			vs := make([]*record.Version, 0, len(ls))
			for _, l := range ls {
				if l.v != nil {
					vs = append(vs, l.v)
				}
			}
			return vs, nil
		},
		Done: func(ls []line, r engine.Result) error {
			err := r.Err
			if err == nil {
				err = imp.print(ls, r.Outcomes)
			}
			if err != nil {
				cancel() // the reader stops
			}
			return err
		},
	})
	var readErr error
	imp.readDone = make(chan struct{})
	go func() {
		defer close(imp.readDone)
		readErr = imp.readAll(ctx, parent, ins, p)
	}()
	select {
	case <-imp.readDone:
	case <-ctx.Done(): // interrupted, or a batch failed: the reader may wait on a pipe
	}
	err := p.Close()
	if parent.Err() != nil {
		return parent.Err()
	}
	if err != nil {
		return err
	}
	<-imp.readDone
	return readErr
}

// readAll reads every input into batches of lines for p. When parent is
// cancelled (an interruption) it stops, and counts the values left unread
// if every input left is a regular file.
func (imp *importer) readAll(ctx, parent context.Context, ins []*input, p *engine.Pipeline[[]line]) error {
	imp.rest = -1
	var cur []line
	batch := imp.st.ImportBatch() // the backend's: one synced commit each
	send := func() error {
		err := p.Add(ctx, cur)
		cur = nil
		return err
	}
	for i, in := range ins {
		lr := newLineReader(&countingReader{r: in.r, n: &imp.bytesRead})
		err := readLines(lr, func(n int, raw []byte, val any, perr error) error {
			l := line{err: perr, json: perr == nil, file: in.label(), n: n}
			if perr == nil {
				l.id = idOf(val)
				l.v, l.err = record.FromValue(val)
			}
			imp.read.Add(1)
			cur = append(cur, l)
			if len(cur) == batch {
				return send()
			}
			return nil
		})
		if err != nil {
			if parent.Err() != nil {
				imp.countRest(lr, ins[i:])
				return parent.Err()
			}
			return inputErr(in, err)
		}
	}
	if len(cur) > 0 {
		if err := send(); err != nil {
			if parent.Err() != nil {
				imp.rest = 0
			}
			return err
		}
	}
	imp.rest = 0
	return nil
}

// countRest counts the values not read yet: the rest of lr (reading the
// first of ins) and the inputs after it. Only regular files are counted:
// a pipe's writer may never stop.
func (imp *importer) countRest(lr *lineReader, ins []*input) {
	if !imp.allRegular() {
		return
	}
	rest, err := lr.countRest()
	if err != nil {
		return
	}
	for _, in := range ins[1:] {
		n, err := newLineReader(in.r).countRest()
		if err != nil {
			return
		}
		rest += n
	}
	imp.rest = rest
}

func (imp *importer) print(ls []line, outs []engine.Outcome) error {
	k := 0
	for _, l := range ls {
		var o *canonical.Object
		if l.v == nil {
			code, msg := reasonOf(l.err)
			o = canonical.NewObject("id", l.id, "outcome", "refused", "stored", "-", "reason", code, "message", msg, "line", l.n)
			if len(imp.ins) > 1 {
				o.Set("file", l.file)
			}
		} else {
			out := outs[k]
			k++
			o = canonical.NewObject("id", out.ID, "outcome", out.Verdict.String(), "stored", out.Stored.String())
			if out.Refusal != nil {
				o.Set("reason", out.Refusal.Code)
				o.Set("message", out.Refusal.Message)
				o.Set("line", l.n)
				if len(imp.ins) > 1 {
					o.Set("file", l.file)
				}
			}
		}
		outcome, _ := o.Get("outcome")
		imp.counts[outcome.(string)]++
		imp.n++
		if l.json {
			imp.values++
		}
		if err := writeJSONLine(imp.s.out, o); err != nil {
			return err
		}
	}
	imp.meter.Update(progress.Status{
		Text:  fmt.Sprintf("%s versions, %s refused", progress.Count(int64(imp.n)), progress.Count(int64(imp.counts["refused"]))),
		Done:  imp.bytesRead.Load(),
		Total: imp.totalBytes(),
	})
	return nil
}

// allRegular reports whether every input is a regular file, which can be
// read to its end without waiting on a writer.
func (imp *importer) allRegular() bool {
	for _, in := range imp.ins {
		if !in.regular {
			return false
		}
	}
	return true
}

// totalBytes is the size of all the input, or 0 when some is unknown.
func (imp *importer) totalBytes() int64 {
	var t int64
	for _, in := range imp.ins {
		if in.size < 0 {
			return 0
		}
		t += in.size
	}
	return t
}

// finish says how the run ended, on stderr, and gives its exit: err from
// run; an interruption is the signal's exit (exitCode), after the count
// of what was done.
func (imp *importer) finish(ctx context.Context, err error) error {
	secs := time.Since(imp.start).Seconds()
	msg := fmt.Sprintf("imported %d %s in %.1fs: %d stand, %d withdrawn, %d later, %d refused", imp.n, plural(imp.n, "version", "versions"), secs,
		imp.counts["stands"], imp.counts["withdrawn"], imp.counts["later"], imp.counts["refused"])
	attrs := []any{"versions", imp.n, "seconds", roundTo(secs, 3), "perSecond", roundTo(float64(imp.n)/max(secs, 1e-9), 0),
		"stands", imp.counts["stands"], "withdrawn", imp.counts["withdrawn"], "later", imp.counts["later"], "refused", imp.counts["refused"]}
	if st, serr := imp.st.Stats(context.WithoutCancel(ctx)); serr == nil && imp.held >= 0 {
		// A run again over the same input takes in nothing new: say so.
		fresh := min(max(st.Versions+st.Waiting-imp.held, 0), int64(imp.n-imp.counts["refused"]))
		already := int64(imp.n-imp.counts["refused"]) - fresh
		msg += fmt.Sprintf("; %d new, %d already held", fresh, already)
		attrs = append(attrs, "new", fresh, "alreadyHeld", already)
	}
	imp.log.Info(msg, attrs...)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		rest := -1
		if imp.allRegular() {
			<-imp.readDone // it stops soon: it reads no pipe
			rest = imp.rest
		}
		if rest >= 0 {
			imp.log.Warn(fmt.Sprintf("interrupted after %d of %d lines; run again to continue", imp.n, int(imp.read.Load())+rest))
		} else {
			imp.log.Warn(fmt.Sprintf("interrupted after %d of at least %d lines; run again to continue", imp.n, imp.read.Load()))
		}
		return quiet(exitFailed)
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return imp.sp.failed(err)
	}
	switch {
	case imp.n > 0 && imp.values == 0:
		return usageError("no input line is JSON: is this a file of versions?")
	case imp.counts["refused"] > 0:
		return quiet(exitFailed)
	}
	return nil
}

// countingReader counts the bytes read through it, for progress.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// roundTo rounds x to d decimals, for figures in logs.
func roundTo(x float64, d int) float64 {
	p := 1.0
	for range d {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}
