package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionModules are the dependencies whose versions decide how stores are
// read and written: printed by --version so a bug report names them.
func versionModules() []string {
	return []string{
		"github.com/cockroachdb/pebble/v2",
		"modernc.org/sqlite",
		"github.com/aws/aws-sdk-go-v2",
		"github.com/aws/aws-sdk-go-v2/service/s3",
		"github.com/klauspost/compress",
	}
}

// printVersion prints minca's version (the module's, and the commit it was
// built from when the build recorded it), the Go version and the versions
// of versionModules, from the binary's build information.
func printVersion(w io.Writer) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(w, "minca (unknown version) %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	fmt.Fprintln(w, versionLine(bi))
	deps := map[string]string{}
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version + " (replaces " + d.Version + ")"
		}
		deps[d.Path] = v
	}
	for _, m := range versionModules() {
		if v, ok := deps[m]; ok {
			fmt.Fprintf(w, "%s %s\n", m, v)
		}
	}
}

// versionLine is the first line of --version: "minca VERSION [(revision
// R[, modified])] GO OS/ARCH".
func versionLine(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "minca %s", v)
	if rev != "" {
		fmt.Fprintf(&b, " (revision %s", rev)
		if modified == "true" {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s %s/%s", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
