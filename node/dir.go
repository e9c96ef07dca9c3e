package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/identity"
)

// DirInfo is what a node directory holds, read without opening the node:
// nothing is locked, made or changed (so it can be read while a node runs
// there).
type DirInfo struct {
	Dir string
	// Account is the account the node acts for: its key's did:key, else
	// the issuer of the session's note; "" when there is neither.
	Account string
	// AccountKey: the directory holds the account key (account.key).
	AccountKey bool
	// Session is the session key's did:key; "" when there is none.
	Session string
	// Note: the directory holds a note for its session key.
	Note bool
	// Store: the directory records the store the node runs on.
	Store bool
}

// IsNode reports whether a node can open on the directory as it is: a
// session key, and the account key or a note (06 §1.1).
func (d DirInfo) IsNode() bool { return d.Session != "" && (d.AccountKey || d.Note) }

// Empty reports whether the directory holds nothing of a node: no account
// key, session key, note or store.
func (d DirInfo) Empty() bool {
	return !d.AccountKey && d.Session == "" && !d.Note && !d.Store
}

// Inspect reads what the node directory dir holds. A directory that is not
// there is empty.
func Inspect(dir string) (DirInfo, error) {
	d := DirInfo{Dir: dir}
	if k, err := identity.ReadKeyFile(filepath.Join(dir, AccountKeyName)); err == nil {
		d.Account, d.AccountKey = k.DID(), true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("minca/node: the account key in %s: %w", dir, err)
	}
	if k, err := identity.ReadKeyFile(filepath.Join(dir, sessionKeyName)); err == nil {
		d.Session = k.DID()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("minca/node: the session key in %s: %w", dir, err)
	}
	n, err := HeldNote(dir)
	if err != nil {
		return d, fmt.Errorf("minca/node: the note in %s: %w", dir, err)
	}
	if n != nil {
		d.Note = true
		if d.Account == "" {
			d.Account = n.Iss
		}
	}
	d.Store = fileExists(filepath.Join(dir, storeURLName)) || fileExists(filepath.Join(dir, "store"))
	return d, nil
}

// KeepAccountKey copies the account key in file into the node directory
// dir (made 0700 if missing) as account.key, mode 0600, so every node
// opened there holds it (06 §1.1). A directory holding another account's
// key, or acting for another account under its note, is refused; one
// holding this key already is left as it is.
func KeepAccountKey(dir, file string) (*identity.PrivateKey, error) {
	k, err := identity.ReadKeyFile(file)
	if err != nil {
		return nil, fmt.Errorf("minca/node: account key: %w", err)
	}
	d, err := Inspect(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case d.Account != "" && d.Account != k.DID():
		return nil, fmt.Errorf("minca/node: the node in %s acts for the account %s; %s is the key of %s", dir, d.Account, file, k.DID())
	case d.AccountKey:
		return k, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("minca/node: node directory: %w", err)
	}
	if err := identity.WriteKeyFile(filepath.Join(dir, AccountKeyName), k); err != nil {
		return nil, fmt.Errorf("minca/node: keeping the account key: %w", err)
	}
	return k, nil
}
