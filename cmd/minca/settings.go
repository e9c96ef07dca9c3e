package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// setting is one NAME=VALUE of a repeatable flag (serve's --limit, store
// import's --memory): its name, its default as written, what it bounds,
// and where a value goes once read.
type setting struct {
	name, def, what string
	set             func(v string) error
}

// settingsFlag is a repeatable NAME=VALUE flag over a list of settings.
type settingsFlag struct {
	noun string // what one setting is called in errors: "limit", "part"
	defs []setting
	set  []string
}

func (f *settingsFlag) String() string { return strings.Join(f.set, ",") }

func (f *settingsFlag) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, have %q", s)
	}
	i := slices.IndexFunc(f.defs, func(d setting) bool { return d.name == name })
	if i < 0 {
		names := make([]string, len(f.defs))
		for j, d := range f.defs {
			names[j] = d.name
		}
		return fmt.Errorf("no %s %q; the %ss are %s", f.noun, name, f.noun, strings.Join(names, ", "))
	}
	if err := f.defs[i].set(v); err != nil {
		return fmt.Errorf("%s=%s: %v", name, v, err)
	}
	f.set = append(f.set, s)
	return nil
}

// sizeValue reads a size into p (parseSize).
func sizeValue[T int | int64 | uint64](p *T) func(string) error {
	return func(v string) error {
		n, err := parseSize(v)
		*p = T(n)
		return err
	}
}

// countValue reads a positive count into p.
func countValue(p *int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n <= 0 {
			err = fmt.Errorf("%d is not a positive count", n)
		}
		*p = n
		return err
	}
}

// durationValue reads a positive duration into p.
func durationValue(p *time.Duration) func(string) error {
	return func(v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%v is not a positive duration", d)
		}
		*p = d
		return err
	}
}

// rateValue reads a positive rate into p.
func rateValue(p *float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !(f > 0) {
			err = fmt.Errorf("%v is not a positive rate", f)
		}
		*p = f
		return err
	}
}

// parseSize reads a byte count: a number, optionally with KiB, MiB or
// GiB.
func parseSize(v string) (int, error) {
	mul := 1
	for _, u := range []struct {
		suffix string
		mul    int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mul = n, u.mul
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with KiB, MiB, GiB)", v)
	}
	return n * mul, nil
}
