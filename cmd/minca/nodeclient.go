package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
)

// dirHelp is the help of --dir, on every verb that talks to a node.
const dirHelp = "the node `DIR`ectory (default: minca in the user's config directory, or $MINCA_DIR)"

// dirFlag adds --dir to a verb that talks to the node.
func dirFlag(fs *flags) *string { return fs.String("dir", "", dirHelp) }

// nodeOptions are the node's options from the command line: its
// directory, store and mirrors (so opened: the store spec's S3 flags and
// --adopt, when the verb has them), and a logger on stderr.
func nodeOptions(s *stdio, dir string, sp *storeSpec, mirrors []string) *node.Options {
	o := &node.Options{Dir: dir, Mirrors: mirrors, Logger: s.logger()}
	if sp != nil {
		o.Store = sp.url
		o.StoreOptions = sp.options(true, false)
	}
	return o
}

// resolveDir is the node directory a verb names: --dir, else the default
// (node.DefaultDir).
func resolveDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := node.DefaultDir()
	if err != nil {
		return "", usageError("%v", err)
	}
	return d, nil
}

// initDir makes dir ready for a node to open: the account key in it, the
// one in keyFile (copied in) or, when it holds none and no note, a new
// one. made says a new account was made.
func initDir(s *stdio, dir, keyFile string) (made bool, err error) {
	if keyFile != "" {
		if _, err := node.KeepAccountKey(dir, keyFile); err != nil {
			return false, usageError("--account-key: %v", err)
		}
		return false, nil
	}
	d, err := node.Inspect(dir)
	if err != nil {
		return false, err
	}
	if d.AccountKey || d.Note {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	k, err := identity.GenerateKey()
	if err != nil {
		return false, err
	}
	p := filepath.Join(dir, node.AccountKeyName)
	if err := identity.WriteKeyFile(p, k); err != nil {
		return false, err
	}
	s.logger().Info("made a new account: its key is the file account.key, keep it safe (it is the account)", "account", k.DID(), "key", p)
	return true, nil
}

// nodeClient is the API of the node in dir: the running node's, or, when
// none runs, a node this command opens on the directory for its own work,
// served on a loopback port for as long as the command runs. done closes
// what it opened.
func nodeClient(ctx context.Context, s *stdio, dir string) (c *api.Client, done func(), err error) {
	if dir, err = resolveDir(dir); err != nil {
		return nil, nil, err
	}
	c, err = api.Dial(ctx, dir)
	if err == nil {
		return c, func() {}, nil
	}
	if !errors.Is(err, api.ErrNotRunning) {
		return nil, nil, unreachable(dir, err)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, notFound("no node directory %s (minca init makes one)", dir)
	}
	n, err := node.Open(ctx, nodeOptions(s, dir, nil, nil))
	if err != nil {
		if errors.Is(err, node.ErrLocked) {
			return nil, nil, unreachable(dir, errors.New("a node runs there but its API does not answer"))
		}
		return nil, nil, err
	}
	srv, err := api.New(n, &api.Options{Logger: s.logger()})
	if err != nil {
		n.Close()
		return nil, nil, err
	}
	ln, u, err := api.Listen("127.0.0.1:0")
	if err != nil {
		n.Close()
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { srv.Serve(sctx, ln, u); close(served) }()
	tok, err := api.Token(dir)
	if err != nil {
		cancel()
		<-served
		n.Close()
		return nil, nil, err
	}
	return api.NewClient(u, tok), func() { cancel(); <-served; n.Close() }, nil
}

// unreachable is a node that could not be reached: exit 4, try again.
func unreachable(dir string, err error) error {
	if dir == "" {
		return &exitError{code: exitUnreachable, err: fmt.Errorf("the node: %w", err)}
	}
	return &exitError{code: exitUnreachable, err: fmt.Errorf("the node in %s: %w", dir, err)}
}

// call makes one API call on the node in dir and returns the answer.
// An error the API answered with is an *api.Error (exitCodeOf maps its
// status); one reaching the node is unreachable (exit 4).
func call(ctx context.Context, s *stdio, dir, method, path string, body any) (json.RawMessage, error) {
	c, done, err := nodeClient(ctx, s, dir)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := c.Do(ctx, method, path, body)
	var ae *api.Error
	if err != nil && !errors.As(err, &ae) && ctx.Err() == nil {
		return nil, unreachable(dir, err)
	}
	return out, err
}

// callPrint makes one API call and prints the answer as one JSON line.
func callPrint(ctx context.Context, s *stdio, dir, method, path string, body any) error {
	out, err := call(ctx, s, dir, method, path, body)
	if err != nil {
		return err
	}
	return printRaw(s, out)
}

// callLines makes one API call whose answer is {list: [entries]} and
// prints each entry as a JSON line, through each (nil: as it is).
func callLines(ctx context.Context, s *stdio, dir, path, list string, each func(json.RawMessage) (any, error)) error {
	out, err := call(ctx, s, dir, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	var m map[string][]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		return fmt.Errorf("the node answered with something that is not {%q: […]}: %w", list, err)
	}
	for _, e := range m[list] {
		if each == nil {
			if err := printRaw(s, e); err != nil {
				return err
			}
			continue
		}
		v, err := each(e)
		if err != nil {
			return err
		}
		if err := writeJSON(s, v); err != nil {
			return err
		}
	}
	return nil
}

// printRaw prints JSON the node answered with as one line, in canonical
// form (a version exactly as it is signed).
func printRaw(s *stdio, b json.RawMessage) error {
	v, err := canonical.Parse(b)
	if err != nil {
		return fmt.Errorf("the node answered with something that is not JSON: %w", err)
	}
	return writeJSONLine(s.out, v)
}

// spacePath is an API path under a space, each part escaped.
func spacePath(sp string, rest ...string) string {
	p := "/v1/spaces/" + url.PathEscape(sp)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}
