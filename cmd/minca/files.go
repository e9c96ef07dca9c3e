package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

// Files through the node (02 §3.1, docs/api.md Files): `minca put
// --attach`, `minca file get|ls`.

func fileSubverbs() []verb {
	return []verb{
		{"get", "write a file a version of a space names: to stdout, or to a path with -o", runFileGet},
		{"ls", "list the files a record's current version names, and whether each is held", runFileLs},
	}
}

func runFile(ctx context.Context, s *stdio, args []string) error {
	return runSubverb(ctx, s, "file", fileSubverbs(), args)
}

// attach uploads each path as a file of the space, streamed (sealed by the
// node in a private space), and returns how a write names them.
func attach(ctx context.Context, c *api.Client, spaceID string, paths []string) ([]node.FileRef, error) {
	var refs []node.FileRef
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, usageError("--attach: %v", err)
		}
		ref, err := c.Upload(ctx, spaceID, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("uploading %s: %w", p, err)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func runFileGet(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "file get", "file get SPACE HASH [-o PATH] [--wait DURATION] [--dir DIR]\n\n"+
		"Writes the bytes of the file HASH of the space (as `minca file ls` lists it),\n"+
		"opened in a private space: to stdout, or with -o to PATH, written whole and\n"+
		"then renamed into place, printing {hash, size, path}. A file the node does\n"+
		"not hold yet is asked of its peers; --wait waits for it that long. Exit 3\n"+
		"when it is not held.")
	dir := dirFlag(fs)
	out := fs.String("o", "", "write the file to `PATH` instead of stdout")
	wait := fs.Duration("wait", 0, "wait up to `DURATION` (at most 5m) for a file not held yet")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("file get takes SPACE and HASH")
	}
	if *wait < 0 || *wait > api.MaxFileWait {
		return usageError("--wait is from 0s to %s", api.MaxFileWait)
	}
	c, done, err := nodeClient(ctx, s, *dir)
	if err != nil {
		return err
	}
	defer done()
	sp, hash := fs.Arg(0), fs.Arg(1)
	if *out == "" {
		_, err := c.Download(ctx, sp, hash, *wait, s.out)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".*")
	if err != nil {
		return usageError("-o: %v", err)
	}
	n, err := c.Download(ctx, sp, hash, *wait, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		var ae *api.Error
		if !errors.As(err, &ae) && ctx.Err() == nil {
			err = fmt.Errorf("writing %s: %w", *out, err)
		}
		return err
	}
	return writeJSON(s, map[string]any{"hash": hash, "size": n, "path": *out})
}

func runFileLs(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "file ls", "file ls SPACE KEY [--dir DIR]\n\n"+
		"Lists the files the readable current version of the record KEY names, one\n"+
		"JSON line each: {hash, size, held}. Exit 3 when the record does not read.")
	dir := dirFlag(fs)
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("file ls takes SPACE and KEY")
	}
	return callLines(ctx, s, *dir, spacePath(fs.Arg(0), "records", fs.Arg(1), "files"), "files", nil)
}

// putRequest sends a put, first uploading the files to attach.
func putRequest(ctx context.Context, s *stdio, dir, spaceID string, req map[string]any, paths []string) error {
	if len(paths) == 0 {
		return callPrint(ctx, s, dir, http.MethodPost, spacePath(spaceID, "records"), req)
	}
	c, done, err := nodeClient(ctx, s, dir)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	refs, err := attach(ctx, c, spaceID, paths)
	if err != nil {
		return err
	}
	s.logger().Info("files uploaded", "files", len(refs), "took", time.Since(start).Round(time.Millisecond))
	req["files"] = refs
	out, err := c.Do(ctx, http.MethodPost, spacePath(spaceID, "records"), req)
	if err != nil {
		return err
	}
	return printRaw(s, out)
}
