// Package lockholder records, in a lock file, which process holds it, so
// that one who finds the lock taken can say who has it ("in use by process
// 1234 (minca serve)") and what to do, rather than only that it is taken.
//
// The record is a hint for messages, never a lock itself: the lock is the
// flock on the file; a record left by a process that has ended is ignored.
package lockholder

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Holder is the process that holds a lock file. As an error it says
// "held by" it, the cause of a lock found taken.
type Holder struct {
	PID     int
	Command string // "minca serve": the program's name and its verb
}

// String is "process 1234 (minca serve)".
func (h Holder) String() string {
	if h.Command == "" {
		return fmt.Sprintf("process %d", h.PID)
	}
	return fmt.Sprintf("process %d (%s)", h.PID, h.Command)
}

func (h Holder) Error() string { return "held by " + h.String() }

// Record writes this process into the lock file at path, which it holds.
func Record(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d %s\n", os.Getpid(), command())
	return errorsJoin(err, f.Close())
}

// Of reads the holder a lock file at path records; ok is false when it
// records none, or one that no longer runs.
func Of(path string) (h Holder, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 512 {
		return h, false
	}
	pid, cmd, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	h.PID, err = strconv.Atoi(pid)
	if err != nil || h.PID <= 0 || h.PID == os.Getpid() || !running(h.PID) {
		return Holder{}, false
	}
	h.Command = strings.TrimSpace(cmd)
	return h, true
}

// command is this process's program name and its verb: "minca serve".
func command() string {
	if len(os.Args) == 0 {
		return ""
	}
	c := filepath.Base(os.Args[0])
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		c += " " + os.Args[1]
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, c)
}

// running reports whether a process with that id runs (signal 0 checks
// without sending).
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || err == syscall.EPERM
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Clear empties the record at path, before its holder lets the lock go.
func Clear(path string) error {
	return os.Truncate(path, 0)
}
