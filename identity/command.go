package identity

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Commands our profile names (01 §8; 02 §7, §9.3; 06 §1.2, §2.5).
const (
	CmdTop              = "/"                  // everything the account may do (06 §1.2)
	CmdRecord           = "/record"            // write and delete records, and read them (06 §2.5 recordsOnly)
	CmdRecordWrite      = "/record/write"      // what a version invokes (02 §9.3)
	CmdRecordDelete     = "/record/delete"     // what a delete invokes (02 §7)
	CmdRecordRead       = "/record/read"       // reading only (06 §2.5, access: read)
	CmdAccountWrite     = "/account/write"     // the account's own spaces (06 §1.3)
	CmdCollectionDefine = "/collection/define" // definitions (02 §6.3)
)

// CheckCommand reports whether cmd is a command path as UCAN 1.0 writes
// one: "/", or "/" followed by non-empty segments separated by "/", with no
// trailing slash, in lowercase, in valid UTF-8.
func CheckCommand(cmd string) error {
	switch {
	case cmd == CmdTop:
		return nil
	case !strings.HasPrefix(cmd, "/"):
		return errors.New("a command starts with \"/\"")
	case strings.HasSuffix(cmd, "/"):
		return errors.New("a command other than \"/\" has no trailing slash")
	case strings.Contains(cmd, "//"):
		return errors.New("a command has no empty segment")
	case !utf8.ValidString(cmd):
		return errors.New("a command is valid UTF-8")
	case strings.ToLower(cmd) != cmd:
		return errors.New("a command is lowercase")
	}
	return nil
}

// Covers reports whether a note granting granted covers wanted: a command
// covers itself and every command below it, by whole segments. "/" covers
// everything; "/record" covers "/record/write" but "/rec" covers nothing of
// "/record"; "/record/read" does not cover "/record/write" (UCAN 1.0,
// Command; 01 §8 in our profile). Both are taken as valid commands.
func Covers(granted, wanted string) bool {
	if granted == CmdTop || granted == wanted {
		return true
	}
	return len(wanted) > len(granted) && wanted[len(granted)] == '/' && strings.HasPrefix(wanted, granted)
}
