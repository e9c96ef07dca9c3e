package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node/api"
)

// readJSONArg reads one JSON value: the text of an argument when given,
// else a FILE's or stdin's (the verbs that take a body or a query).
func readJSONArg(s *stdio, path, what string) (json.RawMessage, error) {
	raw, err := readAll(s, path)
	if err != nil {
		return nil, err
	}
	raw = bytes.TrimSpace(raw)
	if _, err := canonical.Parse(raw); err != nil {
		return nil, usageError("%s: %v", what, err)
	}
	return raw, nil
}

func runPut(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "put", "put SPACE COLLECTION [--key K] [--links JSON] [--attach PATH]… [FILE|-]\n\nWrites the next version of a record through the node (02 §4): the body is\nthe JSON in FILE, or on stdin; the key is a fresh one unless --key names one\n(a full key, or a name the account chooses: settings) or the collection's\nrules derive it (onePer). COLLECTION is lower case with at least one dot\n(app.todo), the body a JSON object. A request to the node is at most 1 MiB:\na bigger body is refused (exit 2, request/too-large); a body holds the\nfields an app shows, and big content goes in files the version names: each\n--attach PATH is uploaded first, streamed (sealed in a private space), and\nnamed in the version's files (02 §3.1).\nPrints the signed version. Exit 1 when the node refuses it (its schema,\nthe judge), naming why.")
	dir := dirFlag(fs)
	key := fs.String("key", "", "the record's `KEY`, or a name the account chooses (settings)")
	links := fs.String("links", "", "the version's links, a `JSON` list of {\"rel\",\"to\"}")
	var attach listFlag
	fs.Var(&attach, "attach", "a file at `PATH` the version names, uploaded first (repeatable)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 2 || fs.NArg() > 3 {
		return usageError("put takes SPACE, COLLECTION and at most one FILE")
	}
	body, err := readJSONArg(s, fs.Arg(2), "the body")
	if err != nil {
		return err
	}
	req := map[string]any{"collection": fs.Arg(1), "body": body}
	if *key != "" {
		req["key"] = *key
	}
	if *links != "" {
		if !json.Valid([]byte(*links)) {
			return usageError("--links is a JSON list")
		}
		req["links"] = json.RawMessage(*links)
	}
	return putRequest(ctx, s, *dir, fs.Arg(0), req, attach)
}

// recordVerb is get, delete and history: SPACE KEY and nothing else.
func recordVerb(ctx context.Context, s *stdio, args []string, name, usage string, do func(dir, sp, key string) error) error {
	fs := newFlags(s, name, name+" SPACE KEY\n\n"+usage)
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("%s takes SPACE and KEY", name)
	}
	return do(*dir, fs.Arg(0), fs.Arg(1))
}

func runGet(ctx context.Context, s *stdio, args []string) error {
	return recordVerb(ctx, s, args, "get", "Prints the record's readable current version (02 §9.5) through the node;\nexit 3 when none.", func(dir, sp, key string) error {
		return callPrint(ctx, s, dir, http.MethodGet, spacePath(sp, "records", key), nil)
	})
}

func runDelete(ctx context.Context, s *stdio, args []string) error {
	return recordVerb(ctx, s, args, "delete", "Writes a delete of the record (02 §4.4) through the node and prints it;\nexit 3 when there is no record to delete.", func(dir, sp, key string) error {
		return callPrint(ctx, s, dir, http.MethodDelete, spacePath(sp, "records", key), nil)
	})
}

func runHistory(ctx context.Context, s *stdio, args []string) error {
	return recordVerb(ctx, s, args, "history", "Prints every held version of the record, newest first (02 §4.3), as JSON\nlines {\"standing\",\"stored\",\"version\"}, as store history does; exit 3 when\nnone is held.", func(dir, sp, key string) error {
		return callLines(ctx, s, dir, spacePath(sp, "records", key, "history"), "history", nil)
	})
}

func runQuery(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "query", "query SPACE [QUERY|-]\n\nAnswers a query through the node's index (06 §2.11; docs/queries.md):\n{\"collection\", \"where\"?, \"order\"?, \"limit\"?, \"cursor\"?}, given as an\nargument or on stdin, \"$me\" standing for the account. Prints the page as one\nJSON line {\"entries\", \"next\"}: the readable current versions that match, in\nthe query's order, and the cursor of the next page (\"\" after the last).\nExit 2, naming the bad member, for a malformed query.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageError("query takes SPACE and a QUERY")
	}
	var q json.RawMessage
	if a := fs.Arg(1); a != "" && a != "-" {
		q = json.RawMessage(a)
	} else {
		var err error
		if q, err = readJSONArg(s, "", "the query"); err != nil {
			return err
		}
	}
	return callPrint(ctx, s, *dir, http.MethodPost, spacePath(fs.Arg(0), "query"), []byte(q))
}

func runWatch(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "watch", "watch [SPACE] [--after CURSOR] [--count N]\n       minca watch SPACE --query QUERY [--count N]\n\nPrints a space's events (every space's without SPACE) as JSON lines, in\ncommit order, until interrupted or N were printed; --after resumes after a\ncursor (0: from the start), across restarts of the node too. With --query, a\nlive query (06 §2.11, docs/queries.md): each change of its result as\n{\"kind\":\"enter\"|\"change\"|\"leave\",\"entry\"}, from now on.")
	dir := dirFlag(fs)
	after := fs.String("after", "", "print the events after this `CURSOR` (0: every event)")
	count := fs.Int("count", 0, "stop after `N` lines (0: never)")
	query := fs.String("query", "", "a live query's `JSON`: {\"collection\", \"where\"?}")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 1 {
		return usageError("watch takes at most a SPACE")
	}
	if *count < 0 {
		return usageError("--count %d: want 0 or more", *count)
	}
	path := "/v1/events"
	switch {
	case *query != "" && (fs.NArg() != 1 || *after != ""):
		return usageError("watch --query takes a SPACE, and no --after")
	case *query != "":
		path = spacePath(fs.Arg(0), "query", "live") + "?q=" + url.QueryEscape(*query)
	case fs.NArg() == 1:
		path = spacePath(fs.Arg(0), "events")
	}
	if *after != "" {
		path += "?after=" + url.QueryEscape(*after)
	}
	c, done, err := nodeClient(ctx, s, *dir)
	if err != nil {
		return err
	}
	defer done()
	n := 0
	var werr error
	err = c.Events(ctx, path, func(data json.RawMessage) bool {
		if werr = printRaw(s, data); werr != nil {
			return false
		}
		n++
		return *count == 0 || n < *count
	})
	var ae *api.Error
	switch {
	case werr != nil:
		return werr
	case ctx.Err() != nil:
		return nil // interrupted: exitCode says so
	case err != nil && !errors.As(err, &ae):
		return unreachable(*dir, err)
	}
	return err // an *api.Error: a subscriber dropped resumes with --after
}
