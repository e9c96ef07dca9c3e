package main

import (
	"bufio"
	"context"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// runSign signs unsigned versions (02 §3.3).
func runSign(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "sign", "sign --key FILE < UNSIGNED\n\nReads an unsigned version (every member but id, bodyHash and signature; one\nJSON value, or JSON lines), fills author and bodyHash (not on a delete), signs\nit (02 §3.3) and prints the version as one JSON line. A version peers would\nrefuse for its shape is not signed: exit 2.")
	keyFile := fs.String("key", "", "the private key file to sign with (required)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *keyFile == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError("--key FILE is required")
	}
	key, err := identity.ReadKeyFile(*keyFile)
	if err != nil {
		return usageError("%v", err)
	}
	var signer identity.Signer = key
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	n := 0
	err = readValues(s.in, func(raw []byte, v any, perr error) error {
		n++
		if perr != nil {
			return usageError("input value %d: %v", n, perr)
		}
		o, ok := v.(*canonical.Object)
		if !ok {
			return usageError("input value %d: an unsigned version is a JSON object", n)
		}
		ver, err := record.Sign(o, signer)
		if err != nil {
			return usageError("input value %d: %v", n, err)
		}
		return writeJSONLine(w, ver.Object())
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return usageError("no version on stdin")
	}
	return nil
}
