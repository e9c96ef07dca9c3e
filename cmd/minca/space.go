package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/store"
)

// spaceSubverbs are `minca space SUBVERB` (docs/spaces.md).
func spaceSubverbs() []verb {
	return []verb{
		{"genesis", "make a space's genesis and print it with its id", runSpaceGenesis},
		{"join", "keep a space's genesis with a store, checked against its id, and judge what waited for it", runSpaceJoin},
		{"show", "print a space's state now, or as of a set of access changes", runSpaceShow},
		{"members", "list a space's members with their roles", runSpaceMembers},
		{"roles", "list a space's roles with their grants", runSpaceRoles},
		{"definitions", "list the collections defined, what is in force, first definers, rivals (02 §6.3)", runSpaceDefinitions},
		{"history", "list the access changes in replay order, and whether each counts", runSpaceHistory},
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
	keyFile := fs.String("key", "", "the creating account's private key file; its DID is the first founder (required)")
	name := fs.String("name", "", "the space's name, 1–80 characters (required)")
	private := fs.Bool("private", false, "a private space (bodies sealed; docs/private-spaces.md)")
	var founders, roles listFlag
	fs.Var(&founders, "founder", "another founder's root DID (repeatable)")
	fs.Var(&roles, "role", `a role NAME=GRANTS, GRANTS a JSON list like [{"cmd":"/record"}] (repeatable)`)
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
		arr, ok := v.([]any)
		if !ok {
			return usageError("--role %s: GRANTS is a JSON list", n)
		}
		for _, e := range arr {
			gobj, ok := e.(*canonical.Object)
			if !ok {
				return usageError("--role %s: a grant is {\"cmd\", \"pol\"?}", n)
			}
			cmd, _ := gobj.Get("cmd")
			pol, _ := gobj.Get("pol")
			cs, _ := cmd.(string)
			ps, _ := pol.([]any)
			g, err := space.NewGrant(cs, ps)
			if err != nil {
				return usageError("--role %s: %v", n, err)
			}
			o.Roles[n] = append(o.Roles[n], g)
		}
	}
	g, err := space.NewGenesis(o)
	if err != nil {
		return usageError("%v", err)
	}
	return writeJSONLine(s.out, canonical.NewObject("id", g.ID, "genesis", g.Object()))
}

func runSpaceJoin(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "space join", "space join --store URL [--id ID] [FILE|-]\n\nReads a space's genesis (the genesis itself, or {\"id\",\"genesis\"} as space\ngenesis prints it) and keeps it with the store, after checking that it hashes\nto ID when given (docs/spaces.md, How a peer gets the genesis). Versions of the\nspace that waited for it are judged. Prints {\"id\",\"name\"}.")
	sp := storeFlags(fs, true)
	sp.judge = "full"
	id := fs.String("id", "", "the space `ID` the genesis must hash to")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("space join takes at most one FILE")
	}
	in, err := openInput(s, fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.close()
	raw, err := io.ReadAll(io.LimitReader(in.r, maxLine))
	if err != nil {
		return err
	}
	v, err := canonical.Parse(raw)
	if err != nil {
		return usageError("the genesis: %v", err)
	}
	if o, ok := v.(*canonical.Object); ok && o.Has("genesis") && o.Has("id") {
		gv, _ := o.Get("genesis")
		idv, _ := o.Get("id")
		if *id == "" {
			*id, _ = idv.(string)
		}
		v = gv
	}
	g, err := space.GenesisFromValue(v)
	if err != nil {
		return usageError("the genesis: %v", err)
	}
	if *id != "" && g.ID != *id {
		return usageError("the genesis hashes to %s, not %s (%s)", g.ID, *id, space.CodeGenesisID)
	}
	sto, err := sp.open(ctx, createStore)
	if err != nil {
		return err
	}
	defer sto.Close()
	if err := node.AddGenesis(ctx, sto.Engine(), g); err != nil {
		return sp.failed(err)
	}
	if err := sto.Flush(ctx); err != nil {
		return sp.failed(err)
	}
	return writeJSONLine(s.out, canonical.NewObject("id", g.ID, "name", g.Name))
}

// spaceState opens a store, reads a space's history and returns the state
// now or as of --as-of; the caller closes the store.
func spaceState(ctx context.Context, s *stdio, name, usage string, args []string) (*store.Store, *space.History, *space.State, error) {
	fs := newFlags(s, "space "+name, "space "+name+" --store URL SPACE [--as-of ID,…]\n\n"+usage+"\nWith --as-of, as of those access changes and everything they saw (02 §3.1):\nthe state a version with that seen is judged in. Exit 3 when the store holds\nno genesis for SPACE, or an id given is not an access change it holds.")
	sp := storeFlags(fs, false)
	asOf := fs.String("as-of", "", "access change `IDS`, comma-separated; empty: every change held")
	if done, err := parseFlags(fs, args); done {
		return nil, nil, nil, err
	}
	if fs.NArg() != 1 {
		return nil, nil, nil, usageError("space %s takes SPACE", name)
	}
	sto, err := sp.open(ctx, readStore)
	if err != nil {
		return nil, nil, nil, err
	}
	j := node.NewSpaceJudge(noteChecker())
	j.Source = sto.Engine()
	h, ok, err := j.History(ctx, fs.Arg(0))
	if err != nil {
		sto.Close()
		return nil, nil, nil, failed(err)
	}
	if !ok {
		sto.Close()
		return nil, nil, nil, notFound("the store holds no genesis for space %s (minca space join)", fs.Arg(0))
	}
	state := h.Now()
	if *asOf != "" {
		state, err = h.At(strings.Split(*asOf, ","))
		if err != nil {
			sto.Close()
			return nil, nil, nil, notFound("--as-of: %v", err)
		}
	}
	return sto, h, state, nil
}

func strs(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func grantsValue(gs []space.Grant) []any {
	out := make([]any, len(gs))
	for i, g := range gs {
		out[i] = g.Value()
	}
	return out
}

func runSpaceShow(ctx context.Context, s *stdio, args []string) error {
	st, h, state, err := spaceState(ctx, s, "show", "Prints the space as one JSON line: its genesis, its access changes held and\nhow many count, its heads, and the state: counts of members, roles and\ndefinitions; revoked keys with what each keeps; forked lines; relays, keepers\nand keys.", args)
	if err != nil {
		return err
	}
	defer st.Close()
	g := h.Genesis()
	changes, counting := 0, 0
	h.Changes(func(c *space.Change, _ bool) bool {
		if counts, in := state.Counts(c.ID); in {
			changes++
			if counts {
				counting++
			}
		}
		return true
	})
	revoked := []any{}
	for _, r := range state.Revoked() {
		cut := &canonical.Object{}
		for c, n := range r.Cutoffs {
			cut.Set(c, float64(n))
		}
		revoked = append(revoked, canonical.NewObject("key", r.Key, "root", r.Root, "cutoffs", cut))
	}
	forked := []any{}
	for _, f := range state.Forked() {
		forked = append(forked, canonical.NewObject("author", f.Author, "collection", f.Collection, "from", float64(f.From), "roots", strs(f.Roots)))
	}
	keepers := []any{}
	for _, k := range state.Keepers() {
		keepers = append(keepers, canonical.NewObject("did", k.DID, "name", k.Name))
	}
	o := canonical.NewObject("id", g.ID, "name", g.Name, "visibility", g.Visibility, "founders", strs(g.Founders),
		"createdAt", g.CreatedAt, "changes", float64(changes), "counting", float64(counting), "heads", strs(h.Heads()),
		"members", float64(len(state.Members())), "roles", float64(len(state.AllRoles())), "definitions", float64(len(state.Definitions())),
		"revoked", revoked, "forked", forked, "relays", strs(state.Relays()), "keepers", keepers, "keys", strs(state.Keys()))
	return writeJSONLine(s.out, o)
}

func runSpaceMembers(ctx context.Context, s *stdio, args []string) error {
	st, _, state, err := spaceState(ctx, s, "members", "Lists each member as a JSON line {\"root\",\"founder\",\"roles\"}, founders first.", args)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, m := range state.Members() {
		if err := writeJSONLine(s.out, canonical.NewObject("root", m.Root, "founder", m.Founder, "roles", strs(m.Roles))); err != nil {
			return err
		}
	}
	return nil
}

func runSpaceRoles(ctx context.Context, s *stdio, args []string) error {
	st, _, state, err := spaceState(ctx, s, "roles", "Lists each role as a JSON line {\"name\",\"grants\":[{\"cmd\",\"pol\"}]}.", args)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range state.AllRoles() {
		if err := writeJSONLine(s.out, canonical.NewObject("name", r.Name, "grants", grantsValue(r.Grants))); err != nil {
			return err
		}
	}
	return nil
}

func runSpaceDefinitions(ctx context.Context, s *stdio, args []string) error {
	st, h, state, err := spaceState(ctx, s, "definitions", "Lists each collection with a change to its definition as a JSON line\n{\"name\",\"inForce\",\"contested\",\"rivals\",\"definer\",\"definition\"?} (02 §6.3): inForce is\nthe id of the change in force (\"\" for none), rivals the latest changes when\nmore than one, definer who first defined it (\"\" for no one), definition the\nbody in force.", args)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, d := range state.Definitions() {
		o := canonical.NewObject("name", d.Name, "inForce", d.InForce, "contested", d.Contested, "rivals", strs(d.Rivals), "definer", d.Definer)
		if d.InForce != "" {
			if c, _, ok := h.Change(d.InForce); ok {
				o.Set("definition", c.Body())
			}
		}
		if err := writeJSONLine(s.out, o); err != nil {
			return err
		}
	}
	return nil
}

func runSpaceHistory(ctx context.Context, s *stdio, args []string) error {
	st, h, state, err := spaceState(ctx, s, "history", "Lists the access changes held, in the order the replay took them (each after\neverything it saw), as JSON lines {\"id\",\"collection\",\"key\",\"root\",\"author\",\"seen\",\"counts\"}.", args)
	if err != nil {
		return err
	}
	defer st.Close()
	var werr error
	h.Changes(func(c *space.Change, _ bool) bool {
		counts, in := state.Counts(c.ID)
		if !in {
			return true
		}
		seen := c.Seen
		if seen == nil {
			seen = []string{}
		}
		werr = writeJSONLine(s.out, canonical.NewObject("id", c.ID, "collection", c.Collection, "key", c.Key, "root", c.Root,
			"author", c.Author, "seen", strs(seen), "counts", counts))
		return werr == nil
	})
	if werr != nil {
		return werr
	}
	return nil
}
