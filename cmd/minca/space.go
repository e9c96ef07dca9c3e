package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// spaceSubverbs are `minca space SUBVERB` (docs/spaces.md): those that
// write the access history go through the node (space_node.go); those
// that read a space's state read a store (--store); join and members do
// either.
func spaceSubverbs() []verb {
	return []verb{
		{"create", "node: make a space with the account as its founder, and keep it", runSpaceCreate},
		{"genesis", "make a space's genesis with a key file and print it with its id", runSpaceGenesis},
		{"join", "keep a space: by an invite (node), or by its genesis, checked against its id (node, or --store)", runSpaceJoin},
		{"invite", "node: open an invite to a space for roles, and print its text", runSpaceInvite},
		{"members", "list a space's members with their roles (node, or --store)", runSpaceMembers},
		{"assign", "node: give a member roles, or change them", runSpaceAssign},
		{"remove", "node: remove a member", runSpaceRemove},
		{"leave", "node: leave a space and take it off the account's list", runSpaceLeave},
		{"list", "node: list the spaces the node keeps", runSpaceList},
		{"show", "--store: print a space's state now, or as of a set of access changes", runSpaceShow},
		{"roles", "--store: list a space's roles with their grants", runSpaceRoles},
		{"definitions", "--store: list the collections defined, what is in force, first definers, rivals (02 §6.3)", runSpaceDefinitions},
		{"history", "--store: list the access changes in replay order, and whether each counts", runSpaceHistory},
	}
}

// runSpace dispatches `minca space SUBVERB`.
func runSpace(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "space", spaceSubverbs(), args)
}

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runSpaceGenesis(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space genesis", "space genesis --key ROOTKEY --name NAME [--private] [--founder DID]… [--role NAME=GRANTS]…\n\nMakes a space's genesis (docs/spaces.md): the account of ROOTKEY and each\n--founder are its founders; each --role is a role it starts with, GRANTS a JSON\nlist of {\"cmd\", \"pol\"?}. Prints {\"id\",\"genesis\"} as one JSON line; the id is\nthe content id of the genesis's canonical form. Writing access changes comes\nwith the node.")
	keyFile := fs.String("key", "", "the creating account's private key `FILE`; its DID is the first founder (required)")
	name := fs.String("name", "", "the space's `NAME`, 1–80 characters (required)")
	private := fs.Bool("private", false, "a private space (bodies sealed; docs/private-spaces.md)")
	var founders, roles listFlag
	fs.Var(&founders, "founder", "another founder's root `DID` (repeatable)")
	fs.Var(&roles, "role", "a role `NAME=GRANTS`, GRANTS a JSON list like [{\"cmd\":\"/record\"}] (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if *keyFile == "" || *name == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError("--key and --name are required")
	}
	key, err := identity.ReadKeyFile(*keyFile)
	if err != nil {
		return usageError("%v", err)
	}
	o := space.GenesisOptions{Name: *name, Private: *private, Founders: append([]string{key.DID()}, founders...),
		CreatedAt: record.FormatTime(time.Now()), Roles: map[string][]space.Grant{}}
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	o.Nonce = base64.RawURLEncoding.EncodeToString(nonce[:])
	for _, r := range roles {
		n, list, ok := strings.Cut(r, "=")
		if !ok {
			return usageError("--role %q: NAME=GRANTS", r)
		}
		v, err := canonical.Parse([]byte(list))
		if err != nil {
			return usageError("--role %s: %v", n, err)
		}
		gs, err := space.ParseGrants(v, "--role "+n)
		if rf, ok := err.(*record.Refusal); ok {
			return usageError("%s: %s", rf.Field, rf.Message)
		}
		if err != nil {
			return err
		}
		o.Roles[n] = append(o.Roles[n], gs...)
	}
	g, err := space.NewGenesis(o)
	if err != nil {
		return usageError("%v", err)
	}
	return writeJSONLine(s.out, canonical.NewObject("id", g.ID, "genesis", g.Object()))
}

func runSpaceJoin(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space join", "space join INVITE [--dir DIR]\n       minca space join [FILE|-] [--id ID] [--dir DIR | --store URL]\n\nKeeps a space. An invite's text (minca-invite:…, from space invite) joins it\nas a member, through the node. A genesis (the genesis itself, or {\"id\",\"genesis\"}\nas space genesis prints it), in FILE or on stdin, checked against ID when\ngiven (docs/spaces.md, How a peer gets the genesis), is kept: with --store\n(or $MINCA_STORE, and no --dir) by that store, judging the versions of the\nspace that waited for it; otherwise by the node. Prints {\"id\",\"name\"}.")
	dir := dirFlag(fs)
	sp := storeFlags(fs, true)
	sp.judge = "full"
	id := fs.String("id", "", "the space `ID` the genesis must hash to")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("space join takes an INVITE, or at most one FILE")
	}
	if inv := fs.Arg(0); strings.HasPrefix(inv, node.InvitePrefix) {
		if storeNamed(fs) || *id != "" {
			return usageError("an invite is taken through the node: no --store or --id with it")
		}
		return callPrint(ctx, s, *dir, http.MethodPost, "/v1/spaces/join", map[string]any{"invite": inv})
	}
	g, err := readGenesis(s, fs.Arg(0), *id)
	if err != nil {
		return err
	}
	viaNode, err := throughNode(fs, sp, *dir)
	if err != nil {
		return err
	}
	if viaNode {
		return callPrint(ctx, s, *dir, http.MethodPost, "/v1/spaces/join", map[string]any{"genesis": g.Object(), "id": g.ID})
	}
	sto, err := sp.open(ctx, createStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	if err := judge.AddGenesis(ctx, sto.Engine(), g); err != nil {
		return sp.failed(err)
	}
	if err := sto.Flush(ctx); err != nil {
		return sp.failed(err)
	}
	return writeJSONLine(s.out, canonical.NewObject("id", g.ID, "name", g.Name))
}

// readGenesis reads a space's genesis from a FILE or stdin: the genesis
// itself, or {"id","genesis"} as space genesis prints it (its id the one
// to check unless id is given). It must hash to the id.
func readGenesis(s *stdio, path, id string) (*space.Genesis, error) {
	raw, err := readAll(s, path)
	if err != nil {
		return nil, err
	}
	v, err := canonical.Parse(raw)
	if err != nil {
		return nil, usageError("the genesis: %v", err)
	}
	if o, ok := v.(*canonical.Object); ok && o.Has("genesis") && o.Has("id") {
		gv, _ := o.Get("genesis")
		idv, _ := o.Get("id")
		if id == "" {
			id, _ = idv.(string)
		}
		v = gv
	}
	g, err := space.GenesisFromValue(v)
	if err != nil {
		return nil, usageError("the genesis: %v", err)
	}
	if id != "" && g.ID != id {
		return nil, usageError("the genesis hashes to %s, not %s (%s)", g.ID, id, space.CodeGenesisID)
	}
	return g, nil
}

// stateFlags are the flags of a subverb that reads a space's state:
// --store and --as-of, or --dir for the node.
type stateFlags struct {
	fs   *flags
	sp   *storeSpec
	dir  *string
	asOf *string
}

func newStateFlags(s *stdio, name, usage string) *stateFlags {
	synopsis := "space " + name + " SPACE [--as-of ID,…] [--dir DIR]\n       minca space " + name + " SPACE --store URL [--as-of ID,…]"
	fs := newFlags(s, "space "+name, synopsis+"\n\n"+usage+"\nThrough the node (the one running in DIR, or DIR opened for the while), or\nwith --store (or $MINCA_STORE, and no --dir) from that store. With --as-of,\nas of those access changes and everything they saw (02 §3.1): the state a\nversion with that seen is judged in. Exit 3 when there is no genesis for\nSPACE, or an id given is not an access change held.")
	sf := &stateFlags{fs: fs, sp: storeFlags(fs, false)}
	sf.dir = dirFlag(fs)
	sf.asOf = fs.String("as-of", "", "access change `IDS`, comma-separated; empty: every change held")
	return sf
}

// runSpaceState parses a state subverb's flags and prints the lines lines
// makes of the space's state: through the node, or from a store opened
// read-only.
func runSpaceState(ctx context.Context, s *stdio, name, usage string, args []string, lines func(h *space.History, st *space.State) []*canonical.Object) error {
	sf := newStateFlags(s, name, usage)
	if done, err := parseFlags(sf.fs, args); done {
		return err
	}
	if sf.fs.NArg() != 1 {
		return usageError("space %s takes SPACE", name)
	}
	sp := sf.fs.Arg(0)
	viaNode, err := throughNode(sf.fs, sf.sp, *sf.dir)
	if err != nil {
		return err
	}
	if viaNode {
		path := spacePath(sp, "state", name)
		if *sf.asOf != "" {
			path += "?asOf=" + url.QueryEscape(*sf.asOf)
		}
		return callLines(ctx, s, *sf.dir, path, "lines", nil)
	}
	sto, err := sf.sp.open(ctx, readStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	j := judge.NewSpaceJudge(noteChecker())
	j.Source = sto.Engine()
	h, ok, err := j.History(ctx, sp)
	if err != nil {
		return failed(err)
	}
	if !ok {
		return notFound("the store holds no genesis for space %s (minca space join)", sp)
	}
	state := h.Now()
	if *sf.asOf != "" {
		if state, err = h.At(strings.Split(*sf.asOf, ",")); err != nil {
			return notFound("--as-of: %v", err)
		}
	}
	for _, o := range lines(h, state) {
		if err := writeJSONLine(s.out, o); err != nil {
			return err
		}
	}
	return nil
}

func runSpaceShow(ctx context.Context, s *stdio, args []string) error {
	return runSpaceState(ctx, s, "show", "Prints the space as one JSON line: its genesis, its access changes held and\nhow many count, its heads, and the state: counts of members, roles and\ndefinitions; revoked keys with what each keeps; forked lines; relays, keepers\nand keys.", args,
		func(h *space.History, st *space.State) []*canonical.Object {
			return []*canonical.Object{space.ShowObject(h, st)}
		})
}

func runSpaceRoles(ctx context.Context, s *stdio, args []string) error {
	return runSpaceState(ctx, s, "roles", "Lists each role as a JSON line {\"name\",\"grants\":[{\"cmd\",\"pol\"}]}.", args,
		func(_ *space.History, st *space.State) []*canonical.Object { return space.RoleObjects(st) })
}

func runSpaceDefinitions(ctx context.Context, s *stdio, args []string) error {
	return runSpaceState(ctx, s, "definitions", "Lists each collection with a change to its definition as a JSON line\n{\"name\",\"inForce\",\"contested\",\"rivals\",\"definer\",\"valid\"?,\"definition\"?,\"invalid\"?,\"body\"?}\n(02 §6.3): inForce is the id of the change in force (\"\" for none), rivals the\nlatest changes when more than one, definer who first defined it (\"\" for no\none). With a change in force, valid says whether it is a definition at all:\nwhen it is, definition is its body; when not, invalid says why and body is\nwhat it says, and the collection has no schema, rules or topics (02 §6.1). A\nsealed definition (a private space) is \"unreadable\": true.", args,
		space.DefinitionObjects)
}

func runSpaceHistory(ctx context.Context, s *stdio, args []string) error {
	return runSpaceState(ctx, s, "history", "Lists the access changes held, in the order the replay took them (each after\neverything it saw), as JSON lines {\"id\",\"collection\",\"key\",\"root\",\"author\",\"seen\",\"counts\"}.", args,
		space.ChangeObjects)
}
