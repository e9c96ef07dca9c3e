package space

import (
	"slices"
	"strconv"
	"strings"
)

// ancestry is a set of places in the history's arrival order, kept as
// every place below prefix plus a few above it (extra, sorted, none equal
// to prefix). Changes are placed after everything they saw, so in a
// history without much concurrency extra stays empty and the set is one
// number, where a set of ids would grow with the history.
type ancestry struct {
	prefix int32
	extra  []int32
}

func (a ancestry) has(p int32) bool {
	if p < a.prefix {
		return true
	}
	_, ok := slices.BinarySearch(a.extra, p)
	return ok
}

// top is one past the highest place in the set.
func (a ancestry) top() int32 {
	if len(a.extra) > 0 {
		return a.extra[len(a.extra)-1] + 1
	}
	return a.prefix
}

// key names the set, for caches.
func (a ancestry) key() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(a.prefix)))
	for _, e := range a.extra {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(e)))
	}
	return b.String()
}

// closureOf is the set of the given changes and everything they saw.
func closureOf(seen []*node) ancestry {
	var prefix int32
	for _, s := range seen {
		prefix = max(prefix, s.anc.prefix)
	}
	var extra []int32
	for _, s := range seen {
		for _, e := range s.anc.extra {
			if e >= prefix {
				extra = append(extra, e)
			}
		}
		if s.pos >= prefix {
			extra = append(extra, s.pos)
		}
	}
	slices.Sort(extra)
	extra = slices.Compact(extra)
	i := 0
	for i < len(extra) && extra[i] == prefix {
		prefix++
		i++
	}
	extra = extra[i:]
	if len(extra) == 0 {
		extra = nil
	}
	return ancestry{prefix: prefix, extra: extra}
}
