package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bench files runs two `minca serve` children of itself, moves files
// between them, and reports every rate, the bounds measured in the same
// run and each node's peak RSS.
func TestBenchFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs node processes")
	}
	path, env := mincaCommand(t)
	// --name-within 1ns: the upload stops for the writes after each
	// file, so every file is a part of its own; the nodes tidy their
	// files every second, and every file is still read back whole.
	cmd := exec.Command(path, "bench", "files", "--bytes", "1048576", "--sizes", "524288,1048576", "--rounds", "1", "--import-versions", "300", "--dir", filepath.Join(t.TempDir(), "bench"),
		"--name-within", "1ns", "--tidy-files-every", "1s")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench files: %v\n%s", err, out)
	}
	var r struct {
		LoopbackTCP float64 `json:"loopbackTcpMBps"`
		FileCopy    float64 `json:"fileCopyMBps"`
		StoreImport float64 `json:"storeImportMBps"`
		TCPCPU      float64 `json:"loopbackTcpCpuSecPerGB"`
		TCPHashed   float64 `json:"loopbackTcpHashedMBps"`
		Hash        float64 `json:"hashMBps"`
		HashCPU     float64 `json:"hashCpuSecPerGB"`
		HashCores   float64 `json:"hashAllCoresMBps"`
		Cases       []struct {
			Size                  int64
			Files                 int
			Parts                 int
			UploadMBps, SyncMBps  float64
			ReadMBps, SyncOverTcp float64
			SyncOverHashedTcp     float64
			SyncOverHash          float64
			SyncOverHashAllCores  float64
			SyncCPUBound          float64 `json:"syncCpuBoundMBps"`
			SenderPeakRssMiB      float64
			ReceiverPeakRssMiB    float64
			// CPU time in ticks of 10 ms: a node may use less than one
			// moving a MiB.
			SenderSyncCPU   *float64 `json:"senderSyncCpuSecPerGB"`
			ReceiverSyncCPU *float64 `json:"receiverSyncCpuSecPerGB"`
		}
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench files: %v\n%s", err, out)
	}
	if r.LoopbackTCP <= 0 || r.TCPCPU <= 0 || r.TCPHashed <= 0 || r.Hash <= 0 || r.HashCPU < 0 || r.HashCores <= 0 || r.FileCopy <= 0 || r.StoreImport <= 0 || len(r.Cases) != 2 {
		t.Fatalf("bench files: %s", out)
	}
	for _, c := range r.Cases {
		if c.Parts != c.Files {
			t.Errorf("bench files case of %d bytes: %d parts of %d files, want a part a file", c.Size, c.Parts, c.Files)
		}
		if c.Files*int(c.Size) != 1<<20 || c.UploadMBps <= 0 || c.SyncMBps <= 0 || c.ReadMBps <= 0 || c.SyncOverTcp <= 0 || c.SyncOverHashedTcp <= 0 || c.SyncOverHash <= 0 || c.SyncOverHashAllCores <= 0 || c.SyncCPUBound < 0 || c.SenderPeakRssMiB <= 0 || c.ReceiverPeakRssMiB <= 0 ||
			c.SenderSyncCPU == nil || *c.SenderSyncCPU < 0 || c.ReceiverSyncCPU == nil || *c.ReceiverSyncCPU < 0 {
			t.Fatalf("bench files case: %+v", c)
		}
	}
}

// A node that dies during bench files: the error names its stderr file,
// says it exited, and shows the end of what it wrote there.
func TestBenchFilesShowsADeadNodesStderr(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs node processes")
	}
	self, _ := mincaCommand(t)
	dir := t.TempDir()
	// The receiver says where it listens, writes to stderr and exits;
	// every other verb is this build's.
	const marker = "the receiver gives up: marker 26"
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = serve ]; then case \"$*\" in *receiver*)\n" +
		"  echo '{\"url\":\"http://127.0.0.1:1\"}'; echo 'a line before' >&2; echo '" + marker + "' >&2; exit 3;; esac; fi\n" +
		runAsMinca + "=1 exec '" + self + "' \"$@\"\n"
	wrapper := filepath.Join(dir, "minca")
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "bench")
	path, env := mincaCommand(t)
	cmd := exec.Command(path, "bench", "files", "--minca", wrapper, "--bytes", "65536", "--sizes", "65536", "--rounds", "1", "--import-versions", "100", "--dir", work)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		t.Fatalf("bench files with a receiver that dies succeeded: %s", out)
	}
	log := filepath.Join(work, "logs", "round1-65536-receiver.stderr")
	for _, want := range []string{marker, "a line before", log, "the receiver node, exited (exit status 3)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	kept, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(kept), marker) {
		t.Errorf("the receiver's stderr file: %q %v", kept, err)
	}
}
