package main

import (
	"context"
	"fmt"
	"io"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// keySubverbs are the subverbs of `minca key`.
func keySubverbs() []verb {
	return []verb{
		{"owner", "print the owner part of an account's keys (02 §4.1)", runKeyOwner},
		{"fresh", "print a new fresh owned key of an account (02 §4.1)", runKeyFresh},
		{"one", "print the onePer key of an unsigned version (02 §7.3)", runKeyOne},
	}
}

// runKey dispatches `minca key SUBVERB`.
func runKey(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "key", keySubverbs(), args)
}

// runSubverb runs one of a verb's subverbs (`minca VERB SUBVERB`, `minca
// VERB help SUBVERB`), or lists them: on stdout, exit 0, for --help; on
// stderr, exit 2, when none is named.
func runSubverb(ctx context.Context, s *stdio, name string, subs []verb, args []string) error {
	list := func(w io.Writer) {
		fmt.Fprintf(w, "usage: minca %s SUBVERB [flags] [ARGS]   (minca %s SUBVERB --help for each)\n\n", name, name)
		for _, v := range subs {
			fmt.Fprintf(w, "  %-14s %s\n", v.name, v.summary)
		}
	}
	if len(args) == 0 {
		list(s.err)
		return quiet(exitUsage)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || (args[0] == "help" && len(args) == 1) {
		list(s.out)
		return nil
	}
	if args[0] == "help" {
		args = append(append([]string{}, args[1:]...), "--help")
	}
	for _, v := range subs {
		if v.name == args[0] {
			return v.run(ctx, s, args[1:])
		}
	}
	return usageError("unknown subverb %q of %s (minca %s --help lists them)", args[0], name, name)
}

func runKeyOwner(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "key owner", "key owner DID\n\nPrints owner(DID), the 26-character owner part of the account's owned keys (02 §4.1).")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	did, err := rootArg(fs.Args())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, record.OwnerPart(did))
	return err
}

func runKeyFresh(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "key fresh", "key fresh DID\n\nPrints a new fresh key of the account: its owner part, a dot and 16 random\nbytes in base32 (02 §4.1).")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	did, err := rootArg(fs.Args())
	if err != nil {
		return err
	}
	key, err := record.FreshKey(did)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, key)
	return err
}

// rootArg takes the one DID argument, which must be a P-256 did:key.
func rootArg(args []string) (string, error) {
	if len(args) != 1 {
		return "", usageError("expected one argument, the account's did:key")
	}
	if _, err := identity.ParseDID(args[0]); err != nil {
		return "", usageError("%v", err)
	}
	return args[0], nil
}
