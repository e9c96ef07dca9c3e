package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flags is a verb's flag set, with what --help prints.
type flags struct {
	*flag.FlagSet
	s     *stdio
	name  string
	usage string
}

// newFlags makes a verb's flag set. usage is the verb's synopsis (after
// "minca ") and, after a blank line, what it does. Every verb takes the
// global --log-format too.
func newFlags(s *stdio, name, usage string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	f := &flags{FlagSet: fs, s: s, name: name, usage: usage}
	fs.Usage = func() { f.printHelp(s.err) }
	fs.Func("log-format", "logs on stderr as `FORMAT` text or json (default $MINCA_LOG_FORMAT, else text)", s.setLogFormat)
	return f
}

// printHelp writes the verb's usage and its flags, each as --name.
func (f *flags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: minca %s\n", f.usage)
	fmt.Fprintln(w, "\nflags (they may follow arguments; -- ends them):")
	f.VisitAll(func(fl *flag.Flag) {
		name, help := flag.UnquoteUsage(fl)
		head := "  --" + fl.Name
		if name != "" {
			head += " " + name
		}
		if len(head) <= 22 {
			fmt.Fprintf(w, "%-24s%s", head, help)
		} else {
			fmt.Fprintf(w, "%s\n%24s%s", head, "", help)
		}
		if d := fl.DefValue; d != "" && d != "0" && d != "false" && !strings.Contains(help, "(default") {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// parseFlags parses a verb's arguments. Flags may come before or after
// the arguments (`store import v.jsonl --store db`); "--" ends the flags,
// and "-" alone is an argument (stdin). After it, fs.Args() are the
// arguments in order. done is true when the verb should return err at
// once: --help (printed on stdout, nil) or a bad flag (exit 2).
func parseFlags(fs *flags, args []string) (done bool, err error) {
	var named, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		named = append(named, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			continue
		}
		if fl := fs.Lookup(name); fl != nil && !isBoolFlag(fl) && i+1 < len(args) {
			named = append(named, args[i+1])
			i++
		}
	}
	// The flag package prints usage itself on an error; we print it
	// where it belongs (stdout for --help) ourselves.
	fs.Usage = func() {}
	defer func() { fs.Usage = func() { fs.printHelp(fs.s.err) } }()
	err = fs.Parse(append(append(named, "--"), positional...))
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp(fs.s.out)
		return true, nil
	default:
		fmt.Fprintf(fs.s.err, "minca %s --help lists its flags\n", fs.name)
		return true, quiet(exitUsage)
	}
}

func isBoolFlag(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
