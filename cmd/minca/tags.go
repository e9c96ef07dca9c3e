package main

import (
	"bufio"
	"context"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
)

// runTags prints the topic tags versions must carry (02 §8).
func runTags(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "tags", "tags --space ID [--k0 HEX] --def FILE [VERSIONS]\n\nReads versions (one JSON value, or JSON lines; their body and links, in a\nprivate space the plaintext ones) from VERSIONS or stdin and prints, for\neach, {\"tags\":[…]}: the tags it must carry under the definition's topics\n(02 §8.3), each once, sorted, at most 64; [] when it carries no tags member,\nas a delete does. Without --k0 the space is public; with it, the key is the\nprivate space key the body was sealed with (K₀ for a body sealed under the\nfirst key). Exit 2 on bad input.")
	space := fs.String("space", "", "the space's `ID`")
	k0 := fs.String("k0", "", "a private space: the space key the body was sealed with, 32 bytes in `HEX`")
	defFile := fs.String("def", "", "the collection's definition body (02 §6.1), a JSON `FILE`")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("tags takes at most one argument, a file of versions")
	}
	raw, err := spaceKey(*space, *k0)
	if err != nil {
		return err
	}
	d, err := readDefinition(*defFile)
	if err != nil {
		return err
	}
	k := collection.PublicTagKey(*space)
	if raw != nil {
		if k, err = collection.PrivateTagKey(raw); err != nil {
			return usageError("%v", err)
		}
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
			return usageError("version %d is not JSON: %v", n, perr)
		}
		n++
		c, deleted, err := contentOf(v, d)
		if err != nil {
			return err
		}
		tags := []string{}
		if !deleted {
			got, err := d.Tags(k, c)
			if err != nil {
				return usageError("%v", err)
			}
			tags = append(tags, got...)
		}
		return writeJSONLine(w, canonical.NewObject("tags", tags))
	})
	return inputErr(in, err)
}
