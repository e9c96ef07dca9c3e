package main

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/space"
)

// The `minca space` subverbs that act through the node (06 §1.3,
// docs/spaces.md): they write the access history as the account.

// storeNamed reports whether --store was given on the command line (not
// only by $MINCA_STORE).
func storeNamed(fs *flags) bool {
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "store" })
	return named
}

// throughNode decides how a subverb that works both ways runs: through
// the node with --dir, or when no store is named; on the store --store
// (or $MINCA_STORE) names otherwise. --dir and --store together are bad
// usage.
func throughNode(fs *flags, sp *storeSpec, dir string) (bool, error) {
	switch {
	case dir != "" && storeNamed(fs):
		return false, usageError("--dir and --store: the node, or a store, not both")
	case dir != "":
		return true, nil
	}
	return sp.url == "", nil
}

func runSpaceCreate(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space create", "space create NAME [--private] [--roles JSON] [--dir DIR]\n\nMakes a space with the account as its first founder, through the node,\nwhich keeps it (and lists it in the account registry when it holds the\naccount key, 06 §1.3). --private makes a private space: its bodies, links\nand files are sealed under keys the node keeps in its directory\n(docs/private-spaces.md). --roles is {\"role\": [{\"cmd\", \"pol\"?}…]}.\nPrints {\"id\",\"genesis\"}.")
	dir := dirFlag(fs)
	roles := fs.String("roles", "", "the roles the space starts with, as `JSON`")
	private := fs.Bool("private", false, "make a private space (docs/private-spaces.md)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("space create takes a NAME")
	}
	body := map[string]any{"name": fs.Arg(0)}
	if *private {
		body["private"] = true
	}
	if *roles != "" {
		if !json.Valid([]byte(*roles)) {
			return usageError("--roles is JSON")
		}
		body["roles"] = json.RawMessage(*roles)
	}
	return callPrint(ctx, s, *dir, http.MethodPost, "/v1/spaces", body)
}

func runSpaceInvite(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space invite", "space invite SPACE [--role ROLE]… [--dir DIR]\n\nOpens an invite to SPACE for the roles, through the node, and prints\n{\"invite\"}: the text to hand over, as a secret, to the one joining (minca\nspace join INVITE).")
	dir := dirFlag(fs)
	var roles listFlag
	fs.Var(&roles, "role", "a `ROLE` the invite gives (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("space invite takes a SPACE")
	}
	return callPrint(ctx, s, *dir, http.MethodPost, spacePath(fs.Arg(0), "invites"), map[string]any{"roles": append([]string{}, roles...)})
}

func runSpaceMembers(ctx context.Context, s *stdio, args []string) error {
	return runSpaceState(ctx, s, "members", "Lists each member now as a JSON line {\"root\",\"founder\",\"roles\"}, founders\nfirst.", args,
		func(_ *space.History, st *space.State) []*canonical.Object { return space.MemberObjects(st) })
}

func runSpaceAssign(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space assign", "space assign SPACE MEMBER [--role ROLE]… [--dir DIR]\n\nGives MEMBER (a root DID) exactly these roles, through the node: more adds,\nfewer takes away. Prints the access change written.")
	dir := dirFlag(fs)
	var roles listFlag
	fs.Var(&roles, "role", "a `ROLE` the member holds (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("space assign takes SPACE and MEMBER")
	}
	return callPrint(ctx, s, *dir, http.MethodPost, spacePath(fs.Arg(0), "members"), map[string]any{"member": fs.Arg(1), "roles": append([]string{}, roles...)})
}

func runSpaceRemove(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space remove", "space remove SPACE MEMBER [--dir DIR]\n\nRemoves MEMBER through the node; what it holds of theirs is kept. Prints\nthe access change written.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("space remove takes SPACE and MEMBER")
	}
	return callPrint(ctx, s, *dir, http.MethodDelete, spacePath(fs.Arg(0), "members", fs.Arg(1)), nil)
}

func runSpaceLeave(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space leave", "space leave SPACE [--dir DIR]\n\nLeaves the space, through the node, and takes it off the account's list\n(06 §1.3): the account's own removal written, when it is a member.\nPrints {\"left\":SPACE}.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("space leave takes a SPACE")
	}
	return callPrint(ctx, s, *dir, http.MethodPost, spacePath(fs.Arg(0), "leave"), nil)
}

func runSpaceList(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space list", "space list [--dir DIR]\n\nLists the spaces the node keeps, a JSON line {\"id\",\"name\",\"visibility\"}\neach (\"registry\": true for the account registry).")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("space list takes no arguments")
	}
	return callLines(ctx, s, *dir, "/v1/spaces", "spaces", nil)
}
