package localtest

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/minca-go/minca/record"
)

// envOtherUser carries, to a test binary run as another user, the store it
// is to read.
const envOtherUser = "MINCA_LOCALTEST_READ"

// OtherUserDir returns a new directory that user nobody can enter and read
// but not write, and the test binary copied where nobody can run it; ok is
// false unless this process is root (only root can run a process as
// another user; others write-protect a directory instead).
func OtherUserDir(t *testing.T) (dir, bin string, ok bool) {
	t.Helper()
	if os.Getuid() != 0 {
		return "", "", false
	}
	top, err := os.MkdirTemp("", "localtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(top, "test.bin")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(top, "store"), bin, true
}

// ReadAsOtherUser runs bin's test named test as user nobody, with the
// store path in the environment, and returns its output; the test, seeing
// OtherUserStore, reads the store and prints the Summary of what it read.
func ReadAsOtherUser(t *testing.T, bin, test, store string) string {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envOtherUser+"="+store)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test as user nobody: %v\n%s", err, out)
	}
	return string(out)
}

// OtherUserStore is the store a test run by ReadAsOtherUser is to read,
// or "" in a test run as usual.
func OtherUserStore() string { return os.Getenv(envOtherUser) }

// Summary is one line naming a set of versions, to compare the versions a
// process read with those written.
func Summary(ids []string) string {
	ids = slices.Sorted(slices.Values(ids))
	return fmt.Sprintf("versions %d %x", len(ids), sha256.Sum256([]byte(strings.Join(ids, " "))))
}

// IDs are the versions' ids.
func IDs(vs []*record.Version) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return ids
}
