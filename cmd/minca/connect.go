package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/relayroom"
	"github.com/minca-go/minca/node"
)

func runConnect(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "connect", "connect HOME [--dir DIR] [--relay URL] [--name NAME] [--no-open] [--timeout D]\n\nConnects this node to an account by code (06 §3), with no seed: it makes a\none-time code, prints the link to HOME's connect page carrying it (a JSON line\n{\"link\",\"home\",\"key\"} on stdout) and opens it in a browser where there is\none, meets the home on the relay (URL; default HOME's own, ws(s)://HOST/minca/relay),\nthen asks on the terminal for the six-digit check the home shows. Only when\nthe check matches does it keep the grant: a records-only note from the account\nto DIR's session key, in DIR (session.note, and grant.json beside it), so that\n`minca serve`, `minca put` and the other verbs on DIR write under it. Prints\n{\"account\",\"name\",\"home\",\"key\",\"expiresAt\"}. Exit 1 when the home says no or\nthe check does not match, 2 for a DIR that holds an account key or a note\nalready, 4 when the relay cannot be reached or nobody answers in time.")
	dir := dirFlag(fs)
	relay := fs.String("relay", "", "the relay `URL` (ws:// or wss://, …/minca/relay) to meet the home on; default: HOME's own")
	name := fs.String("name", "", "the `NAME` the home shows for this program (at most 80 characters; default: minca on this host)")
	noOpen := fs.Bool("no-open", false, "do not open a browser; only print the link")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the home and the person, a `DURATION` such as 5m")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("connect takes HOME: the account home's address, e.g. http://localhost:7466")
	}
	page, origin, err := connect.ConnectPage(fs.Arg(0))
	if err != nil {
		return usageError("HOME: %v", err)
	}
	if *timeout <= 0 {
		return usageError("--timeout %v: want a positive duration", *timeout)
	}
	relayURL := *relay
	if relayURL == "" {
		relayURL = "ws" + strings.TrimPrefix(origin, "http") + "/minca/relay"
	}
	if err := checkRelayURL(relayURL); err != nil {
		return usageError("--relay: %v", err)
	}
	if *name == "" {
		host, _ := os.Hostname()
		*name = strings.TrimSpace("minca on " + host)
		if len([]rune(*name)) > connect.MaxNameLen {
			*name = string([]rune(*name)[:connect.MaxNameLen])
		}
	}
	d := *dir
	if d == "" {
		if d, err = node.DefaultDir(); err != nil {
			return usageError("%v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(d, node.AccountKeyName)); err == nil {
		return usageError("%s holds the account key: a program connected by code holds none; use another --dir", d)
	}
	if held, err := node.HeldNote(d); err != nil || held != nil {
		if err != nil {
			return usageError("%s holds a note that does not read (%v); use another --dir", d, err)
		}
		return usageError("%s holds a note already (from %s): a key asks one account, once (06 §2.1); use another --dir", d, held.Iss)
	}
	key, err := node.SessionKey(d)
	if err != nil {
		return err
	}
	code, err := connect.NewCode()
	if err != nil {
		return err
	}
	p, err := connect.NewProgram(connect.ProgramOptions{Code: code, Page: page, Key: key, Name: *name})
	if err != nil {
		return usageError("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	log := s.logger()
	room, err := relayroom.Join(ctx, relayURL, code.Room(), &relayroom.Options{Logger: log})
	if err != nil {
		return &exitError{code: exitUnreachable, err: fmt.Errorf("the relay: %w", err)}
	}
	defer room.Close()
	link := code.Link(page)
	if err := writeJSON(s, map[string]any{"link": link, "home": page, "key": key.DID()}); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "Open this link where you are signed in to your account home, and allow %q:\n\n  %s\n\n", *name, link)
	if !*noOpen {
		openBrowser(link, log)
	}
	lines := bufio.NewReader(s.in)
	ask := func(ctx context.Context, tries int) (string, error) {
		if tries > 0 {
			fmt.Fprintf(s.err, "That is not the check the home shows (%d of %d tries left).\n", connect.MaxCheckTries-tries, connect.MaxCheckTries)
		}
		fmt.Fprint(s.err, "Type the six-digit check the home shows: ")
		got := make(chan string, 1)
		readErr := make(chan error, 1)
		go func() {
			l, err := lines.ReadString('\n')
			if err != nil && (l == "" || !errors.Is(err, io.EOF)) {
				readErr <- fmt.Errorf("no check given: %w", err)
				return
			}
			got <- l
		}()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case err := <-readErr:
			return "", usageError("%v", err)
		case l := <-got:
			return strings.TrimSpace(l), nil
		}
	}
	g, err := connect.RunProgram(ctx, room, p, ask, &connect.RunOptions{Dropped: func(peer string, err error) {
		log.Debug("ignored", "peer", peer, "err", err)
	}})
	if err != nil {
		var ref *connect.Refusal
		switch {
		case errors.As(err, &ref):
			return failed(err)
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
			return &exitError{code: exitUnreachable, err: fmt.Errorf("no answer from the home at %s within %v (state: %s)", page, *timeout, describeProgram(p))}
		}
		return err
	}
	b, err := canonical.Marshal(g.Value())
	if err != nil {
		return err
	}
	if err := node.KeepGrant(d, g.Note, b); err != nil {
		return err
	}
	named := ""
	if g.Name != "" {
		named = fmt.Sprintf(" (%q, as the home names it)", g.Name)
	}
	fmt.Fprintf(s.err, "Connected to %s%s, records only, until %s.\n", g.DID, named, time.Unix(g.ExpiresAt, 0).UTC().Format(time.RFC3339))
	abs, err := filepath.Abs(d)
	if err != nil {
		return err
	}
	return writeJSON(s, map[string]any{"account": g.DID, "name": g.Name, "home": g.Home, "key": key.DID(), "expiresAt": g.ExpiresAt, "dir": abs})
}

// describeProgram says where an exchange stopped, for a timeout.
func describeProgram(p *connect.Program) string {
	switch p.State() {
	case connect.ProgramWaiting:
		return "no home answered on the relay"
	case connect.ProgramKeyed:
		return "a peer answered, but no home at the address opened"
	case connect.ProgramAsked:
		return "the home did not hear the program"
	case connect.ProgramHeard:
		return "the home heard the program; no answer or no check came"
	}
	return "ended"
}

// openBrowser opens link where the machine has a way to: xdg-open (or
// open on macOS). Without one, the link printed is enough.
func openBrowser(link string, log interface{ Debug(string, ...any) }) {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return
	}
	cmd := exec.Command(path, link)
	if err := cmd.Start(); err != nil {
		log.Debug("no browser opened", "err", err)
		return
	}
	go cmd.Wait()
}
