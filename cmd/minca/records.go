package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/url"

	"github.com/minca-go/minca/canonical"
)

// parseArgs parses flags given before, between or after the arguments,
// and returns the arguments.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, done bool, err error) {
	for {
		if done, err := parseFlags(fs, args); done {
			return nil, true, err
		}
		if fs.NArg() == 0 {
			return pos, false, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func dirFlag(fs *flag.FlagSet) *string {
	return fs.String("dir", "", "the node directory (default: minca in the user's config directory, or $MINCA_DIR)")
}

func spacePath(sp string, rest ...string) string {
	p := "/v1/spaces/" + url.PathEscape(sp)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

func runPut(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "put", "put SPACE COLLECTION [--key K] [--links JSON] < body.json\n\nWrites the next version of a record through the node (02 §4): the body is\nJSON on stdin; the key is a fresh one unless --key names one (a full key or a\nchosen name) or the collection's rules derive it. Prints the signed version.")
	dir := dirFlag(fs)
	key := fs.String("key", "", "the record's key, or a name the account chooses (settings)")
	links := fs.String("links", "", `the version's links, a JSON list of {"rel","to"}`)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("put takes SPACE and COLLECTION")
	}
	raw, err := io.ReadAll(io.LimitReader(s.in, 64<<20))
	if err != nil {
		return err
	}
	if _, err := canonical.Parse(bytes.TrimSpace(raw)); err != nil {
		return usageError("the body on stdin: %v", err)
	}
	body := map[string]any{"collection": pos[1], "body": json.RawMessage(bytes.TrimSpace(raw))}
	if *key != "" {
		body["key"] = *key
	}
	if *links != "" {
		if !json.Valid([]byte(*links)) {
			return usageError("--links is a JSON list")
		}
		body["links"] = json.RawMessage(*links)
	}
	return call(ctx, s, *dir, "POST", spacePath(pos[0], "records"), body)
}

func runGet(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "get", "get SPACE KEY\n\nPrints the record's readable current version (02 §9.5); exit 3 when none.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("get takes SPACE and KEY")
	}
	return call(ctx, s, *dir, "GET", spacePath(pos[0], "records", pos[1]), nil)
}

func runDelete(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "delete", "delete SPACE KEY\n\nWrites a delete of the record (02 §4.4) and prints it.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("delete takes SPACE and KEY")
	}
	return call(ctx, s, *dir, "DELETE", spacePath(pos[0], "records", pos[1]), nil)
}

func runHistory(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "history", "history SPACE KEY\n\nPrints every held version of the record, newest first (02 §4.3), with its\nstanding and whether it is held whole or as a stub.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 {
		return usageError("history takes SPACE and KEY")
	}
	return call(ctx, s, *dir, "GET", spacePath(pos[0], "records", pos[1], "history"), nil)
}

func runQuery(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "query", "query SPACE QUERY\n\nAnswers a query (06 §2.11: {\"collection\", \"where\"?, \"order\"?, \"limit\"?,\n\"cursor\"?}) and prints the page: {\"entries\", \"next\"}.")
	dir := dirFlag(fs)
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) != 2 || !json.Valid([]byte(pos[1])) {
		return usageError("query takes SPACE and a JSON query")
	}
	return call(ctx, s, *dir, "POST", spacePath(pos[0], "query"), []byte(pos[1]))
}

func runWatch(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "watch", "watch [SPACE] [--after CURSOR] [--count N]\n\nPrints a space's events (every space's without SPACE) as JSON lines, in\ncommit order, until interrupted or N were printed. --after resumes after\na cursor (0: from the start).")
	dir := dirFlag(fs)
	after := fs.String("after", "", "print the events after this cursor (0: every event)")
	count := fs.Int("count", 0, "stop after this many events (0: never)")
	pos, done, err := parseArgs(fs, args)
	if done {
		return err
	}
	if len(pos) > 1 {
		return usageError("watch takes at most a SPACE")
	}
	path := "/v1/events"
	if len(pos) == 1 {
		path = spacePath(pos[0], "events")
	}
	if *after != "" {
		path += "?after=" + url.QueryEscape(*after)
	}
	c, doneFn, err := nodeClient(ctx, s, *dir)
	if err != nil {
		return err
	}
	defer doneFn()
	n := 0
	err = c.Events(ctx, path, func(data json.RawMessage) bool {
		s.out.Write(append(bytes.TrimSpace(data), '\n'))
		n++
		return *count == 0 || n < *count
	})
	if err != nil && ctx.Err() == nil {
		return apiExit(err)
	}
	return nil
}
