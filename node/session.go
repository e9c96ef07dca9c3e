package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Files in the node directory.
const (
	// AccountKeyName is the account key file `minca init` writes; a node
	// finds it there when Options.AccountKey is empty.
	AccountKeyName  = "account.key"
	sessionKeyName  = "session.key"
	sessionNoteName = "session.note"
	placesName      = "places.log"
	placesLockName  = "places.lock"
	lockName        = "node.lock"
	// storeURLName names the store the node runs on, so that a node
	// opened on the directory later without naming one (a verb run while
	// no node serves) opens the same store.
	storeURLName = "store.url"
)

// ErrNoNote: the node holds no account key and no note for its session
// key; the account must issue one (06 §1.1).
var ErrNoNote = errors.New("minca/node: no note from the account for this node's session key")

// session is the key a node signs with and the note it signs under (06
// §1.2). With the account key the node issues the note itself, for
// SessionLife, and issues a new one RenewBefore its exp; the account key
// signs notes only, never a record.
type session struct {
	dir         string
	account     *identity.PrivateKey // nil: the note is given
	key         *identity.PrivateKey
	life, early time.Duration
	now         func() time.Time
	notePath    string
	places      *Places

	mu     sync.Mutex
	signer *identity.SessionSigner
	out    bool // signed out: the key is forgotten
}

// openSession reads or makes the session key, and reads, or issues, its
// note.
func openSession(o Options, account *identity.PrivateKey) (*session, error) {
	s := &session{dir: o.Dir, account: account, life: o.SessionLife, early: o.RenewBefore, now: o.Now, notePath: o.Note}
	keyPath := filepath.Join(o.Dir, sessionKeyName)
	k, err := identity.ReadKeyFile(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		if k, err = identity.GenerateKey(); err == nil {
			err = identity.WriteKeyFile(keyPath, k)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("minca/node: session key: %w", err)
	}
	s.key = k
	s.places = OpenPlaces(o.Dir, k.DID())
	n, err := s.readNote()
	switch {
	case err == nil:
		if err := s.use(n); err != nil && account == nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && account == nil:
		return nil, fmt.Errorf("%w (%s): connect it to the account at its home (minca connect HOME --dir %s), give it the account key (minca init --dir %[3]s --account-key FILE), or have the account issue one (minca note issue --key ACCOUNTKEY --aud %[2]s --cmd / > %[4]s)",
			ErrNoNote, k.DID(), o.Dir, s.notePath)
	case !errors.Is(err, fs.ErrNotExist):
		if account == nil {
			return nil, err
		}
		// With the account key a damaged note is replaced.
	}
	if account != nil {
		if s.signer != nil && s.signer.Root() != account.DID() {
			s.signer = nil // a note of another account: not this node's
		}
		if _, err := s.renewIfDue(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *session) readNote() (*identity.Note, error) {
	b, err := os.ReadFile(s.notePath)
	if err != nil {
		return nil, err
	}
	n, err := identity.ParseNote(b)
	if err != nil {
		return nil, fmt.Errorf("minca/node: the note in %s: %w", s.notePath, err)
	}
	return n, nil
}

// use makes n the note the session signs under.
func (s *session) use(n *identity.Note) error {
	sg, err := identity.NewSessionSigner(s.key, n)
	if err != nil {
		return fmt.Errorf("minca/node: the note in %s: %w", s.notePath, err)
	}
	if !identity.Covers(n.Cmd, identity.CmdRecordWrite) {
		return fmt.Errorf("minca/node: the note in %s grants %s, not the writing of records", s.notePath, n.Cmd)
	}
	s.signer = sg
	return nil
}

// due reports whether the note must be replaced now.
func (s *session) due(now time.Time) bool {
	if s.signer == nil {
		return true
	}
	n := s.signer.Note()
	return n.HasExp && !now.Before(time.Unix(n.Exp, 0).Add(-s.early))
}

// renewIfDue issues a new note when the one held is due (06 §1.2: "the
// node asks for a new note before the one it holds runs out"). Only with
// the account key; without it the note is the account's to renew.
func (s *session) renewIfDue() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.out || s.account == nil || !s.due(now) {
		return false, nil
	}
	n, err := identity.IssueNote(s.account, identity.NoteOptions{
		Aud: s.key.DID(), Sub: s.account.DID(), Cmd: identity.CmdTop,
		Exp: now.Add(s.life).Unix(),
	})
	if err != nil {
		return false, fmt.Errorf("minca/node: renewing the session note: %w", err)
	}
	b, err := canonical.Marshal(n.Object())
	if err != nil {
		return false, err
	}
	if err := writeFileAtomic(s.notePath, b, 0o600); err != nil {
		return false, fmt.Errorf("minca/node: writing the session note: %w", err)
	}
	return true, s.use(n)
}

// current is the signer to sign with now: the note is renewed first when
// it is due.
func (s *session) current() (*identity.SessionSigner, error) {
	if _, err := s.renewIfDue(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer == nil {
		return nil, ErrSignedOut
	}
	return s.signer, nil
}

// root is the account the session acts for.
func (s *session) root() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.account != nil {
		return s.account.DID()
	}
	if s.signer != nil {
		return s.signer.Root()
	}
	return ""
}

// forget removes the session key, its note and its places (06 §1.2: a
// device that kept the key forgets it). The session signs nothing after.
func (s *session) forget() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signer, s.out = nil, true
	var errs []error
	for _, p := range []string{filepath.Join(s.dir, sessionKeyName), s.notePath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.places.Forget())
	return errors.Join(errs...)
}

// ErrSignedOut: the node signed out; it signs nothing until opened again.
var ErrSignedOut = errors.New("minca/node: signed out: the session key is forgotten")
