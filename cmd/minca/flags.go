package main

import (
	"errors"
	"flag"
	"fmt"
)

// newFlags makes a verb's flag set: errors and --help go to stderr, and
// parse reports --help as errHelp so the verb returns nil (exit 0).
func newFlags(s *stdio, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: minca %s\n", usage)
		if hasFlags(fs) {
			fmt.Fprintln(s.err, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses args; done is true when the verb should return err
// at once (--help gives nil, a bad flag a usage error).
func parseFlags(fs *flag.FlagSet, args []string) (done bool, err error) {
	err = fs.Parse(args)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, flag.ErrHelp):
		return true, nil
	default:
		return true, &exitError{code: exitUsage, err: errQuiet}
	}
}
