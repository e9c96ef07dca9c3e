package main

import (
	"context"
	"fmt"

	"github.com/minca-go/minca/identity"
)

// runKeygen writes a new P-256 key file and prints its did:key.
func runKeygen(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "keygen", "keygen --out FILE\n\nWrites a new P-256 private key to FILE (PEM PKCS #8, mode 0600; an existing\nfile is never overwritten) and prints its did:key.")
	out := fs.String("out", "", "the key `FILE` to write (required)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError("--out FILE is required")
	}
	k, err := identity.GenerateKey()
	if err != nil {
		return err
	}
	if err := identity.WriteKeyFile(*out, k); err != nil {
		return usageError("%v", err)
	}
	_, err = fmt.Fprintln(s.out, k.DID())
	return err
}
