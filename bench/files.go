package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/node"
)

// FilesConfig configures [RunFiles].
type FilesConfig struct {
	// Minca is the minca binary the nodes run as (child processes).
	Minca string
	// Dir is where the nodes and files go; default a temporary directory.
	Dir string
	// Bytes is how many bytes of files each case moves. Default 1 GiB.
	Bytes int64
	// Sizes are the file sizes, one case each. Default 4 KiB, 1 MiB,
	// 256 MiB.
	Sizes []int64
	// Rounds is how many rounds of each measure; medians. Default 3.
	Rounds int
	// ImportVersions is how many versions `minca store import` takes in
	// for its bytes a second. Default 20,000.
	ImportVersions int
	// Progress, if set, is told as each step starts.
	Progress Progress
	// Log, if set, is told of a step that has made no progress for
	// StallAfter (default a minute), with the end of each node's stderr.
	// The nodes' stderr is kept in DIR/logs whatever happens (with Dir
	// empty, the temporary directory is removed but for its logs when
	// the run fails), and a failure's error names it and shows its end.
	Log        io.Writer
	StallAfter time.Duration
	// NameWithin bounds how long the upload runs before the writes
	// naming what it uploaded: a node keeps a file no version names
	// only for its file grace (docs/stores.md, Files), so a client
	// uploading for longer uploads a part, names it, and goes on. The
	// upload and the sync then alternate, each timed on its own.
	// Default a quarter of node.DefaultFileGrace, leaving the writes the
	// rest.
	NameWithin time.Duration
	// TidyFilesEvery, if set, is each node's `--tidy-files-every`: how
	// often it deletes the files no version names past the grace, so a
	// run can cross the tidy sooner than the default hour.
	TidyFilesEvery time.Duration
}

// FilesResult is what [RunFiles] measured, medians of the rounds; rates
// in MB/s (10^6 bytes a second).
type FilesResult struct {
	Bytes  int64 `json:"bytes"`
	Rounds int   `json:"rounds"`
	// The bounds, measured in the same run: Bytes over one loopback TCP
	// connection; a bare copy of a file of Bytes, synced; `minca store
	// import` of versions, in bytes of JSON lines a second.
	LoopbackTCP MBps `json:"loopbackTcpMBps"`
	// LoopbackTCPCPU is the CPU time both ends of that connection used,
	// in seconds a GB (10^9 bytes): what the bound costs the 2 cores.
	LoopbackTCPCPU float64 `json:"loopbackTcpCpuSecPerGB"`
	// LoopbackTCPHashed is the same connection with the receiving end
	// hashing each byte (SHA-256) as it reads it: the least a receiver
	// that checks a file before keeping it does, with no disk. A second
	// column; the goal is against LoopbackTCP.
	LoopbackTCPHashed MBps `json:"loopbackTcpHashedMBps"`
	// Hash is SHA-256 of Bytes held in memory, on one goroutine: what
	// one core hashes with no I/O at all. A file's content id is one
	// SHA-256 over the whole file (02 §2) which the receiver checks
	// before keeping it, so one file's sync can go no faster than this,
	// whatever the network: the ceiling of the sync's rate on this
	// machine in this run.
	Hash MBps `json:"hashMBps"`
	// HashCPU is the CPU time the hash used, in seconds a GB.
	HashCPU float64 `json:"hashCpuSecPerGB"`
	// HashCores is the same bytes hashed as files side by side are: in
	// GOMAXPROCS parts, each on a goroutine of its own. Several large
	// files are fetched and hashed at once (docs/sync.md §7.7: up to 8
	// a connection), so this, not Hash, is the ceiling when they are.
	HashCores   MBps `json:"hashAllCoresMBps"`
	FileCopy    MBps `json:"fileCopyMBps"`
	StoreImport MBps `json:"storeImportMBps"`
	// Cases, one per file size.
	Cases []FilesCase `json:"cases"`
}

// MBps is a rate in MB a second.
type MBps = float64

// FilesCase is one file size: Bytes in Files files, uploaded to a node
// through its API, synced to a second node process over loopback
// WebSocket, and read back from it through its API.
type FilesCase struct {
	Size  int64 `json:"size"`
	Files int   `json:"files"`
	// Parts is how many times the upload stopped for the writes naming
	// what it had uploaded, and the sync of those files
	// (FilesConfig.NameWithin): 1 when the upload took less.
	Parts int `json:"parts"`
	// Upload: POST …/files for every file (the parts' uploads together).
	UploadMBps MBps `json:"uploadMBps"`
	// Sync: from the first write naming a part's files, the second node
	// running with a session open, until it holds every one of them;
	// the parts' syncs together.
	SyncMBps MBps `json:"syncMBps"`
	// Read: GET …/files/{hash} of every file from the second node.
	ReadMBps MBps `json:"readMBps"`
	// Ratios against the bounds: sync against loopback TCP (goal for
	// large files ≥ 0.5), upload and read against the bare file copy.
	SyncOverTCP       float64 `json:"syncOverTcp"`
	SyncOverHashedTCP float64 `json:"syncOverHashedTcp"`    // against loopback TCP hashed at the receiving end
	SyncOverHash      float64 `json:"syncOverHash"`         // against SHA-256 in memory on one core: the ceiling
	SyncOverHashCores float64 `json:"syncOverHashAllCores"` // against SHA-256 in memory on every core: the ceiling of files side by side
	SyncOverCopy      float64 `json:"syncOverCopy"`         // the receiver writes every byte: the disk bounds it too
	UploadOverCopy    float64 `json:"uploadOverCopy"`
	ReadOverCopy      float64 `json:"readOverCopy"`
	UploadOverImport  float64 `json:"uploadOverImport"`
	// CPU time, user and system, each node used during the sync, in
	// seconds a GB (10^9 bytes), and both together over loopback TCP's:
	// what the sync costs per byte, which a loaded machine changes far
	// less than its rate.
	SenderSyncCPU   float64 `json:"senderSyncCpuSecPerGB"`
	ReceiverSyncCPU float64 `json:"receiverSyncCpuSecPerGB"`
	SyncCPUOverTCP  float64 `json:"syncCpuOverTcp"`
	// SyncCPUBoundMBps is the rate the sync's CPU time a byte allows the
	// machine's cores (GOMAXPROCS) were they free for it alone: what no
	// scheduling of the same work can pass here.
	SyncCPUBoundMBps MBps `json:"syncCpuBoundMBps"`
	// Peak RSS of each node process (VmHWM), MiB: flat in the file size.
	SenderPeakMiB   float64 `json:"senderPeakRssMiB"`
	ReceiverPeakMiB float64 `json:"receiverPeakRssMiB"`
	// Each node sampled every 200 ms from the receiver's start to the
	// end of the read: the anonymous (heaps, stacks, Pebble's C memory)
	// and file-backed (the binary's pages) parts of its largest sample,
	// MiB, and the most OS threads it ran (each blocked system call holds
	// one).
	SenderPeakAnonMiB   float64 `json:"senderPeakAnonMiB"`
	SenderPeakFileMiB   float64 `json:"senderPeakFileMiB"`
	SenderThreads       int64   `json:"senderThreads"`
	ReceiverPeakAnonMiB float64 `json:"receiverPeakAnonMiB"`
	ReceiverPeakFileMiB float64 `json:"receiverPeakFileMiB"`
	ReceiverThreads     int64   `json:"receiverThreads"`
}

func (c *FilesConfig) fill() {
	if c.Bytes <= 0 {
		c.Bytes = 1 << 30
	}
	if len(c.Sizes) == 0 {
		c.Sizes = []int64{4 << 10, 1 << 20, 256 << 20}
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.ImportVersions <= 0 {
		c.ImportVersions = 20_000
	}
	if c.StallAfter <= 0 {
		c.StallAfter = time.Minute
	}
	if c.NameWithin <= 0 {
		c.NameWithin = node.DefaultFileGrace / 4
	}
}

// RunFiles measures files end to end between two node processes (docs/sync.md
// §7.7), against loopback TCP, a bare file copy and `minca store import`.
func RunFiles(ctx context.Context, cfg FilesConfig) (res FilesResult, err error) {
	cfg.fill()
	res = FilesResult{Bytes: cfg.Bytes, Rounds: cfg.Rounds}
	dir := cfg.Dir
	if dir == "" {
		d, merr := os.MkdirTemp("", "minca-bench-files-")
		if merr != nil {
			return res, merr
		}
		// err is the run's result: its logs stay when it failed.
		defer func() { removeButLogs(d, err != nil) }()
		dir = d
	}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return res, err
	}
	steps := newSteps(cfg.Progress, 1+cfg.Rounds*(3+len(cfg.Sizes)))
	steps.next("the source file and a corpus")
	src := filepath.Join(dir, "source")
	if err := writeRandom(src, cfg.Bytes); err != nil {
		return res, err
	}
	corpus := filepath.Join(dir, "corpus.jsonl")
	corpusN := cfg.ImportVersions
	if err := WriteCorpus(ctx, corpus, CorpusConfig{Versions: corpusN}); err != nil {
		return res, err
	}
	ci, err := os.Stat(corpus)
	if err != nil {
		return res, err
	}
	var tcp, tcpCPU, tcpHashed, hashed, hashCPU, hashedCores, cp, imp []float64
	per := make([][]FilesCase, len(cfg.Sizes))
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d: loopback TCP", r+1))
		cpu0 := cputime.Process()
		v, err := loopbackTCP(cfg.Bytes, false)
		if err != nil {
			return res, err
		}
		tcp = append(tcp, v)
		tcpCPU = append(tcpCPU, (cputime.Process()-cpu0).Seconds()/(float64(cfg.Bytes)/1e9))
		if v, err = loopbackTCP(cfg.Bytes, true); err != nil {
			return res, err
		}
		tcpHashed = append(tcpHashed, v)
		cpu0 = cputime.Process()
		if v, err = hashInMemory(src, cfg.Bytes, 1); err != nil {
			return res, err
		}
		hashed = append(hashed, v)
		hashCPU = append(hashCPU, (cputime.Process()-cpu0).Seconds()/(float64(cfg.Bytes)/1e9))
		if v, err = hashInMemory(src, cfg.Bytes, runtime.GOMAXPROCS(0)); err != nil {
			return res, err
		}
		hashedCores = append(hashedCores, v)
		steps.next(fmt.Sprintf("round %d: file copy", r+1))
		if v, err = copyFile(src, filepath.Join(dir, "copy")); err != nil {
			return res, err
		}
		cp = append(cp, v)
		steps.next(fmt.Sprintf("round %d: store import", r+1))
		m, err := importChild(ctx, cfg.Minca, "pebble", filepath.Join(dir, "import"), corpus, corpusN)
		if err != nil {
			return res, err
		}
		imp = append(imp, float64(ci.Size())/m.Seconds/1e6)
		for i, size := range cfg.Sizes {
			steps.next(fmt.Sprintf("round %d: files of %d bytes", r+1, size))
			c, err := filesCase(ctx, caseRun{minca: cfg.Minca, dir: filepath.Join(dir, "nodes"), src: src, total: cfg.Bytes,
				stderr: filepath.Join(logs, fmt.Sprintf("round%d-%d", r+1, size)), log: cfg.Log, stallAfter: cfg.StallAfter,
				nameWithin: cfg.NameWithin, nodeArgs: nodeArgs(cfg)}, size)
			if err != nil {
				return res, err
			}
			per[i] = append(per[i], c)
		}
	}
	res.LoopbackTCP, res.FileCopy, res.StoreImport = median(tcp), median(cp), median(imp)
	res.LoopbackTCPCPU, res.LoopbackTCPHashed = median(tcpCPU), median(tcpHashed)
	res.Hash, res.HashCPU, res.HashCores = median(hashed), median(hashCPU), median(hashedCores)
	for i, cs := range per {
		pick := func(f func(FilesCase) float64) float64 {
			var xs []float64
			for _, c := range cs {
				xs = append(xs, f(c))
			}
			return median(xs)
		}
		c := FilesCase{Size: cfg.Sizes[i], Files: cs[0].Files,
			Parts:               int(pick(func(c FilesCase) float64 { return float64(c.Parts) })),
			UploadMBps:          pick(func(c FilesCase) float64 { return c.UploadMBps }),
			SyncMBps:            pick(func(c FilesCase) float64 { return c.SyncMBps }),
			ReadMBps:            pick(func(c FilesCase) float64 { return c.ReadMBps }),
			SenderSyncCPU:       pick(func(c FilesCase) float64 { return c.SenderSyncCPU }),
			ReceiverSyncCPU:     pick(func(c FilesCase) float64 { return c.ReceiverSyncCPU }),
			SenderPeakMiB:       pick(func(c FilesCase) float64 { return c.SenderPeakMiB }),
			ReceiverPeakMiB:     pick(func(c FilesCase) float64 { return c.ReceiverPeakMiB }),
			SenderPeakAnonMiB:   pick(func(c FilesCase) float64 { return c.SenderPeakAnonMiB }),
			SenderPeakFileMiB:   pick(func(c FilesCase) float64 { return c.SenderPeakFileMiB }),
			SenderThreads:       int64(pick(func(c FilesCase) float64 { return float64(c.SenderThreads) })),
			ReceiverPeakAnonMiB: pick(func(c FilesCase) float64 { return c.ReceiverPeakAnonMiB }),
			ReceiverPeakFileMiB: pick(func(c FilesCase) float64 { return c.ReceiverPeakFileMiB }),
			ReceiverThreads:     int64(pick(func(c FilesCase) float64 { return float64(c.ReceiverThreads) }))}
		c.SyncOverTCP = c.SyncMBps / res.LoopbackTCP
		c.SyncOverHashedTCP = c.SyncMBps / res.LoopbackTCPHashed
		c.SyncOverHash = c.SyncMBps / res.Hash
		c.SyncOverHashCores = c.SyncMBps / res.HashCores
		if cpu := c.SenderSyncCPU + c.ReceiverSyncCPU; cpu > 0 {
			c.SyncCPUBoundMBps = float64(runtime.GOMAXPROCS(0)) / cpu * 1e3
		}
		if res.LoopbackTCPCPU > 0 {
			c.SyncCPUOverTCP = (c.SenderSyncCPU + c.ReceiverSyncCPU) / res.LoopbackTCPCPU
		}
		c.SyncOverCopy = c.SyncMBps / res.FileCopy
		c.UploadOverCopy = c.UploadMBps / res.FileCopy
		c.ReadOverCopy = c.ReadMBps / res.FileCopy
		c.UploadOverImport = c.UploadMBps / res.StoreImport
		res.Cases = append(res.Cases, c)
	}
	return res, nil
}

// removeButLogs removes the temporary directory dir, or when keepLogs
// all of it but its logs (the nodes' stderr, which a failure named).
func removeButLogs(dir string, keepLogs bool) {
	if !keepLogs {
		os.RemoveAll(dir)
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "logs" {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// writeRandom writes n random bytes to path.
func writeRandom(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	r := rand.NewChaCha8([32]byte{26})
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := io.CopyN(w, r, n); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// loopbackTCP sends n bytes over one loopback TCP connection, both ends
// writing and reading 1 MiB at a time, the receiving end hashing them
// when hash: MB/s.
func loopbackTCP(n int64, hash bool) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	got := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		// Read 1 MiB at a time, as written. (io.CopyBuffer into
		// io.Discard would read 8 KiB at a time: io.Discard reads from
		// the connection with a buffer of its own.)
		buf := make([]byte, 1<<20)
		h := sha256.New()
		var k int64
		for {
			m, rerr := c.Read(buf)
			if hash {
				h.Write(buf[:m])
			}
			k += int64(m)
			if rerr != nil {
				if !errors.Is(rerr, io.EOF) {
					err = rerr
				}
				break
			}
		}
		if err == nil && k != n {
			err = fmt.Errorf("bench: %d of %d bytes over loopback", k, n)
		}
		got <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	start := time.Now()
	for left := n; left > 0; left -= int64(len(buf)) {
		if _, err := c.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			c.Close()
			return 0, err
		}
	}
	c.Close()
	if err := <-got; err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds() / 1e6, nil
}

// hashInMemory hashes n bytes with SHA-256 from a buffer in memory, the
// first MiBs of src hashed over and over (SHA-256 takes as long whatever
// the bytes), in parts parts, each on a goroutine of its own, as files
// fetched side by side are (one part: one file's check): MB/s of all.
func hashInMemory(src string, n int64, parts int) (float64, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(n, 4<<20))
	_, err = io.ReadFull(f, buf)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("bench: the bytes to hash: %w", err)
	}
	var wg sync.WaitGroup
	start := time.Now()
	for p := range parts {
		share := n / int64(parts)
		if p == parts-1 {
			share = n - share*int64(parts-1)
		}
		wg.Go(func() {
			h := sha256.New()
			for left := share; left > 0; left -= int64(len(buf)) {
				h.Write(buf[:min(left, int64(len(buf)))])
			}
			h.Sum(nil)
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds() / 1e6, nil
}

// copyFile copies src to dst and syncs it: MB/s.
func copyFile(src, dst string) (float64, error) {
	defer os.Remove(dst)
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyBuffer(out, in, make([]byte, 1<<20))
	if err = errors.Join(err, out.Sync(), out.Close()); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds() / 1e6, nil
}

// runMinca runs a minca verb and returns what it printed.
func runMinca(ctx context.Context, minca string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, minca, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("bench: minca %s: %w: %s", args[0], err, lastLine(stderr.Bytes()))
	}
	return string(out), nil
}

func jsonString(out, name string) string {
	var m map[string]any
	json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &m)
	s, _ := m[name].(string)
	return s
}

// peakRSSMiB is a process's peak resident set (VmHWM), in MiB.
func peakRSSMiB(pid int) (float64, error) {
	v, err := procStatus(fmt.Sprintf("/proc/%d/status", pid), "VmHWM")
	if err != nil {
		return 0, fmt.Errorf("bench: peak RSS: %w", err)
	}
	return float64(v[0]) / 1024, nil
}
