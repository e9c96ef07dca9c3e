package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// The account's side of carriers (06 §4.2), through the node: `minca
// carrier add|remove|list`. The carrier's own side is `minca carry`.

func carrierSubverbs() []verb {
	return []verb{
		{"add", "add a carrier by its did:key and print the carry grant it takes (06 §4.2, §4.3)", runCarrierAdd},
		{"remove", "remove a carrier: its passes deleted, carry:closed written (06 §4.2)", runCarrierRemove},
		{"list", "list the account's carriers, live and removed", runCarrierList},
	}
}

func runCarrier(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "carrier", carrierSubverbs(), args)
}

func runCarrierAdd(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "carrier add", "carrier add DID [--name NAME] [--relay URL]… [--dir DIR]\n\n"+
		"Adds the carrier whose key is DID to the account, through a node holding the\n"+
		"account key (06 §4.2): its carry space, derived from the account key, DID\n"+
		"and a generation, filled with passes for the account's spaces, its wakes\n"+
		"and links, and the carrier named keeper of the spaces the account manages.\n"+
		"A carrier the account already uses keeps its carry space. Prints the carry\n"+
		"grant (06 §4.3) as one JSON line, the relays given in it: hand it to the\n"+
		"carrier (`minca carry --grant FILE`). It holds the carry space's key.")
	dir := dirFlag(fs)
	name := fs.String("name", "", "the carrier's `NAME`, for people (at most 80 characters)")
	var relays listFlag
	fs.Var(&relays, "relay", "a relay `URL` the grant names for the carrier (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("carrier add takes the carrier's DID")
	}
	body := map[string]any{"did": fs.Arg(0), "name": *name, "relays": []string(relays)}
	out, err := call(ctx, s, *dir, http.MethodPost, "/v1/carriers", emptyLists(body))
	if err != nil {
		return err
	}
	var r struct {
		Grant json.RawMessage `json:"grant"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Grant) == 0 {
		return fmt.Errorf("the node answered with something that is not {grant}: %s", out)
	}
	return printRaw(s, r.Grant)
}

func runCarrierRemove(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "carrier remove", "carrier remove DID [--dir DIR]\n\n"+
		"Removes the carrier (06 §4.2): every pass in its carry space is deleted,\n"+
		"carry:closed written, then its sys.carrier record again with removed; it\n"+
		"is no longer named a keeper. The carrier forgets the account once it hears\n"+
		"carry:closed. Exit 3 when the account uses no such carrier.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("carrier remove takes the carrier's DID")
	}
	return callPrint(ctx, s, *dir, http.MethodDelete, "/v1/carriers/"+url.PathEscape(fs.Arg(0)), nil)
}

func runCarrierList(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "carrier list", "carrier list [--dir DIR]\n\n"+
		"Lists the account's carriers, a JSON line {\"did\",\"name\",\"since\",\"gen\",\"space\",\n"+
		"\"removed\"?} each: live ones, and removed ones with when.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("carrier list takes no arguments")
	}
	return callLines(ctx, s, *dir, "/v1/carriers", "carriers", nil)
}
