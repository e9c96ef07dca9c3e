package negbench

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/minca-go/minca/negentropy"
)

// Peer is a program speaking the reference harness line protocol, such as
// `minca negentropy-harness` or a reference implementation's harness.
type Peer struct {
	Name string
	Argv []string
	Env  []string // added to the environment, e.g. FRAMESIZELIMIT=60000
}

// ParsePeer reads "name=command args…".
func ParsePeer(s string) (Peer, error) {
	name, cmd, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.TrimSpace(cmd) == "" {
		return Peer{}, fmt.Errorf("negbench: peer %q: want name=command", s)
	}
	return Peer{Name: name, Argv: strings.Fields(cmd)}, nil
}

type proc struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	wc  io.WriteCloser
	out *bufio.Reader
}

func start(ctx context.Context, p Peer) (*proc, error) {
	cmd := exec.CommandContext(ctx, p.Argv[0], p.Argv[1:]...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stderr = os.Stderr
	wc, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	rc, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.Name, err)
	}
	return &proc{cmd: cmd, in: bufio.NewWriterSize(wc, 1<<20), wc: wc, out: bufio.NewReaderSize(rc, 1<<20)}, nil
}

func (p *proc) send(line string) error {
	p.in.WriteString(line)
	p.in.WriteByte('\n')
	return p.in.Flush()
}

func (p *proc) line() (string, error) {
	s, err := p.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading: %w", err)
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// load writes the items and seal, then probes with a version-2 message whose
// answer "msg,61" shows the peer has loaded.
func (p *proc) load(items []negentropy.Item) error {
	var buf [2 * negentropy.IDSize]byte
	for _, it := range items {
		hex.Encode(buf[:], it.ID[:])
		fmt.Fprintf(p.in, "item,%d,%s\n", it.Timestamp, buf[:])
	}
	if err := p.send("seal\nmsg,62"); err != nil {
		return err
	}
	l, err := p.line()
	if err != nil {
		return err
	}
	if l != "msg,61" {
		return fmt.Errorf("probe answered %q", l)
	}
	return nil
}

// Drive reconciles a (client) against b (server) through two harness
// processes and times each side from "initiate" on, loading excluded. Times
// include each side's hex coding and pipe transfer, alike for every peer.
func Drive(ctx context.Context, client, server Peer, a, b []negentropy.Item) (Row, error) {
	return DriveRecord(ctx, client, server, a, b, nil)
}

// DriveRecord is [Drive] that also hands every message, as hex, to record
// in the order sent, if record is not nil.
func DriveRecord(ctx context.Context, client, server Peer, a, b []negentropy.Item, record func(hexMsg string)) (Row, error) {
	r := Row{SizeA: len(a), SizeB: len(b), IdealBytes: 32 * symDiff(a, b)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := start(ctx, client)
	if err != nil {
		return r, err
	}
	s, err := start(ctx, server)
	if err != nil {
		return r, err
	}
	defer func() { c.wc.Close(); s.wc.Close(); c.cmd.Wait(); s.cmd.Wait() }()
	errc := make(chan error, 1)
	go func() { errc <- s.load(b) }()
	if err := c.load(a); err != nil {
		return r, fmt.Errorf("%s loading: %w", client.Name, err)
	}
	if err := <-errc; err != nil {
		return r, fmt.Errorf("%s loading: %w", server.Name, err)
	}

	t0 := time.Now()
	if err := c.send("initiate"); err != nil {
		return r, err
	}
	diffs := 0
	for {
		l, err := c.line()
		if err != nil {
			return r, fmt.Errorf("%s: %w", client.Name, err)
		}
		if strings.HasPrefix(l, "have,") || strings.HasPrefix(l, "need,") {
			diffs++
			continue
		}
		r.Client += time.Since(t0)
		if l == "done" {
			break
		}
		q, ok := strings.CutPrefix(l, "msg,")
		if !ok {
			return r, fmt.Errorf("%s printed %.40q", client.Name, l)
		}
		r.Rounds++
		r.BytesUp += len(q) / 2
		if record != nil {
			record(q)
		}
		t0 = time.Now()
		if err := s.send(l); err != nil {
			return r, err
		}
		ans, err := s.line()
		r.Server += time.Since(t0)
		if err != nil {
			return r, fmt.Errorf("%s: %w", server.Name, err)
		}
		if !strings.HasPrefix(ans, "msg,") {
			return r, fmt.Errorf("%s printed %.40q", server.Name, ans)
		}
		r.BytesDown += (len(ans) - 4) / 2
		if record != nil {
			record(ans[4:])
		}
		t0 = time.Now()
		if err := c.send(ans); err != nil {
			return r, err
		}
	}
	if diffs < r.IdealBytes/32 {
		return r, errors.New("fewer have/need lines than differing ids")
	}
	return r, nil
}
