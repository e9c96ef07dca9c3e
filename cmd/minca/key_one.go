package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
)

// runKeyOne prints the onePer key of an unsigned version (02 §7.3).
func runKeyOne(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "key one", "key one --space ID [--k0 HEX] --def FILE --author DID [VERSION]\n\nReads an unsigned version (its body and links; in a private space the\nplaintext ones) from VERSION or stdin and prints the key its collection's\nonePer rule derives for it (02 §7.3): owned by DID's account when the rule\nnames @author, shared otherwise. Without --k0 the space is public; with it,\nK₀ is the private space's first key. Exit 1 with the missing part named\nwhen the version has no key, 2 on bad input or a definition without onePer.")
	space := fs.String("space", "", "the space's `ID`")
	k0 := fs.String("k0", "", "a private space's first key K₀, 32 bytes in `HEX`")
	defFile := fs.String("def", "", "the collection's definition body (02 §6.1), a JSON `FILE`")
	author := fs.String("author", "", "the writer's root: the account's did:key `DID`, not a session key's")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("key one takes at most one argument, a version file")
	}
	raw, err := spaceKey(*space, *k0)
	if err != nil {
		return err
	}
	if *author == "" {
		return usageError("--author DID is required: the writer's root")
	}
	if _, err := identity.ParseDID(*author); err != nil {
		return usageError("--author: %v", err)
	}
	d, err := readDefinition(*defFile)
	if err != nil {
		return err
	}
	if !d.Rules.HasOnePer() {
		return usageError("the definition of %s has no onePer rule (02 §7.3)", d.Name)
	}
	v, err := readOneValue(s, fs.Arg(0))
	if err != nil {
		return err
	}
	c, deleted, err := contentOf(v, d)
	if err != nil {
		return err
	}
	if deleted {
		return usageError("a delete is a later version: it keeps the key it has (02 §7.3)")
	}
	k := collection.PublicOneKey(*space)
	if raw != nil {
		if k, err = collection.PrivateOneKey(raw); err != nil {
			return usageError("%v", err)
		}
	}
	key, err := d.OnePerKey(k, *author, c)
	if errors.Is(err, collection.ErrNoKey) {
		return failed(err)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.out, key)
	return err
}
