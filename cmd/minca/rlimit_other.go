//go:build !unix

package main

// raiseFileLimit: no file limit to raise here.
func raiseFileLimit() (int, error) { return 0, nil }
