package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// collectionSubverbs are the subverbs of `minca collection`.
func collectionSubverbs() []verb {
	return []verb{
		{"check", "check a definition body: valid, or every reason it is not (02 §6)", runCollectionCheck},
		{"validate", "flag a body against a definition's schema (02 §6.2, §9.6)", runCollectionValidate},
	}
}

// runCollection dispatches `minca collection SUBVERB`.
func runCollection(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "collection", collectionSubverbs(), args)
}

func runCollectionCheck(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "collection check", "collection check [FILE] < DEFINITION\n\nReads a definition body (02 §6.1) from FILE or stdin and prints\n{\"valid\":true}, or {\"valid\":false,\"reasons\":[{\"code\",\"path\",\"message\"}…]}\nwith every reason it is invalid. Exit 0 when valid, 1 when not, 2 when the\ninput is not JSON.")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("collection check takes at most one argument, a file")
	}
	v, err := readOneValue(s, fs.Arg(0))
	if err != nil {
		return err
	}
	_, err = collection.ParseDefinition(v)
	var inv *collection.Invalid
	switch {
	case err == nil:
		return writeJSON(s, map[string]any{"valid": true})
	case errors.As(err, &inv):
		if werr := writeJSON(s, map[string]any{"valid": false, "reasons": inv.Reasons}); werr != nil {
			return werr
		}
		return &exitError{code: exitFailed, err: errQuiet}
	}
	return err
}

func runCollectionValidate(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "collection validate", "collection validate --def FILE [BODIES]\n\nReads bodies (one JSON value, or JSON lines) from BODIES or stdin and\nprints one JSON line per issue, {\"n\",\"code\",\"path\",\"message\"}, where n\ncounts bodies from 0: where the body does not fit the definition's schema\n(02 §6.2). Issues are a reader's flags, never a reason to refuse (§9.6):\nexit 0 even when there are some. Exit 2 on bad input: a body that is not\nJSON, or a definition that is not JSON or is invalid.")
	defFile := fs.String("def", "", "the definition body (02 §6.1), a JSON `FILE`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("collection validate takes at most one argument, a file of bodies")
	}
	d, err := readDefinition(*defFile)
	if err != nil {
		return err
	}
	in, err := openInput(s, fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.close()
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	n := 0
	err = readValues(in.r, func(raw []byte, v any, perr error) error {
		if perr != nil {
			return usageError("body %d: %v", n, perr)
		}
		for _, is := range d.Schema.Validate(v) {
			if err := writeJSONLine(w, canonical.NewObject("n", n, "code", is.Code, "path", is.Path, "message", is.Message)); err != nil {
				return err
			}
		}
		n++
		return nil
	})
	return inputErr(in, err)
}

// inputErr passes exit errors through and makes any other, from reading
// in, a usage error naming it.
func inputErr(in *input, err error) error {
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return usageError("reading %s: %v", in.label(), err)
}

// readOneValue reads one JSON value from a file, or stdin for "" or "-".
func readOneValue(s *stdio, path string) (any, error) {
	data, err := readAll(s, path)
	if err != nil {
		return nil, err
	}
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, usageError("input is not JSON: %v", err)
	}
	return v, nil
}

// readDefinition reads a definition body from a file; one that is invalid
// is bad input, with every reason.
func readDefinition(path string) (*collection.Definition, error) {
	if path == "" {
		return nil, usageError("--def FILE is required: the collection's definition body")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("%v", err)
	}
	v, err := canonical.Parse(data)
	if err != nil {
		return nil, usageError("--def %s is not JSON: %v", path, err)
	}
	d, err := collection.ParseDefinition(v)
	if err != nil {
		var inv *collection.Invalid
		if errors.As(err, &inv) {
			msg := fmt.Sprintf("--def %s is not a valid definition (02 §6.1):", path)
			for _, r := range inv.Reasons {
				msg += "\n  " + r.String()
			}
			return nil, usageError("%s", msg)
		}
		return nil, usageError("--def %s: %v", path, err)
	}
	return d, nil
}

// spaceKey reads --space and --k0: the space's id, and for a private space
// the 32-byte key in hex.
func spaceKey(space, keyHex string) ([]byte, error) {
	if space == "" {
		return nil, usageError("--space ID is required: the space's id")
	}
	if _, err := canonical.ParseID(space); err != nil {
		return nil, usageError("--space %q is not a space id: %v", space, err)
	}
	if keyHex == "" {
		return nil, nil
	}
	k, err := hex.DecodeString(keyHex)
	if err != nil || len(k) != collection.KeyLen {
		return nil, usageError("--k0 is %d bytes in hex (%d hex digits)", collection.KeyLen, 2*collection.KeyLen)
	}
	return k, nil
}

// contentOf reads a version's content as the tools take it: an object whose
// body and links members (the plaintext ones, in a private space) are read;
// a collection member, if any, must be the definition's. deleted reports a
// delete, which has no content.
func contentOf(v any, d *collection.Definition) (c collection.Content, deleted bool, err error) {
	o, ok := v.(*canonical.Object)
	if !ok {
		return c, false, usageError("a version is a JSON object")
	}
	if coll, ok := o.Get("collection"); ok && coll != d.Name {
		return c, false, usageError("the version's collection %v is not the definition's, %s", coll, d.Name)
	}
	if del, _ := o.Get("deleted"); del == true {
		return c, true, nil
	}
	body, ok := o.Get("body")
	if !ok {
		return c, false, usageError("the version has no body: its content is what the key and tags are made of")
	}
	c.Body = body
	if links, ok := o.Get("links"); ok {
		ls, err := record.ParseLinks(links)
		if err != nil {
			return c, false, usageError("%v", err)
		}
		c.Links = ls
	}
	return c, false, nil
}
