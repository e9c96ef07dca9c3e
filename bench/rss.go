package bench

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// rssSample is a child process's resident memory at one moment, from
// /proc/PID/status (Linux): all of it, and its anonymous (heaps) and
// file-backed (the binary's mapped code) parts, in KiB; and its OS
// threads (each with stacks of its own in the anonymous part).
type rssSample struct {
	at               time.Duration
	rss, anon, files int64
	threads          int64
}

// sampleRSS reads pid's resident memory every interval until stop is
// closed, and returns the samples; none where /proc is not there.
func sampleRSS(pid int, interval time.Duration, stop <-chan struct{}) []rssSample {
	path := fmt.Sprintf("/proc/%d/status", pid)
	start := time.Now()
	var out []rssSample
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if s, ok := readRSS(path); ok {
			s.at = time.Since(start)
			out = append(out, s)
		}
		select {
		case <-stop:
			return out
		case <-t.C:
		}
	}
}

func readRSS(path string) (rssSample, bool) {
	v, err := procStatus(path, "VmRSS", "RssAnon", "RssFile", "Threads")
	if err != nil {
		return rssSample{}, false
	}
	return rssSample{rss: v[0], anon: v[1], files: v[2], threads: v[3]}, true
}

// procStatus reads the named fields, in KiB (Threads: a count), of a /proc/PID/status file
// (Linux); an error when the file or any field is missing.
func procStatus(path string, names ...string) ([]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, found := make([]int64, len(names)), 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		i := slices.Index(names, string(name))
		f := bytes.Fields(rest)
		if i < 0 || len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
			out[i] = n
			found++
		}
	}
	if found != len(names) {
		return nil, fmt.Errorf("bench: %s lacks one of %v", path, names)
	}
	return out, nil
}

// rssQuarters is the largest resident memory in each quarter of the
// samples' time span, in MiB: flat in the input's size, the four are
// alike (a store that grows grows nothing in memory).
func rssQuarters(samples []rssSample) [4]float64 {
	var q [4]float64
	if len(samples) == 0 {
		return q
	}
	end := samples[len(samples)-1].at
	for _, s := range samples {
		i := 3
		if end > 0 {
			i = min(3, int(4*s.at/(end+1)))
		}
		q[i] = max(q[i], float64(s.rss)/1024)
	}
	return q
}

// rssPeakParts is the anonymous and file-backed parts, in MiB, of the
// sample with the largest resident memory.
func rssPeakParts(samples []rssSample) (anon, files float64) {
	var peak rssSample
	for _, s := range samples {
		if s.rss > peak.rss {
			peak = s
		}
	}
	return float64(peak.anon) / 1024, float64(peak.files) / 1024
}

// childCPU is the CPU time, user and system, process pid has used, from
// /proc/PID/stat (Linux; in the kernel's ticks, 100 a second); an error
// where it can't be read.
func childCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields past the command's name, which ends with the last ')':
	// state is the first of them, utime and stime the 12th and 13th.
	i := bytes.LastIndexByte(b, ')')
	f := bytes.Fields(b[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc/%d/stat: %q", pid, b)
	}
	var ticks int64
	for _, x := range f[11:13] {
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / 100), nil
}

// mostThreads is the most OS threads of the samples.
func mostThreads(samples []rssSample) int64 {
	var n int64
	for _, s := range samples {
		n = max(n, s.threads)
	}
	return n
}
