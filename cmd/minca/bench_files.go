package main

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/minca-go/minca/bench"
	"github.com/minca-go/minca/node"
)

func runBenchFiles(ctx context.Context, s *stdio, args []string) error {
	fs := newFlags(s, "bench files", "bench files [--bytes N] [--sizes 4096,1048576,268435456] [--rounds R] [--import-versions N] [--dir DIR] [--minca PATH]\n      [--name-within DURATION] [--tidy-files-every DURATION]\n\nMeasures files end to end (docs/sync.md §7.7) between two `minca serve`\nchild processes: N bytes in files of each size uploaded to one through its\nAPI, synced to the other over loopback WebSocket, and read back from it;\nagainst loopback TCP (and the same hashed at the receiving end), SHA-256\nof as many bytes in memory on one core (a file's content id, which the\nreceiver checks: the sync's ceiling), a bare file copy and `minca store\nimport`, measured in the same run, and each node's peak RSS and CPU time during the sync (seconds a GB, against the\nCPU time of loopback TCP). Prints medians as JSON.\nEach node's stderr is kept in DIR/logs; a failure names it and shows its\nend, and a step with no progress for a minute shows it on stderr.\nThe upload stops for the writes naming what it uploaded (and their\nsync) every --name-within, as a client must name a file within the\nnode's 10-minute file grace (docs/api.md, Files).")
	total := fs.Int64("bytes", 1<<30, "`N` bytes of files in each case")
	sizes := fs.String("sizes", "4096,1048576,268435456", "file `SIZES` in bytes, comma-separated, one case each")
	rounds := fs.Int("rounds", 3, "`N` rounds to take the median of")
	imports := fs.Int("import-versions", 20_000, "`N` versions `store import` takes in for its bytes a second")
	dir := fs.String("dir", "", "`DIR` where the nodes and files go (default a temporary directory)")
	minca := fs.String("minca", "", "the minca binary `PATH` the nodes run (default this one)")
	nameWithin := fs.Duration("name-within", node.DefaultFileGrace/4, "upload at most this `DURATION` before writing the versions naming what was uploaded")
	tidyEvery := fs.Duration("tidy-files-every", 0, "each node's serve --tidy-files-every `DURATION` (default the node's, 1h)")
	if done, err := parseFlags(fs, args); done {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("bench files takes no arguments")
	}
	if *nameWithin <= 0 || *nameWithin >= node.DefaultFileGrace {
		return usageError("--name-within: %v is not between 0 and the file grace, %v", *nameWithin, node.DefaultFileGrace)
	}
	if *tidyEvery < 0 {
		return usageError("--tidy-files-every: %v is negative", *tidyEvery)
	}
	var ss []int64
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n <= 0 || n > *total {
			return usageError("--sizes: %q is not a size of 1 to --bytes (%d) bytes", f, *total)
		}
		ss = append(ss, n)
	}
	self := *minca
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return failed(err)
		}
	}
	p, done := benchProgress(s, "bench files")
	r, err := bench.RunFiles(ctx, bench.FilesConfig{Minca: self, Dir: *dir, Bytes: *total, Sizes: ss, Rounds: *rounds, ImportVersions: *imports, Progress: p, Log: s.err,
		NameWithin: *nameWithin, TidyFilesEvery: *tidyEvery})
	done()
	if err != nil {
		return failed(err)
	}
	return writeJSON(s, r)
}
