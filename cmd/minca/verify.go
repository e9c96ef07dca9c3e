package main

import (
	"bufio"
	"context"
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// runVerify runs every check a version alone allows and prints a verdict
// per version.
func runVerify(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "verify", "verify [--loose COLLECTION] [FILE…]\n\nReads versions (one JSON value, or JSON lines) from each FILE in turn, or\nstdin, and prints one JSON line per version: {\"id\":…,\"ok\":true} or\n{\"id\":…,\"ok\":false,\"reason\":CODE,\"message\":…}. Checks shape (02 §4.6),\nthe signature (§3.3), the key of a first version (§4.1) and, for versions\nwith a proof, the capability gate (§9.3) in the version's own space and\ncollection. With --loose, checks loose versions of COLLECTION (§3.5). Exit 0\nwhen all pass, 1 when any is refused, 2 on a usage or read error or when no\ninput value is JSON at all.")
	loose := fs.String("loose", "", "check loose versions (02 §3.5) of this `COLLECTION`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	c := &versionChecker{verifier: &record.Verifier{}, notes: noteChecker()}
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	var tally jsonTally
	err := eachInput(s, fs.Args(), func(in *input) error {
		err := readValues(in.r, func(raw []byte, v any, perr error) error {
			tally.add(perr)
			res := canonical.NewObject("id", idOf(v), "ok", true)
			if err := perr; err == nil {
				if *loose != "" {
					err = c.checkLoose(v, *loose)
				} else {
					err = c.check(v)
				}
				perr = err
			}
			if perr != nil {
				tally.refused++
				res.Set("ok", false)
				code, msg := reasonOf(perr)
				res.Set("reason", code)
				res.Set("message", msg)
			}
			return writeJSONLine(w, res)
		})
		return inputErr(in, err)
	})
	if err != nil {
		return err
	}
	return tally.exit()
}

// versionChecker holds what checking versions one after another shares.
type versionChecker struct {
	verifier *record.Verifier
	notes    record.NoteChecker
}

// check is every check of a version alone: shape, crypto, the first
// version's key against its root, and the capability gate.
func (c *versionChecker) check(val any) error {
	v, err := record.FromValue(val)
	if err != nil {
		return err
	}
	if err := c.verifier.Verify(v); err != nil {
		return err
	}
	root, err := record.Root(v, record.InvocationOf(v, v.Space, nil), c.notes)
	if err != nil {
		return err
	}
	return record.CheckFirstKey(v, root)
}

func (c *versionChecker) checkLoose(val any, collection string) error {
	v, err := record.FromValue(val)
	if err != nil {
		return err
	}
	lc := &record.LooseChecker{Verifier: c.verifier, Notes: c.notes}
	_, err = lc.Check(v, collection)
	return err
}

// idOf is the id member of a value, or null.
func idOf(v any) any {
	if o, ok := v.(*canonical.Object); ok {
		if id, ok := o.Get("id"); ok {
			if s, ok := id.(string); ok {
				return s
			}
		}
	}
	return nil
}

// reasonOf turns a refusal into its reason code and message.
func reasonOf(err error) (string, string) {
	var r *record.Refusal
	if errors.As(err, &r) {
		return r.Code, r.Message
	}
	var ce *canonical.Error
	if errors.As(err, &ce) {
		return ce.Code, ce.Error()
	}
	type coded interface{ ReasonCode() string }
	var c coded
	if errors.As(err, &c) {
		return c.ReasonCode(), err.Error()
	}
	return "error", err.Error()
}
