package space

import (
	"strings"

	"github.com/minca-go/minca/canonical"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// Kind is which access collection a change is in (02 §4.5).
type Kind uint8

// The twelve access collections (02 §4.5), in the order 02 lists them.
const (
	KindRole Kind = iota + 1
	KindAssign
	KindRemove
	KindInvite
	KindRevoke
	KindDefine
	KindKey
	KindRelays
	KindKeepers
	KindFork
	KindStepdown
	KindSucceed
)

var kindCollections = [...]string{
	KindRole: "sys.role", KindAssign: "sys.assign", KindRemove: "sys.remove", KindInvite: "sys.invite",
	KindRevoke: "sys.revoke", KindDefine: "sys.collection", KindKey: "sys.key", KindRelays: "sys.relays",
	KindKeepers: "sys.keepers", KindFork: "sys.fork", KindStepdown: "sys.stepdown", KindSucceed: "sys.succeed",
}

// Collection is the access collection of the kind.
func (k Kind) Collection() string {
	if int(k) < len(kindCollections) {
		return kindCollections[k]
	}
	return ""
}

func (k Kind) String() string { return k.Collection() }

// KindOf returns the kind of an access collection, ok false for any other.
func KindOf(collection string) (Kind, bool) {
	for k := KindRole; k <= KindSucceed; k++ {
		if kindCollections[k] == collection {
			return k, true
		}
	}
	return 0, false
}

// IsAccessCollection reports whether a collection is one of the access
// history's (02 §4.5).
func IsAccessCollection(c string) bool { _, ok := KindOf(c); return ok }

// command is what a change of the kind invokes of its author's grants and
// of the note it carries (docs/spaces.md, Commands).
func (k Kind) command() string {
	switch k {
	case KindRole:
		return CmdRole
	case KindAssign:
		return CmdAssign
	case KindRemove:
		return CmdRemove
	case KindInvite:
		return CmdInvite
	case KindRevoke:
		return CmdRevoke
	case KindDefine:
		return CmdDefine
	case KindKey:
		return CmdKey
	case KindRelays:
		return CmdRelays
	case KindKeepers:
		return CmdKeepers
	case KindFork:
		return CmdFork
	}
	return CmdFounder
}

// Limits of access change bodies (docs/spaces.md).
const (
	MaxRelays   = 8   // relays sys.relays names
	MaxRelayLen = 200 // characters of one relay URL
	MaxKeepers  = 16  // keepers sys.keepers names (06 §4.2)
	MaxNameText = 80  // characters of a keeper's name
)

// Keeper is a node that keeps the space whole (06 §4.2): its did:key and a
// name for people.
type Keeper struct {
	DID, Name string
}

// Change is one access change (a version of an access collection, 02
// §4.5) read into what the replay needs. [ReadChange] makes one; nothing
// downstream re-checks what it proved. A Change is immutable once read.
type Change struct {
	ID, Author, Root string
	// Digest is the digest ID names, as the version was read with it.
	Digest     canonical.ID
	Collection string
	Kind       Kind
	Key        string
	LogN       int64
	Seen       []string
	Deleted    bool
	// Register names what the change is about: the member, role, founder,
	// invite, revoked key, forked line or collection it changes (see
	// docs/spaces.md, Registers).
	Register string

	// Target is the member (assign, remove), founder (stepdown, succeed),
	// invite key (invite) or revoked key (revoke) the change names.
	Target string
	// Roles: an assign's or an invite's roles, sorted.
	Roles []string
	// Via is the invite key a join by invite names.
	Via string
	// Grants: a role's (nil on a delete: the role is gone).
	Grants []Grant
	// RoleName: the role a sys.role change is about.
	RoleName string
	// RevokedRoot and Cutoffs: a revoke's key acts for RevokedRoot; of its
	// versions in a collection, those at log.n ≤ Cutoffs[collection] are
	// kept, the rest are not (06 §2.9).
	RevokedRoot string
	Cutoffs     map[string]int64
	// Fork: the proven line and the first place taken away (02 §4.10), and
	// the roots its two versions act for.
	ForkAuthor, ForkCollection string
	ForkFrom                   int64
	ForkRoots                  []string
	// Definition: the collection named, the definition (nil when invalid,
	// a delete or unreadable), whether it is sealed and unreadable, and its
	// body's canonical form (rivals agree when these are equal, 02 §6.3).
	DefName   string
	Def       *collection.Definition
	DefSealed bool
	DefCanon  string
	// DefInvalid says why a definition that is no delete and not sealed is
	// invalid, and so counts as none (02 §6.1); "" when it is valid.
	DefInvalid string
	KeyID      string
	Relays     []string
	Keepers    []Keeper
	// Keep: what a removal, a change of roles or of a role keeps of the
	// versions it may take away: per key, per collection, the last log
	// place its writer had seen (docs/spaces.md, What a change keeps).
	Keep map[string]map[string]int64
	// body is the body's canonical JSON (nil on a delete), read again when
	// a policy needs it: a history keeps its changes as long as it holds
	// the space, and a body read from a version keeps all of it alive.
	body []byte
}

// Body is the change's body as written (nil on a delete).
func (c *Change) Body() any {
	if c.body == nil {
		return nil
	}
	v, err := canonical.Parse(c.body)
	if err != nil {
		return nil // it was written from a value: it parses
	}
	return v
}

// Env is what reading and judging changes needs besides the genesis.
type Env struct {
	// Notes judges the note a change carries: it must grant the change's
	// command too (docs/spaces.md, Commands). Nil refuses every change with
	// a proof.
	Notes record.NoteChecker
	// Verifier checks the two versions a sys.fork carries; nil uses a
	// fresh one.
	Verifier *record.Verifier
}

// ReadChange reads an access change of space g: its key and body formats
// (docs/spaces.md), and that the note it carries, if any, grants its
// command. v must have passed the crypto gate and root be its root (02
// §9.3). It does not judge whether the author could make it: that is the
// replay's ([History.Check]). A refusal is a *record.Refusal.
func ReadChange(g *Genesis, v *record.Version, root string, env Env) (*Change, error) {
	kind, ok := KindOf(v.Collection)
	if !ok {
		return nil, refuse(CodeAccessBody, "collection", v.Collection+" is not an access collection (02 §4.5)")
	}
	d, _ := v.Digest()
	c := &Change{ID: v.ID, Digest: d, Author: v.Author, Root: root, Collection: v.Collection, Kind: kind, Key: v.Key,
		Seen: v.Seen, Deleted: v.Deleted}
	if !v.Deleted {
		b, err := canonical.Marshal(v.Body)
		if err != nil {
			return nil, refuse(CodeAccessBody, "body", "the body has no canonical form: "+err.Error())
		}
		c.body = b
	}
	if v.Log != nil {
		c.LogN = v.Log.N
	}
	if v.Deleted {
		switch kind {
		case KindRole, KindInvite, KindDefine, KindRelays, KindKeepers:
		default:
			return nil, refuse(CodeAccessDelete, "deleted", v.Collection+" has no deletes: only sys.role, sys.invite, sys.collection, sys.relays and sys.keepers do (docs/spaces.md)")
		}
		if v.Seq == 0 {
			return nil, refuse(CodeAccessDelete, "deleted", "a delete is a later version of what it deletes (02 §4.4)")
		}
	} else if !v.HasBody {
		return nil, refuse(CodeAccessBody, "body", "an access change travels whole (02 §4.5)")
	}
	var err error
	switch kind {
	case KindRole:
		err = c.readRole(v)
	case KindAssign:
		err = c.readAssign(g, v)
	case KindRemove:
		err = c.readMember(v, "remove:")
	case KindInvite:
		err = c.readInvite(v)
	case KindRevoke:
		err = c.readRevoke(v)
	case KindDefine:
		err = c.readDefine(g, v)
	case KindKey:
		err = c.readKey(v)
	case KindRelays:
		err = c.readRelays(v)
	case KindKeepers:
		err = c.readKeepers(v)
	case KindFork:
		err = c.readFork(g, v, env)
	case KindStepdown, KindSucceed:
		prefix := "stepdown:"
		if kind == KindSucceed {
			prefix = "succeed:"
		}
		err = c.readMember(v, prefix)
		c.Register = "founder:" + c.Target
	}
	if err != nil {
		return nil, err
	}
	if v.Proof != nil {
		if env.Notes == nil {
			return nil, refuse(record.CodeNoProof, "proof", "no note checker to judge the proof (02 §9.3)")
		}
		if _, err := env.Notes.CheckNote(v.Proof, v.Author, nil, c.invocation(g.ID)); err != nil {
			return nil, noteRefusal(err)
		}
	}
	if err := c.compact(); err != nil {
		return nil, err
	}
	return c, nil
}

// compact makes the change keep nothing of the version it was read from:
// strings read from a version's JSON are cut from one copy of it, and keep
// the whole of it alive for as long as the history holds the change.
func (c *Change) compact() error {
	cl := strings.Clone
	author := cl(c.Author)
	root := author
	if c.Root != c.Author {
		root = cl(c.Root)
	}
	c.ID, c.Author, c.Root, c.Key, c.Collection = cl(c.ID), author, root, cl(c.Key), c.Kind.Collection()
	c.Register, c.Target, c.Via, c.RoleName, c.RevokedRoot = cl(c.Register), cl(c.Target), cl(c.Via), cl(c.RoleName), cl(c.RevokedRoot)
	c.ForkAuthor, c.ForkCollection, c.DefName, c.KeyID = cl(c.ForkAuthor), cl(c.ForkCollection), cl(c.DefName), cl(c.KeyID)
	c.DefInvalid = cl(c.DefInvalid)
	cloneAll := func(l []string) []string {
		if l == nil {
			return nil
		}
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = cl(s)
		}
		return out
	}
	c.Seen, c.Roles, c.Relays, c.ForkRoots = cloneAll(c.Seen), cloneAll(c.Roles), cloneAll(c.Relays), cloneAll(c.ForkRoots)
	for i, k := range c.Keepers {
		c.Keepers[i] = Keeper{DID: cl(k.DID), Name: cl(k.Name)}
	}
	if c.Cutoffs != nil {
		m := make(map[string]int64, len(c.Cutoffs))
		for k, n := range c.Cutoffs {
			m[cl(k)] = n
		}
		c.Cutoffs = m
	}
	if c.Keep != nil {
		m := make(map[string]map[string]int64, len(c.Keep))
		for k, places := range c.Keep {
			pm := make(map[string]int64, len(places))
			for coll, n := range places {
				pm[cl(coll)] = n
			}
			m[cl(k)] = pm
		}
		c.Keep = m
	}
	for i, g := range c.Grants {
		v, err := canonical.Parse([]byte(g.key))
		if err != nil {
			return err
		}
		if c.Grants[i], err = readGrant(v, "grant", CodeAccessBody); err != nil {
			return err
		}
	}
	if c.Def != nil {
		v, err := canonical.Parse([]byte(c.DefCanon))
		if err != nil {
			return err
		}
		if c.Def, err = collection.ParseDefinition(v); err != nil {
			return err
		}
	}
	c.DefCanon = cl(c.DefCanon)
	return nil
}

// invocation is what the change asks of its author's grants and note:
// its command, with {space, collection, body}; for a definition, the
// collection is the one defined (02 §6.3: "/collection/define for it").
func (c *Change) invocation(space string) *identity.Invocation {
	inv := &identity.Invocation{Cmd: c.Kind.command(), Space: space, Collection: c.Collection}
	if c.Kind == KindDefine {
		inv.Collection = c.DefName
	}
	if !c.Deleted {
		inv.HasBody, inv.Body = true, c.Body()
	}
	return inv
}

func noteRefusal(err error) *record.Refusal {
	if r, ok := err.(*record.Refusal); ok {
		return r
	}
	if ne, ok := err.(*identity.NoteError); ok {
		return refuse(ne.Code, "proof."+ne.Field, ne.Message+" (the note must grant the change's command, docs/spaces.md)")
	}
	return refuse(record.CodeNoteError, "proof", "the note could not be judged: "+err.Error())
}
