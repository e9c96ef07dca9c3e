package main

import (
	"bufio"
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// noteSubverbs are the subverbs of `minca note`.
func noteSubverbs() []verb {
	return []verb{
		{"issue", "sign a note from an account key to another key (06 §2.5)", runNoteIssue},
		{"check", "check notes: shape, signature, time, and what they grant", runNoteCheck},
	}
}

// runNote dispatches `minca note SUBVERB`.
func runNote(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "note", noteSubverbs(), args)
}

func runNoteIssue(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "note issue", "note issue --key ROOTKEY --aud DID --cmd CMD [--sub SUB] [--pol JSON] [--days N]\n\nSigns a note (type minca/ucan/dlg@1) with the account's key ROOTKEY, made out\nto the key DID, granting CMD about SUB (the account itself by default, or\nspace:ID) under the policy JSON (a list of UCAN 1.0 statements, default []),\nin force from now for N days, and prints it as one JSON line.")
	keyFile := fs.String("key", "", "the account's private key `FILE`, the note's issuer (required)")
	aud := fs.String("aud", "", "the did:key `DID` the note is made out to (required)")
	cmd := fs.String("cmd", "", "the command `CMD` granted: \"/\" for everything, \"/record\" for records only, \"/record/read\" to read (required)")
	sub := fs.String("sub", "", "what the note is about, `SUB`: the issuer's DID (default) or space:ID")
	pol := fs.String("pol", "[]", "the policy, a `JSON` list of statements, e.g. [[\"==\", \".collection\", \"app.todo.item\"]]")
	days := fs.Float64("days", 7, "how long the note lasts, in `DAYS`; 0 for no exp")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *keyFile == "" || *aud == "" || *cmd == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError("--key, --aud and --cmd are required")
	}
	if *days < 0 || *days > 1e6 || math.IsNaN(*days) {
		return usageError("--days %v: a number of days from 0 to 1000000", *days)
	}
	key, err := identity.ReadKeyFile(*keyFile)
	if err != nil {
		return usageError("%v", err)
	}
	polValue, err := canonical.Parse([]byte(*pol))
	if err != nil {
		return usageError("--pol: %v", err)
	}
	statements, ok := polValue.([]any)
	if !ok {
		return usageError("--pol: a policy is a JSON list of statements")
	}
	now := time.Now().Unix()
	opts := identity.NoteOptions{Aud: *aud, Sub: *sub, Cmd: *cmd, Pol: statements, Nbf: now}
	if *days > 0 {
		opts.Exp = now + int64(math.Round(*days*86400))
	}
	n, err := identity.IssueNote(key, opts)
	if err != nil {
		return usageError("%v", err)
	}
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	return writeJSONLine(w, n.Object())
}

func runNoteCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "note check", "note check [--at TIME] [--aud DID] [--cmd CMD --space ID [--collection C]] [NOTEFILE]\n\nReads notes (one JSON value, or JSON lines) from NOTEFILE or stdin and prints\none JSON line per note: {\"valid\":true,\"iss\":…,\"aud\":…,\"sub\":…,\"cmd\":…} or\n{\"valid\":false,\"reason\":CODE,\"message\":…}. Valid means the shape is right\nand the signature verifies under iss; with --at, also nbf ≤ TIME < exp (records\nare judged with no time, 02 §9.3). --aud checks the audience; --cmd checks that\nthe note grants CMD with the arguments {space, collection}. Exit 0 when all are\nvalid, 1 when any is not, 2 on a usage or read error.")
	atFlag := fs.String("at", "", "check the time bounds at `TIME`: RFC 3339 (2026-09-26T12:00:00Z), Unix seconds, or \"now\"")
	aud := fs.String("aud", "", "the key `DID` that uses the note: its aud must be this")
	cmd := fs.String("cmd", "", "a command `CMD` the note must grant")
	space := fs.String("space", "", "with --cmd: the space `ID` it is invoked in")
	collection := fs.String("collection", "", "with --cmd: the collection `C` it is invoked on")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("note check takes at most one NOTEFILE")
	}
	var at *time.Time
	if *atFlag != "" {
		t, err := parseCheckTime(*atFlag)
		if err != nil {
			return usageError("--at: %v", err)
		}
		at = &t
	}
	var inv *identity.Invocation
	if *cmd != "" {
		if err := identity.CheckCommand(*cmd); err != nil {
			return usageError("--cmd %q: %v", *cmd, err)
		}
		inv = &identity.Invocation{Cmd: *cmd, Space: *space, Collection: *collection}
	} else if *space != "" || *collection != "" {
		return usageError("--space and --collection go with --cmd")
	}
	in, err := openInput(s, fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.close()
	checker := &identity.Checker{Resolver: &identity.Resolver{}}
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	var tally jsonTally
	err = readValues(in.r, func(raw []byte, v any, perr error) error {
		tally.add(perr)
		res := checkOneNote(checker, v, perr, *aud, at, inv)
		if res.Has("reason") {
			tally.refused++
		}
		return writeJSONLine(w, res)
	})
	if err != nil {
		return inputErr(in, err)
	}
	if tally.values == 0 {
		return usageError("no note on input")
	}
	return tally.exit()
}

// checkOneNote is the verdict line for one note.
func checkOneNote(c *identity.Checker, v any, perr error, aud string, at *time.Time, inv *identity.Invocation) *canonical.Object {
	fail := func(err error) *canonical.Object {
		code, msg := reasonOf(err)
		var ne *identity.NoteError
		if errors.As(err, &ne) {
			msg = ne.Message
		}
		return canonical.NewObject("valid", false, "reason", code, "message", msg)
	}
	if perr != nil {
		return fail(perr)
	}
	n, err := identity.DecodeNote(v)
	if err != nil {
		return fail(err)
	}
	if err := c.CheckValid(n, at); err != nil {
		return fail(err)
	}
	res := canonical.NewObject("valid", true, "iss", n.Iss, "aud", n.Aud, "sub", n.Sub, "cmd", n.Cmd)
	if n.HasNbf {
		res.Set("nbf", n.Nbf)
	}
	if n.HasExp {
		res.Set("exp", n.Exp)
	}
	if _, err := n.Policy(); err != nil {
		res.Set("policy", err.Error()) // valid, but it grants nothing
	}
	if aud != "" && n.Aud != aud {
		return fail(c.Check(n, aud, at, nil))
	}
	if inv != nil {
		if err := n.Grants(inv); err != nil {
			return fail(err)
		}
		res.Set("grants", inv.Cmd)
	}
	return res
}

// parseCheckTime reads --at.
func parseCheckTime(s string) (time.Time, error) {
	if s == "now" {
		return time.Now(), nil
	}
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0), nil
	}
	t, err := record.ParseTime(s)
	if err != nil {
		return time.Time{}, errors.New(`not a time: RFC 3339 (2026-09-26T12:00:00Z), Unix seconds, or "now"`)
	}
	return t, nil
}

// readNoteFile reads the note a session key signs under (sign --note).
func readNoteFile(path string) (*identity.Note, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n, err := identity.ParseNote(b)
	if err != nil {
		return nil, err
	}
	return n, nil
}
