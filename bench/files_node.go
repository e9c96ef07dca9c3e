package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/node/api"
)

// tailLines is how many of its last lines of stderr a node's failure or
// stall shows.
const tailLines = 20

// filesNode is a `minca serve` child process, its stderr kept in a file
// (stderrPath) so a failure or a stall can be read after the fact.
type filesNode struct {
	role       string // "sender" or "receiver"
	cmd        *exec.Cmd
	client     *api.Client
	url, token string
	peers      string
	stderrPath string
	// exited is closed once the process has ended, waitErr then set.
	exited  chan struct{}
	waitErr error
}

// waitFile waits until the node holds a file (HEAD …/files/{hash}?wait=).
func (n *filesNode) waitFile(ctx context.Context, sp, hash string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, n.url+"/v1/spaces/"+sp+"/files/"+hash+"?wait=5m", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+n.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusNotFound:
			continue
		default:
			return fmt.Errorf("bench: HEAD of file %s: %s", hash, resp.Status)
		}
	}
}

// startNode starts `minca serve` on dir, its stderr written to
// stderrPath, and waits for the line saying where it listens.
func startNode(ctx context.Context, minca, role, dir, stderrPath string, args ...string) (*filesNode, error) {
	errf, err := os.Create(stderrPath)
	if err != nil {
		return nil, fmt.Errorf("bench: the %s node's stderr: %w", role, err)
	}
	cmd := exec.CommandContext(ctx, minca, append([]string{"serve", "--dir", dir, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = errf
	out, err := cmd.StdoutPipe()
	if err != nil {
		errf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		errf.Close()
		return nil, err
	}
	errf.Close() // the child has its own copy
	n := &filesNode{role: role, cmd: cmd, stderrPath: stderrPath, exited: make(chan struct{})}
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() {
		io.Copy(io.Discard, out) // nothing more is printed; never block the child
		n.waitErr = cmd.Wait()
		close(n.exited)
	}()
	var ready struct{ URL, Peers string }
	if err == nil {
		err = json.Unmarshal([]byte(line), &ready)
	}
	if err != nil || ready.URL == "" {
		n.stop()
		return nil, n.failed(fmt.Errorf("bench: minca serve printed %q: %v", line, err))
	}
	tok, err := api.Token(dir)
	if err != nil {
		n.stop()
		return nil, n.failed(err)
	}
	n.client, n.url, n.token, n.peers = api.NewClient(ready.URL, tok), ready.URL, tok, ready.Peers
	return n, nil
}

func (n *filesNode) stop() {
	n.cmd.Process.Kill()
	<-n.exited
}

// state says whether the node runs or how it ended, where its stderr is,
// and the end of it.
func (n *filesNode) state() string {
	run := "running"
	select {
	case <-n.exited:
		run = fmt.Sprintf("exited (%v)", n.waitErr)
		if n.waitErr == nil {
			run = "exited (status 0)"
		}
	default:
	}
	tail, err := tailFile(n.stderrPath, tailLines)
	if err != nil {
		tail = fmt.Sprintf("(unreadable: %v)", err)
	}
	return fmt.Sprintf("the %s node, %s; the end of its stderr (%s):\n%s", n.role, run, n.stderrPath, tail)
}

// failed is err with the nodes' states: for a step that failed, each
// node's stderr, and whether it is still running. A node that died is
// often why a request failed, and its end is seen a moment later: the
// first exit is waited for, at most exitWait.
func failed(err error, nodes ...*filesNode) error {
	const exitWait = 2 * time.Second
	t := time.NewTimer(exitWait)
	defer t.Stop()
	var exited []<-chan struct{}
	for _, n := range nodes {
		if n != nil {
			exited = append(exited, n.exited)
		}
	}
	switch len(exited) {
	case 1:
		select {
		case <-exited[0]:
		case <-t.C:
		}
	case 2:
		select {
		case <-exited[0]:
		case <-exited[1]:
		case <-t.C:
		}
	}
	for _, n := range nodes {
		if n != nil {
			err = fmt.Errorf("%w\n%s", err, n.state())
		}
	}
	return err
}

func (n *filesNode) failed(err error) error { return failed(err, n) }

// tailFile is the last n lines of the file at path.
func tailFile(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	const most = 64 << 10 // the end of a long log is enough
	if fi, err := f.Stat(); err == nil && fi.Size() > most {
		if _, err := f.Seek(fi.Size()-most, io.SeekStart); err != nil {
			return "", err
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n"))), nil
}

// watchStall reports, on log, a step that has made no progress (done
// unchanged) for every, with the nodes' states; until stop is closed.
func watchStall(log io.Writer, step string, every time.Duration, done *atomic.Int64, total int, stop <-chan struct{}, nodes ...*filesNode) {
	if log == nil || every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last := done.Load()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := done.Load()
		if now != last {
			last = now
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "bench files: %s: nothing for %v (%d of %d done)", step, every, now, total)
		for _, n := range nodes {
			b.WriteString("\n")
			b.WriteString(n.state())
		}
		fmt.Fprintln(log, b.String())
	}
}
