package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/internal/lockholder"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
	"github.com/minca-go/minca/store"
)

// Exit codes of the command line contract (docs/cli.md).
const (
	exitOK          = 0
	exitFailed      = 1 // a check failed: a refused version, a bad segment, a problem found
	exitUsage       = 2 // bad usage or unreadable input
	exitNotFound    = 3 // a record, a store or a blob store is not there
	exitUnreachable = 4 // a store, bucket or peer could not be reached: try again
	exitSIGINT      = 130
	exitSIGTERM     = 143
)

// exitError carries an exit code out of a verb. A nil error means exit 0.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageError reports bad flags, arguments or input: exit 2.
func usageError(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// failed reports that a check failed: exit 1, unless err is one the
// central mapping (exitCodeOf) gives another code. Its message, if any, is
// printed.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// notFound reports that what was asked for is not held: exit 3.
func notFound(format string, a ...any) error {
	return &exitError{code: exitNotFound, err: fmt.Errorf(format, a...)}
}

// errQuiet marks an exit whose reason the verb already printed.
var errQuiet = errors.New("quiet")

// quiet is an exit with code whose reason the verb has printed.
func quiet(code int) error { return &exitError{code: code, err: errQuiet} }

// jsonTally counts the values a verb that judges each one read: it exits
// 1 when any was refused, and 2 when there were values but none was JSON
// (the input is not what the verb reads at all).
type jsonTally struct {
	values, notJSON, refused int
}

func (t *jsonTally) add(parseErr error) {
	t.values++
	if parseErr != nil {
		t.notJSON++
	}
}

func (t *jsonTally) exit() error {
	switch {
	case t.values > 0 && t.notJSON == t.values:
		return usageError("the input is not JSON (%d values refused)", t.values)
	case t.refused > 0:
		return quiet(exitFailed)
	}
	return nil
}

// exitCodeOf is the one mapping from a verb's error to its exit code: the
// engine's sentinels first (a damaged store is a failed check even where
// something was also not found), then the code a verb chose, and 1 for
// any other failure.
func exitCodeOf(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, engine.ErrCorrupt), errors.Is(err, mirror.ErrBadSegment),
		errors.Is(err, mirror.ErrBlobStoreChanged), errors.Is(err, mirror.ErrBlobStoreShrunk):
		return exitFailed // damage, or a blob store that is not the one remembered
	case errors.Is(err, engine.ErrNoStore), errors.Is(err, engine.ErrNotFound), errors.Is(err, engine.ErrBlobStoreGone):
		return exitNotFound
	case errors.Is(err, engine.ErrUnreachable):
		return exitUnreachable
	case errors.Is(err, s3.ErrConfig), errors.Is(err, store.ErrBadURL):
		return exitUsage // what to set or fix is in the message
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return apiExitCode(ae)
	}
	return exitFailed
}

// apiExitCode is the exit code of an error the node's API answered with
// (docs/api.md, Errors): what is not there is not found, a request it
// cannot read is bad usage, a node closing or a subscriber dropped is
// worth trying again, and a refusal is a failed check.
func apiExitCode(ae *api.Error) int {
	switch {
	case ae.Status == http.StatusNotFound:
		return exitNotFound
	case ae.Status == http.StatusBadRequest, ae.Status == http.StatusRequestEntityTooLarge:
		return exitUsage
	case ae.Status == http.StatusServiceUnavailable, ae.Code == api.CodeSlow, ae.Code == api.CodeClosed:
		return exitUnreachable
	}
	return exitFailed
}

// exitCode prints a verb's error on stderr and returns its exit code. A
// run cut short by SIGINT or SIGTERM exits 130 or 143 whatever the verb
// returned: what it finished is kept, and running it again goes on.
//
// What the verb's stores lack (s.damage) is said first, and makes the exit
// 1 where it would have been 0 or 3 (what was not found may have been in a
// bad segment).
func exitCode(ctx context.Context, s *stdio, name string, err error) int {
	err = hint(name, err)
	code := exitCodeOf(err)
	for _, d := range s.damage {
		if code == exitOK || code == exitNotFound {
			code = exitFailed
		}
		s.printError(name, fmt.Errorf("%w (what it held is missing from this answer)", d), code)
	}
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) {
		code = in.code()
		if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, errQuiet)) {
			err = nil // the verb said what it finished; the cause is the signal
		}
		if err == nil {
			s.printError(name, in, code)
			return code
		}
	}
	if err != nil && !errors.Is(err, errQuiet) {
		s.printError(name, err, code)
	}
	return code
}

// printError says why a verb failed, last on stderr: a plain line for
// people, or with --log-format json a log record like every other line.
func (s *stdio) printError(name string, err error, code int) {
	if s.format() == "json" {
		s.logger().Error(err.Error(), "verb", name, "exit", code)
		return
	}
	fmt.Fprintf(s.err, "minca %s: %v\n", name, err)
}

// interrupted is the cause of a context cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (i *interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

// code is the shell's convention, 128 + the signal's number.
func (i *interrupted) code() int {
	if i.sig == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// interruptible returns a context cancelled, with an *interrupted cause, by
// the first SIGINT or SIGTERM. After the first, the signals' default action
// is back: a second Ctrl-C ends the process at once. stop releases the
// signals.
func interruptible(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(&interrupted{sig: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		cancel(nil)
	}
}

// hint says what to do about an error a person can act on: a node
// directory or a store another process holds (the node running there is
// the way in for the node's verbs), a blob store to adopt.
func hint(name string, err error) error {
	var le *node.LockedError
	if errors.As(err, &le) {
		who := "another process"
		if le.Holder.PID != 0 {
			who = le.Holder.String()
		}
		return &exitError{code: exitFailed, err: fmt.Errorf("the node directory %s is in use by %s: a node runs there, and the verbs (minca put, get, query, space, backup …) go through it; stop it to run minca %s there", le.Dir, who, name)}
	}
	if errors.Is(err, mirror.ErrBlobStoreChanged) || errors.Is(err, mirror.ErrBlobStoreShrunk) {
		return fmt.Errorf("%w; run again with --adopt to take it as found and write everything there again", err)
	}
	var ae *api.Error
	if name == "put" && errors.As(err, &ae) && ae.Code == api.CodeTooLarge {
		return fmt.Errorf("%w: a record's body holds the fields an app shows, not a file's bytes; big content goes in files the version names (minca put --attach PATH)", err)
	}
	var h lockholder.Holder
	if errors.Is(err, engine.ErrLocked) && errors.As(err, &h) && (strings.HasSuffix(h.Command, " serve") || strings.HasSuffix(h.Command, " home")) {
		return fmt.Errorf("%w: stop it first, or use the verbs that go through the node running there (minca backup --to, minca restore --from, minca put, get, query, space …)", err)
	}
	return err
}
