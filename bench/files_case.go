package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/node"
)

// caseRun is what one case needs besides its size.
type caseRun struct {
	minca, dir, src string
	total           int64
	// stderr is the prefix of the nodes' stderr files
	// (PREFIX-sender.stderr, PREFIX-receiver.stderr), kept after the case.
	stderr string
	// log, when set, is told of a step that makes no progress for
	// stallAfter, with the end of each node's stderr.
	log        io.Writer
	stallAfter time.Duration
	// nameWithin bounds each part of the upload (FilesConfig.NameWithin).
	nameWithin time.Duration
	// nodeArgs are passed to both nodes' `minca serve`.
	nodeArgs []string
}

// nodeArgs are the `minca serve` flags cfg sets on both nodes.
func nodeArgs(cfg FilesConfig) []string {
	if cfg.TidyFilesEvery > 0 {
		return []string{"--tidy-files-every", cfg.TidyFilesEvery.String()}
	}
	return nil
}

// step runs a step of n items, f counting in done those done, watched
// for a stall; its error comes with each node's state and the end of its
// stderr.
func (r caseRun) step(name string, n int, f func(done *atomic.Int64) error, nodes ...*filesNode) error {
	var done atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchStall(r.log, name, r.stallAfter, &done, n, stop, nodes...)
	}()
	err := f(&done)
	close(stop)
	<-watched
	if err != nil {
		return failed(fmt.Errorf("bench: %s: %w", name, err), nodes...)
	}
	return nil
}

// filesCase runs one file size: two fresh nodes, the upload to the first,
// the sync to the second, the read back from it.
func filesCase(ctx context.Context, r caseRun, size int64) (FilesCase, error) {
	minca, dir, total := r.minca, r.dir, r.total
	c := FilesCase{Size: size, Files: int(total / size)}
	if c.Files == 0 {
		return c, fmt.Errorf("bench: files of %d bytes: --bytes %d holds none", size, total)
	}
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	ad, bd := filepath.Join(dir, "sender"), filepath.Join(dir, "receiver")
	for _, d := range []string{ad, bd} {
		if _, err := runMinca(ctx, minca, "init", "--dir", d); err != nil {
			return c, err
		}
	}
	out, err := runMinca(ctx, minca, "space", "create", "files", "--roles", `{"writer":[{"cmd":"/record"}]}`, "--dir", ad)
	if err != nil {
		return c, err
	}
	sp := jsonString(out, "id")
	if out, err = runMinca(ctx, minca, "space", "invite", sp, "--role", "writer", "--dir", ad); err != nil {
		return c, err
	}
	if _, err = runMinca(ctx, minca, "space", "join", jsonString(out, "invite"), "--dir", bd); err != nil {
		return c, err
	}
	sender, err := startNode(ctx, minca, "sender", ad, r.stderr+"-sender.stderr", append([]string{"--peer-listen", "127.0.0.1:0"}, r.nodeArgs...)...)
	if err != nil {
		return c, err
	}
	defer sender.stop()
	// The receiver starts and dials, and a file of one byte reaches it:
	// the sync below is of the files alone, between two running nodes
	// with a session open, not of a node starting.
	warm, err := sender.client.Upload(ctx, sp, strings.NewReader("w"))
	if err == nil {
		_, err = sender.client.Do(ctx, "POST", "/v1/spaces/"+sp+"/records", map[string]any{"collection": "app.files", "body": map[string]any{"warm": true}, "files": []node.FileRef{warm}})
	}
	if err != nil {
		return c, failed(fmt.Errorf("bench: the first file: %w", err), sender)
	}
	receiver, err := startNode(ctx, minca, "receiver", bd, r.stderr+"-receiver.stderr", append([]string{"--peer", sender.peers}, r.nodeArgs...)...)
	if err != nil {
		return c, failed(err, sender)
	}
	defer receiver.stop()
	stopSampling := make(chan struct{})
	sampled := make(chan [2][]rssSample, 1)
	go func() {
		var out [2][]rssSample
		var wg sync.WaitGroup
		for i, n := range []*filesNode{sender, receiver} {
			wg.Go(func() { out[i] = sampleRSS(n.cmd.Process.Pid, 200*time.Millisecond, stopSampling) })
		}
		wg.Wait()
		sampled <- out
	}()
	defer func() {
		if stopSampling != nil {
			close(stopSampling)
			<-sampled
		}
	}()
	if err := r.step("the first file", 1, func(done *atomic.Int64) error {
		return receiver.waitFile(ctx, sp, warm.Hash.String())
	}, sender, receiver); err != nil {
		return c, err
	}

	in, err := os.Open(r.src)
	if err != nil {
		return c, err
	}
	defer in.Close()
	// Each file's hash from the source, before the clock starts: what is
	// read back at the end must be these bytes, not only as many.
	want := make([]canonical.ID, c.Files)
	if err := parallel(2, c.Files, func(i int) error {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(in, int64(i)*size, size)); err != nil {
			return err
		}
		want[i] = canonical.ID(h.Sum(nil))
		return nil
	}); err != nil {
		return c, fmt.Errorf("bench: hash the source: %w", err)
	}
	refs := make([]node.FileRef, c.Files)
	var upload, syncing, sendCPU, recvCPU time.Duration
	// The files in parts: each uploaded for at most nameWithin, then
	// named by writes before the node's file grace is over, as a client
	// must (docs/api.md, Files), then synced to the receiver.
	for from := 0; from < c.Files; {
		c.Parts++
		to, took, err := r.uploadPart(ctx, sender, sp, in, size, refs, from)
		if err != nil {
			return c, err
		}
		upload += took
		cpu, took, err := r.syncPart(ctx, sender, receiver, sp, refs, from, to)
		if err != nil {
			return c, err
		}
		syncing += took
		sendCPU += cpu[0]
		recvCPU += cpu[1]
		from = to
	}
	c.UploadMBps = float64(total) / upload.Seconds() / 1e6
	c.SyncMBps = float64(total) / syncing.Seconds() / 1e6
	c.SenderSyncCPU = sendCPU.Seconds() / (float64(total) / 1e9)
	c.ReceiverSyncCPU = recvCPU.Seconds() / (float64(total) / 1e9)

	// Read: every file from the receiver, hashed against the source.
	start := time.Now()
	if err := r.step("read", c.Files, func(done *atomic.Int64) error {
		return parallel(4, c.Files, func(i int) error {
			h := sha256.New()
			n, err := receiver.client.Download(ctx, sp, refs[i].Hash.String(), 0, h)
			if err == nil && n != size {
				err = fmt.Errorf("bench: read %d bytes of a file of %d", n, size)
			}
			if got := canonical.ID(h.Sum(nil)); err == nil && got != want[i] {
				err = fmt.Errorf("bench: file %d read back as %s, not the source's %s", i, got, want[i])
			}
			done.Add(1)
			return err
		})
	}, receiver); err != nil {
		return c, err
	}
	c.ReadMBps = float64(total) / time.Since(start).Seconds() / 1e6
	close(stopSampling)
	stopSampling = nil
	samples := <-sampled
	c.SenderPeakAnonMiB, c.SenderPeakFileMiB = rssPeakParts(samples[0])
	c.ReceiverPeakAnonMiB, c.ReceiverPeakFileMiB = rssPeakParts(samples[1])
	c.SenderThreads, c.ReceiverThreads = mostThreads(samples[0]), mostThreads(samples[1])
	if c.SenderPeakMiB, err = peakRSSMiB(sender.cmd.Process.Pid); err != nil {
		return c, err
	}
	if c.ReceiverPeakMiB, err = peakRSSMiB(receiver.cmd.Process.Pid); err != nil {
		return c, err
	}
	return c, nil
}

// uploadPart uploads the files from from on, four at a time, starting
// no new one once nameWithin has passed (at least one is uploaded):
// refs[from:to] are then uploaded and no version names them yet.
func (r caseRun) uploadPart(ctx context.Context, sender *filesNode, sp string, in io.ReaderAt, size int64, refs []node.FileRef, from int) (to int, took time.Duration, err error) {
	start := time.Now()
	until := start.Add(r.nameWithin)
	err = r.step("upload", len(refs)-from, func(done *atomic.Int64) error {
		to, err = parallelUntil(4, from, len(refs), until, func(i int) error {
			f, err := sender.client.Upload(ctx, sp, io.NewSectionReader(in, int64(i)*size, size))
			refs[i] = f
			done.Add(1)
			return err
		})
		return err
	}, sender)
	return to, time.Since(start), err
}

// syncPart writes the versions naming refs[from:to], 64 a version, and
// waits until the receiver holds every one of those files: the time
// that took, and the CPU time each node (sender, receiver) used in it.
func (r caseRun) syncPart(ctx context.Context, sender, receiver *filesNode, sp string, refs []node.FileRef, from, to int) (cpu [2]time.Duration, took time.Duration, err error) {
	for i, n := range []*filesNode{sender, receiver} {
		if cpu[i], err = childCPU(n.cmd.Process.Pid); err != nil {
			return cpu, 0, err
		}
	}
	start := time.Now()
	const perVersion = 64
	versions := (to - from + perVersion - 1) / perVersion
	if err := r.step("the writes naming the files", versions, func(done *atomic.Int64) error {
		return parallel(4, versions, func(v int) error {
			names := refs[from+v*perVersion : min(to, from+(v+1)*perVersion)]
			_, err := sender.client.Do(ctx, "POST", "/v1/spaces/"+sp+"/records", map[string]any{"collection": "app.files", "body": map[string]any{"n": from/perVersion + v, "from": from}, "files": names})
			done.Add(1)
			return err
		})
	}, sender, receiver); err != nil {
		return cpu, 0, err
	}
	if err := r.step("sync", to-from, func(done *atomic.Int64) error {
		return parallel(4, to-from, func(i int) error {
			err := receiver.waitFile(ctx, sp, refs[from+i].Hash.String())
			done.Add(1)
			return err
		})
	}, sender, receiver); err != nil {
		return cpu, 0, err
	}
	took = time.Since(start)
	for i, n := range []*filesNode{sender, receiver} {
		used, err := childCPU(n.cmd.Process.Pid)
		if err != nil {
			return cpu, 0, err
		}
		cpu[i] = used - cpu[i]
	}
	return cpu, took, nil
}

// parallelUntil runs f(from…n-1) on w goroutines, none starting a new
// one past until (a zero until is none) but f(from), which always runs;
// the first error stops it. to is where it stopped: f ran for every i in
// [from, to).
func parallelUntil(w, from, n int, until time.Time, f func(i int) error) (to int, err error) {
	var mu sync.Mutex
	next := from
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				stop := err != nil || i >= n || (i > from && !until.IsZero() && !time.Now().Before(until))
				if !stop {
					next++
				}
				mu.Unlock()
				if stop {
					return
				}
				if ferr := f(i); ferr != nil {
					mu.Lock()
					err = cmpErr(err, ferr)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return next, err
}

// parallel runs f(0…n-1) on w goroutines; the first error stops it.
func parallel(w, n int, f func(i int) error) error {
	_, err := parallelUntil(w, 0, n, time.Time{}, f)
	return err
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
