package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

// initDir makes the node directory and, unless one is given or there,
// the account key in it. It returns the directory.
func initDir(o *node.Options) (string, error) {
	dir := o.Dir
	if dir == "" {
		d, err := node.DefaultDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(dir, node.AccountKeyName)
	if o.AccountKey == "" {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			k, err := identity.GenerateKey()
			if err != nil {
				return "", err
			}
			if err := identity.WriteKeyFile(p, k); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

// nodeClient is the API of the node in dir: the running node's, or, when
// none runs, a node this command opens on the directory for its own
// work, served on a loopback port for as long as the command runs. done
// closes what it opened.
func nodeClient(ctx context.Context, s *stdio, dir string) (c *api.Client, done func(), err error) {
	if dir == "" {
		if dir, err = node.DefaultDir(); err != nil {
			return nil, nil, usageError("%v", err)
		}
	}
	c, err = api.Dial(ctx, dir)
	if err == nil {
		return c, func() {}, nil
	}
	if !errors.Is(err, api.ErrNotRunning) {
		return nil, nil, &exitError{code: exitTryAgain, err: err}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, notFound("no node directory %s (minca init makes one)", dir)
	}
	n, err := node.Open(ctx, nodeOptions(s, dir, "", nil))
	if err != nil {
		if errors.Is(err, node.ErrLocked) {
			return nil, nil, &exitError{code: exitTryAgain, err: errors.New("a node runs in " + dir + " but its API does not answer; try again")}
		}
		return nil, nil, failed(err)
	}
	srv, err := api.New(n, &api.Options{Logger: s.logger()})
	if err != nil {
		n.Close()
		return nil, nil, failed(err)
	}
	ln, url, err := api.Listen("127.0.0.1:0")
	if err != nil {
		n.Close()
		return nil, nil, failed(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { srv.Serve(sctx, ln, url); close(served) }()
	tok, _ := api.Token(dir)
	return api.NewClient(url, tok), func() { cancel(); <-served; n.Close() }, nil
}

// apiExit turns an API error into the CLI's exit codes: 3 not found, 2
// bad input, 1 refused (a check failed) or not offered, 4 unreachable or
// closing (try again).
func apiExit(err error) error {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return &exitError{code: exitTryAgain, err: err}
	}
	switch {
	case ae.Status == http.StatusNotFound:
		return &exitError{code: exitNotFound, err: ae}
	case ae.Status == http.StatusBadRequest || ae.Status == http.StatusRequestEntityTooLarge:
		return &exitError{code: exitUsage, err: ae}
	case ae.Status == http.StatusNotImplemented:
		return &exitError{code: exitFailed, err: ae}
	case ae.Status >= 500:
		return &exitError{code: exitTryAgain, err: ae}
	}
	return &exitError{code: exitFailed, err: ae}
}

// call makes one API call on the node in dir and prints the answer as one
// JSON line.
func call(ctx context.Context, s *stdio, dir, method, path string, body any) error {
	c, done, err := nodeClient(ctx, s, dir)
	if err != nil {
		return err
	}
	defer done()
	out, err := c.Do(ctx, method, path, body)
	if err != nil {
		return apiExit(err)
	}
	var v any
	if json.Unmarshal(out, &v) != nil {
		return failed(errors.New("the node answered with something that is not JSON"))
	}
	return writeLine(s, json.RawMessage(compact(out)))
}

func compact(b []byte) []byte {
	var buf []byte
	var v json.RawMessage = b
	if out, err := json.Marshal(v); err == nil {
		buf = out
	}
	return buf
}
