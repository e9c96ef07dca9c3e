package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
)

// nodeSpaceSubverbs are the `minca space` subverbs that act through the
// node (06 §1.3, docs/spaces.md): they write the access history.
func nodeSpaceSubverbs() []verb {
	return []verb{
		{"create", "make a space with the account as its founder, and keep it", runSpaceCreate},
		{"join", "keep a space: by an invite's text, or by its genesis (--genesis FILE)", runSpaceJoinNode},
		{"invite", "open an invite to a space for roles, and print its text", runSpaceInvite},
		{"members", "list a space's members now, with their roles", runSpaceMembersNode},
		{"assign", "give a member roles, or change them", runSpaceAssign},
		{"remove", "remove a member", runSpaceRemove},
		{"leave", "leave a space and take it off the account's list", runSpaceLeave},
		{"list", "list the spaces the node keeps", runSpaceList},
	}
}

func runSpaceCreate(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space create", "space create NAME [--roles JSON]\n\nMakes a public space with the account as its first founder and prints\n{\"id\",\"genesis\"}. --roles is {\"role\": [{\"cmd\", \"pol\"?}…]}.")
	dir := dirFlag(fs)
	roles := fs.String("roles", "", "the roles the space starts with, as JSON")
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 1 {
		return usageError("space create takes a NAME")
	}
	body := map[string]any{"name": pos[0]}
	if *roles != "" {
		if !json.Valid([]byte(*roles)) {
			return usageError("--roles is JSON")
		}
		body["roles"] = json.RawMessage(*roles)
	}
	return call(ctx, s, *dir, "POST", "/v1/spaces", body)
}

func runSpaceJoinNode(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space join", "space join INVITE | space join --genesis FILE [--id ID]\n\nKeeps a space: by an invite's text (minca-invite:…), joining as a member,\nor by its genesis, checked against --id when given.")
	dir := dirFlag(fs)
	gen := fs.String("genesis", "", "a file holding the space's genesis (- for stdin)")
	id := fs.String("id", "", "the space id the genesis must hash to")
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	switch {
	case len(pos) == 1 && *gen == "":
		return call(ctx, s, *dir, "POST", "/v1/spaces/join", map[string]any{"invite": pos[0]})
	case len(pos) == 0 && *gen != "":
		var b []byte
		if *gen == "-" {
			b, err = readAllLimited(s)
		} else {
			b, err = os.ReadFile(*gen)
		}
		if err != nil {
			return usageError("--genesis: %v", err)
		}
		if !json.Valid(b) {
			return usageError("--genesis: not JSON")
		}
		body := map[string]any{"genesis": json.RawMessage(b)}
		if *id != "" {
			body["id"] = *id
		}
		return call(ctx, s, *dir, "POST", "/v1/spaces/join", body)
	}
	return usageError("space join takes an INVITE, or --genesis FILE")
}

func readAllLimited(s *stdio) ([]byte, error) {
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for b.Len() < 16<<20 {
		n, err := s.in.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String()), nil
}

func runSpaceInvite(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space invite", "space invite SPACE [--role ROLE]…\n\nOpens an invite to SPACE for the roles and prints {\"invite\"}: the text to\nhand over, as a secret, to the one joining (minca space join INVITE).")
	dir := dirFlag(fs)
	var roles listFlags
	fs.Var(&roles, "role", "a role the invite gives (repeatable)")
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 1 {
		return usageError("space invite takes a SPACE")
	}
	return call(ctx, s, *dir, "POST", spacePath(pos[0], "invites"), map[string]any{"roles": append([]string{}, roles...)})
}

func runSpaceMembersNode(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space members", "space members SPACE\n\nLists the space's members now: {\"members\": [{\"member\",\"founder\",\"roles\"}…]}.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 1 {
		return usageError("space members takes a SPACE")
	}
	return call(ctx, s, *dir, "GET", spacePath(pos[0], "members"), nil)
}

func runSpaceAssign(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space assign", "space assign SPACE MEMBER [--role ROLE]…\n\nGives MEMBER (a root DID) exactly these roles: more adds, fewer takes away.")
	dir := dirFlag(fs)
	var roles listFlags
	fs.Var(&roles, "role", "a role the member holds (repeatable)")
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("space assign takes SPACE and MEMBER")
	}
	return call(ctx, s, *dir, "POST", spacePath(pos[0], "members"), map[string]any{"member": pos[1], "roles": append([]string{}, roles...)})
}

func runSpaceRemove(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space remove", "space remove SPACE MEMBER\n\nRemoves MEMBER; what the node holds of theirs is kept.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("space remove takes SPACE and MEMBER")
	}
	return call(ctx, s, *dir, "DELETE", spacePath(pos[0], "members", pos[1]), nil)
}

func runSpaceLeave(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space leave", "space leave SPACE\n\nLeaves the space and takes it off the account's list (06 §1.3).")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 1 {
		return usageError("space leave takes a SPACE")
	}
	return call(ctx, s, *dir, "POST", spacePath(pos[0], "leave"), nil)
}

func runSpaceList(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space list", "space list\n\nLists the spaces the node keeps: {\"spaces\": [{\"id\",\"name\",\"visibility\"}…]}.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 0 {
		return usageError("space list takes no arguments")
	}
	return call(ctx, s, *dir, "GET", "/v1/spaces", nil)
}
