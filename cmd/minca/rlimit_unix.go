//go:build unix

package main

import "syscall"

// raiseFileLimit raises the soft limit of open files to the hard limit
// and returns the soft limit in force.
func raiseFileLimit() (int, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	if r.Cur < r.Max {
		want := r
		want.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return int(min(r.Cur, 1<<30)), err
		}
		r = want
	}
	return int(min(r.Cur, 1<<30)), nil
}
