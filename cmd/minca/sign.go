package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

// runSign signs unsigned versions (02 §3.3).
func runSign(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "sign", "sign --key FILE [--note NOTEFILE] [UNSIGNED…]\n\nReads unsigned versions (every member but id, bodyHash and signature; one\nJSON value, or JSON lines) from each UNSIGNED file in turn, or stdin; fills\nauthor and bodyHash (not on a delete), signs each (02 §3.3) and prints it as\none JSON line. With --note, FILE is a\nsession key and NOTEFILE the note from the account made out to it: each version\ncarries the note as its proof (06 §1.2), and its root is the note's issuer.\nA version takes what put takes: a collection lower case with at least one\ndot (app.todo), a body that is a JSON object, and a first version with no\nkey gets a fresh one of the signer's. A version peers would refuse for its\nshape (a first version at a key not the signer's, 02 §4.1, included), or a\nversion in a space that the note does not let the key write (02 §9.3), is\nnot signed: exit 2.")
	keyFile := fs.String("key", "", "the private key `FILE` to sign with (required)")
	noteFile := fs.String("note", "", "a `NOTEFILE` made out to the key: sign as a session key under it")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *keyFile == "" {
		fs.Usage()
		return usageError("--key FILE is required")
	}
	key, err := identity.ReadKeyFile(*keyFile)
	if err != nil {
		return usageError("%v", err)
	}
	var signer identity.Signer = key
	root := key.DID()
	var notes record.NoteChecker
	if *noteFile != "" {
		note, err := readNoteFile(*noteFile)
		if err != nil {
			return usageError("--note %s: %v", *noteFile, err)
		}
		session, err := identity.NewSessionSigner(key, note)
		if err != nil {
			return usageError("--note %s: %v", *noteFile, err)
		}
		signer, notes, root = session, noteChecker(), session.Root()
	}
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	n := 0
	err = eachInput(s, fs.Args(), func(in *input) error {
		err := readLines(newLineReader(in.r), func(line int, raw []byte, v any, perr error) error {
			n++
			at := fmt.Sprintf("%s line %d", in.label(), line)
			if perr != nil {
				return usageError("%s: %v", at, perr)
			}
			o, ok := v.(*canonical.Object)
			if !ok {
				return usageError("%s: an unsigned version is a JSON object", at)
			}
			if err := writable(o, root); err != nil {
				return usageError("%s: %v", at, err)
			}
			ver, err := record.Sign(o, signer)
			if err != nil {
				return usageError("%s: %v", at, err)
			}
			if ver.Space != "" {
				// Peers refuse a first version at a key that is not the
				// root's (02 §4.1): it is not signed.
				if err := record.CheckFirstKey(ver, root); err != nil {
					return usageError("%s: %v; a key of the account's comes from minca key fresh %s, or leave key out and sign makes one", at, err, root)
				}
			}
			if notes != nil {
				if err := checkUnderNote(s, ver, notes); err != nil {
					return usageError("%s: %v", at, err)
				}
			}
			return writeJSONLine(w, ver.Object())
		})
		return inputErr(in, err)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return usageError("no version in the input")
	}
	return nil
}

// checkUnderNote runs the capability gate (02 §9.3) on a version signed
// under a note, so a note that does not reach it is found before anyone
// sends it. A loose version (no space) is checked by its reader against
// what its collection needs (02 §3.5); here only its note's audience and
// signature were, by NewSessionSigner. byCreator is true of a first
// version (02 §7.1); of a later one only a holder of the record knows it,
// so there the version is refused only when the note grants it neither way.
func checkUnderNote(s *stdio, v *record.Version, notes record.NoteChecker) error {
	if v.Space == "" {
		return nil
	}
	gate := func(byCreator bool) error {
		_, err := record.Root(v, record.InvocationOf(v, v.Space, &byCreator), notes)
		return err
	}
	errTrue := gate(true)
	if v.Seq == 0 {
		return errTrue
	}
	errFalse := gate(false)
	if (errTrue == nil) == (errFalse == nil) {
		return errTrue
	}
	s.logger().Warn("the note grants this version only if its root created the record (byCreator "+strconv.FormatBool(errTrue == nil)+"); peers that hold the record decide", "id", v.ID)
	return nil
}

// writable checks what a writer writes beyond what peers check (as minca
// put does): a record's collection is a name a definition can have, and
// its body a JSON object. A first version in a space with no key gets a
// fresh key of root's (02 §4.1).
func writable(o *canonical.Object, root string) error {
	coll, _ := o.Get("collection")
	c, _ := coll.(string)
	if !record.IsSys(c) && !collection.ValidName(c) {
		return fmt.Errorf("collection %q: %s", c, node.CollectionRule)
	}
	if del, _ := o.Get("deleted"); del != true {
		if b, ok := o.Get("body"); !ok || !isObject(b) {
			return errors.New("body: " + node.BodyRule)
		}
	}
	if sp, _ := o.Get("space"); sp != nil && !o.Has("key") {
		if seq, _ := o.Get("seq"); seq == 0.0 {
			k, err := record.FreshKey(root)
			if err != nil {
				return err
			}
			o.Set("key", k)
		}
	}
	return nil
}

func isObject(v any) bool {
	_, ok := v.(*canonical.Object)
	return ok
}
