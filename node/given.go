package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// SessionKey reads the session key of the node directory dir, making the
// directory and the key when there are none. It is the key a node without
// the account key asks a note for (06 §2.1, §3: `minca connect` asks with
// it), and then signs with under that note.
func SessionKey(dir string) (*identity.PrivateKey, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, sessionKeyName)
	k, err := identity.ReadKeyFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		if k, err = identity.GenerateKey(); err == nil {
			err = identity.WriteKeyFile(p, k)
		}
		if err != nil && fileExists(p) {
			// Another process made it first: that one is the key.
			k, err = identity.ReadKeyFile(p)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("minca/node: session key: %w", err)
	}
	return k, nil
}

// GrantName is the file beside the session key that holds the grant a
// note came with (06 §2.5: the account, the home, when it expires), for
// people and tools to read; the node reads only the note.
const GrantName = "grant.json"

// KeepGrant writes n where a node opened on dir finds its note (the
// default of Options.Note), and grant (JSON) beside it as GrantName, each
// whole or not at all, durably; the grant first, so a note is never kept
// without it. It refuses a note not made out to dir's session key, or one
// that does not grant the writing of records, since the node would refuse
// to sign under it.
func KeepGrant(dir string, n *identity.Note, grant []byte) error {
	k, err := identity.ReadKeyFile(filepath.Join(dir, sessionKeyName))
	if err != nil {
		return fmt.Errorf("minca/node: session key: %w", err)
	}
	if n.Aud != k.DID() {
		return fmt.Errorf("minca/node: the note is made out to %s, not to this node's session key %s", n.Aud, k.DID())
	}
	if !identity.Covers(n.Cmd, identity.CmdRecordWrite) {
		return fmt.Errorf("minca/node: the note grants %s, not the writing of records", n.Cmd)
	}
	b, err := canonical.Marshal(n.Object())
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, GrantName), grant, 0o600); err != nil {
		return fmt.Errorf("minca/node: writing the grant: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, sessionNoteName), b, 0o600); err != nil {
		return fmt.Errorf("minca/node: writing the session note: %w", err)
	}
	return nil
}

// HeldNote is the note dir holds for its session key, if any: nil, nil
// when it holds none.
func HeldNote(dir string) (*identity.Note, error) {
	b, err := os.ReadFile(filepath.Join(dir, sessionNoteName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return identity.ParseNote(b)
}
