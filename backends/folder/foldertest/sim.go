// Package foldertest simulates a sync service (Dropbox, iCloud Drive)
// between devices' copies of one folder, on a [folder.MemFS], for tests of
// what runs on top (../../shared/research F1–F10). It is test-only code:
// nothing in the minca binary imports it.
//
// Each device has its own root; a simulated server holds the latest copy
// of every path. A [Sim.Step] uploads what each device changed since the
// last step (a change to a path another device changed first becomes a
// conflicted copy, in the device's style) and delivers what is due, each
// change reaching each other device after a random delay. Seeded faults:
// deliveries written partly in place and finished later, placeholders
// (dataless files, iCloud ".name.icloud" stubs) downloaded later, bytes
// damaged in a delivery and repaired only by [Sim.Settle], duplicates
// ("name (1).seg", "name 2.seg"), deletes delivered late, deletes undone
// by a device that re-uploads what it had (resurrection), and a device's
// whole folder renamed away for a few steps.
//
// A Sim is not safe for concurrent use; the devices' code runs between
// steps, on the same goroutine.
package foldertest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"

	"github.com/minca-go/minca/backends/folder"
)

// Style is how a service names conflicted copies and duplicates.
type Style uint8

const (
	// Dropbox: "name (two's conflicted copy 2026-01-02).ext", duplicates
	// "name (1).ext", placeholders as dataless files.
	Dropbox Style = iota
	// ICloud: "name 2.ext" for both, placeholders as ".name.ext.icloud"
	// stubs.
	ICloud
)

// Device is one device's copy of the folder.
type Device struct {
	Name  string // in conflicted copies' names
	Root  string // its folder, an absolute path on the Sim's MemFS
	Style Style
}

// Options configure a Sim. Probabilities are per delivery, Away per step
// and device.
type Options struct {
	Seed    uint64
	Devices []Device
	// MaxDelay is the most steps a change takes to reach a device, past
	// the one after it was uploaded. Default 3.
	MaxDelay int
	// Faults, each a probability in [0, 1].
	Partial, Placeholder, Corrupt, Duplicate, LateDelete, Resurrect, Away float64
	// AwaySteps is how many steps a folder stays renamed away. Default 3.
	AwaySteps int
}

// Sim is a simulated sync service between devices' folders.
type Sim struct {
	// FS holds every device's folder.
	FS *folder.MemFS

	o     Options
	rng   *rand.Rand
	step  int
	seq   int
	calm  bool
	cloud map[string]*entry
	devs  []*dev
	queue []event
	stats Stats
}

// Stats count what the service did.
type Stats struct {
	Uploads, Deliveries, Conflicts, Partial, Placeholders, Corrupted, Duplicates, LateDeletes, Resurrected, Aways int
}

type entry struct {
	data    []byte
	rev     int
	deleted bool
}

type synced struct {
	rev int
	sum [32]byte
}

type flightKind uint8

const (
	partial flightKind = iota + 1
	dataless
	stub
	corrupt
)

// flight is a delivery in progress on a device: what it wrote so far is
// not the file yet.
type flight struct {
	kind  flightKind
	rev   int
	data  []byte // the whole file
	wrote []byte // what is under the name now (nil for a stub)
}

type dev struct {
	Device
	known    map[string]synced
	inflight map[string]*flight
	ever     map[string]bool // paths it ever held
	away     int             // the step it comes back at; 0 when here
	saved    map[string]savedFile
}

type savedFile struct {
	data     []byte
	dataless bool
}

type eventKind uint8

const (
	deliver eventKind = iota + 1
	complete
)

type event struct {
	due, seq int
	kind     eventKind
	dev      int
	path     string
	rev      int
}

// New returns a Sim over a new MemFS holding each device's empty root.
func New(o Options) *Sim {
	if o.MaxDelay <= 0 {
		o.MaxDelay = 3
	}
	if o.AwaySteps <= 0 {
		o.AwaySteps = 3
	}
	s := &Sim{FS: folder.NewMemFS(), o: o, rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed)), cloud: map[string]*entry{}}
	for _, d := range o.Devices {
		_ = s.FS.MkdirAll(d.Root)
		s.devs = append(s.devs, &dev{Device: d, known: map[string]synced{}, inflight: map[string]*flight{}, ever: map[string]bool{}})
	}
	return s
}

// Stats returns what the service did so far.
func (s *Sim) Stats() Stats { return s.stats }

// Step uploads every device's changes, delivers what is due, and may send
// a device's folder away or bring it back.
func (s *Sim) Step() {
	s.step++
	for _, d := range s.devs {
		if d.away != 0 && s.step >= d.away {
			s.comeBack(d)
		}
	}
	if !s.calm {
		for _, d := range s.devs {
			if d.away == 0 && s.chance(s.o.Away) {
				s.goAway(d)
			}
		}
	}
	// Devices upload in a random order: either may win a race.
	for _, i := range s.rng.Perm(len(s.devs)) {
		if s.devs[i].away == 0 {
			s.scan(i)
		}
	}
	sort.Slice(s.queue, func(i, j int) bool {
		a, b := s.queue[i], s.queue[j]
		return a.due < b.due || a.due == b.due && a.seq < b.seq
	})
	var later []event
	for len(s.queue) > 0 && s.queue[0].due <= s.step {
		ev := s.queue[0]
		s.queue = s.queue[1:]
		if s.devs[ev.dev].away != 0 {
			ev.due = s.devs[ev.dev].away
			later = append(later, ev)
			continue
		}
		switch ev.kind {
		case deliver:
			s.deliver(ev)
		case complete:
			s.complete(ev)
		}
	}
	s.queue = append(s.queue, later...)
}

// Settle stops every fault from now on, repairs what was damaged, brings
// every folder back and delivers everything pending.
func (s *Sim) Settle() {
	s.calm = true
	for _, d := range s.devs {
		if d.away != 0 {
			s.comeBack(d)
		}
	}
	for i, d := range s.devs {
		for _, p := range sortedKeys(d.inflight) {
			s.complete(event{dev: i, path: p, rev: d.inflight[p].rev})
		}
	}
	for n := 0; n == 0 || len(s.queue) > 0; n++ {
		if n > 10_000 {
			panic("foldertest: the service does not settle")
		}
		s.Step()
	}
}

// Quiet reports whether nothing is pending: no delivery queued, nothing
// in flight, no folder away.
func (s *Sim) Quiet() bool {
	if len(s.queue) > 0 {
		return false
	}
	for _, d := range s.devs {
		if d.away != 0 || len(d.inflight) > 0 {
			return false
		}
	}
	return true
}

// Away reports whether device i's folder is renamed away now.
func (s *Sim) Away(i int) bool { return s.devs[i].away != 0 }

// Damaged returns the names (relative to the root) of files on device i
// whose bytes are not a whole file yet or are damaged: partial deliveries
// and corrupted ones.
func (s *Sim) Damaged(i int) map[string]bool {
	out := map[string]bool{}
	for p, f := range s.devs[i].inflight {
		if f.kind == partial || f.kind == corrupt {
			out[p] = true
		}
	}
	return out
}

// Corrupted returns the names of files on device i delivered with damaged
// bytes and not repaired yet.
func (s *Sim) Corrupted(i int) map[string]bool {
	out := map[string]bool{}
	for p, f := range s.devs[i].inflight {
		if f.kind == corrupt {
			out[p] = true
		}
	}
	return out
}

// Files returns the files (relative to the root) on device i, with their
// bytes.
func (s *Sim) Files(i int) map[string][]byte {
	d := s.devs[i]
	out := map[string][]byte{}
	for _, p := range s.FS.Files() {
		rel, ok := strings.CutPrefix(p, d.Root+"/")
		if !ok {
			continue
		}
		b, err := s.FS.ReadFile(p)
		if err == nil {
			out[rel] = b
		}
	}
	return out
}

func (s *Sim) chance(p float64) bool { return !s.calm && p > 0 && s.rng.Float64() < p }

func (s *Sim) after(n int) int { return s.step + 1 + s.rng.IntN(n) }

func (s *Sim) push(ev event) {
	s.seq++
	ev.seq = s.seq
	s.queue = append(s.queue, ev)
}

// ignored reports paths the service does not sync: hidden and temp names
// (our ".minca-….tmp", iCloud's stubs, which the sim makes itself).
func ignored(rel string) bool {
	for _, c := range strings.Split(rel, "/") {
		if strings.HasPrefix(c, ".") || strings.HasPrefix(c, "~") {
			return true
		}
	}
	return false
}

// local reads device d's files (relative to its root), leaving out what
// the service ignores.
func (s *Sim) local(d *dev) map[string][]byte {
	out := map[string][]byte{}
	for rel, b := range s.Files(s.index(d)) {
		if !ignored(rel) {
			out[rel] = b
		}
	}
	return out
}

func (s *Sim) index(d *dev) int {
	for i, x := range s.devs {
		if x == d {
			return i
		}
	}
	panic("foldertest: unknown device")
}

// scan uploads what device i changed: new and modified files, and deletes.
func (s *Sim) scan(i int) {
	d := s.devs[i]
	files := s.local(d)
	for _, p := range sortedKeys(files) {
		data := files[p]
		if f, ok := d.inflight[p]; ok {
			if bytes.Equal(data, f.wrote) {
				continue // still the service's own delivery in progress
			}
			delete(d.inflight, p) // the device wrote over it
		}
		if k, ok := d.known[p]; ok && k.sum == sha256.Sum256(data) {
			continue
		}
		s.upload(i, p, data)
	}
	for _, p := range sortedKeys(d.inflight) {
		f := d.inflight[p]
		there := files[p] != nil
		if f.kind == stub {
			_, err := s.FS.Stat(stubPath(d.Root + "/" + p))
			there = err == nil
		}
		if !there {
			delete(d.inflight, p) // the device removed what was arriving
			s.uploadDelete(i, p, f.rev)
		}
	}
	for _, p := range sortedKeys(d.known) {
		if _, ok := files[p]; !ok {
			if _, arriving := d.inflight[p]; !arriving {
				s.uploadDelete(i, p, d.known[p].rev)
			}
		}
	}
}

func stubPath(full string) string { return path.Dir(full) + "/." + path.Base(full) + ".icloud" }

func (s *Sim) upload(i int, p string, data []byte) {
	d := s.devs[i]
	c := s.cloud[p]
	base := d.known[p].rev
	switch {
	case c == nil, c.deleted, c.rev == base:
		rev := 1
		if c != nil {
			rev = c.rev + 1
		}
		s.cloud[p] = &entry{data: bytes.Clone(data), rev: rev}
		d.known[p] = synced{rev, sha256.Sum256(data)}
		d.ever[p] = true
		s.stats.Uploads++
		s.broadcast(i, p, rev, false)
	case bytes.Equal(c.data, data):
		d.known[p] = synced{c.rev, sha256.Sum256(data)}
	default:
		// Another device changed it first: this device's copy becomes a
		// conflicted copy (uploaded next step), and the server's comes.
		cp := s.freeName(d, conflictName(p, d.Device))
		_ = s.FS.Rename(d.Root+"/"+p, d.Root+"/"+cp)
		delete(d.known, p)
		s.stats.Conflicts++
		s.push(event{due: s.after(s.o.MaxDelay), kind: deliver, dev: i, path: p, rev: c.rev})
	}
}

// uploadDelete sends a device's delete of a path it held at rev.
func (s *Sim) uploadDelete(i int, p string, rev int) {
	d := s.devs[i]
	delete(d.known, p)
	c := s.cloud[p]
	if c == nil || c.deleted {
		return
	}
	if c.rev != rev {
		// Changed elsewhere since: that change wins, and comes back here.
		s.push(event{due: s.after(s.o.MaxDelay), kind: deliver, dev: i, path: p, rev: c.rev})
		return
	}
	c.deleted, c.data = true, nil
	c.rev++
	s.stats.Uploads++
	s.broadcast(i, p, c.rev, true)
}

// broadcast sends a change to every device but the one it came from.
func (s *Sim) broadcast(from int, p string, rev int, del bool) {
	for j := range s.devs {
		if j == from {
			continue
		}
		due := s.after(s.o.MaxDelay)
		if del && s.chance(s.o.LateDelete) {
			due += 4 * s.o.MaxDelay
			s.stats.LateDeletes++
		}
		s.push(event{due: due, kind: deliver, dev: j, path: p, rev: rev})
	}
}

func (s *Sim) deliver(ev event) {
	d := s.devs[ev.dev]
	c := s.cloud[ev.path]
	if c == nil || c.rev != ev.rev {
		return // a later change is on its way
	}
	full := d.Root + "/" + ev.path
	s.stats.Deliveries++
	if c.deleted {
		cur, err := s.FS.ReadFile(full)
		if _, arriving := d.inflight[ev.path]; err == nil && !arriving && s.chance(s.o.Resurrect) {
			// A device that had not seen the delete uploads its copy again.
			s.stats.Resurrected++
			c.deleted, c.data = false, bytes.Clone(cur)
			c.rev++
			d.known[ev.path] = synced{c.rev, sha256.Sum256(cur)}
			s.broadcast(ev.dev, ev.path, c.rev, false)
			return
		}
		s.drop(d, ev.path)
		delete(d.known, ev.path)
		return
	}
	data := c.data
	seg := strings.HasSuffix(ev.path, ".seg")
	firstTime := !d.ever[ev.path]
	d.ever[ev.path] = true
	s.drop(d, ev.path)
	switch {
	case len(data) > 8 && s.chance(s.o.Partial):
		part := bytes.Clone(data[:1+s.rng.IntN(len(data)-1)])
		s.FS.WriteFile(full, part)
		d.inflight[ev.path] = &flight{kind: partial, rev: c.rev, data: data, wrote: part}
		s.stats.Partial++
		s.push(event{due: s.after(s.o.MaxDelay), kind: complete, dev: ev.dev, path: ev.path, rev: c.rev})
	case seg && s.chance(s.o.Placeholder):
		f := &flight{kind: dataless, rev: c.rev, data: data, wrote: data}
		if d.Style == ICloud {
			f.kind, f.wrote = stub, nil
			s.FS.WriteFile(stubPath(full), []byte("bplist00"))
		} else {
			s.FS.WriteFile(full, data)
			s.FS.SetDataless(full, true)
		}
		d.inflight[ev.path] = f
		s.stats.Placeholders++
		s.push(event{due: s.after(s.o.MaxDelay), kind: complete, dev: ev.dev, path: ev.path, rev: c.rev})
	case seg && firstTime && s.chance(s.o.Corrupt):
		bad := bytes.Clone(data)
		bad[s.rng.IntN(len(bad))] ^= 1 << s.rng.IntN(8)
		s.FS.WriteFile(full, bad)
		d.inflight[ev.path] = &flight{kind: corrupt, rev: c.rev, data: data, wrote: bad}
		s.stats.Corrupted++ // repaired by Settle only
	default:
		s.FS.WriteFile(full, data)
		d.known[ev.path] = synced{c.rev, sha256.Sum256(data)}
	}
	if s.chance(s.o.Duplicate) {
		// A copy under another name, a new file of this device's.
		s.stats.Duplicates++
		s.FS.WriteFile(d.Root+"/"+s.freeName(d, duplicateName(ev.path, d.Style)), data)
	}
}

// complete finishes a delivery in flight, if it is still the latest.
func (s *Sim) complete(ev event) {
	d := s.devs[ev.dev]
	f, ok := d.inflight[ev.path]
	if !ok || f.rev != ev.rev {
		return
	}
	s.drop(d, ev.path)
	if c := s.cloud[ev.path]; c == nil || c.rev != f.rev {
		return // superseded meanwhile: the next delivery brings it
	}
	s.FS.WriteFile(d.Root+"/"+ev.path, f.data)
	d.known[ev.path] = synced{f.rev, sha256.Sum256(f.data)}
}

// drop removes what device d holds of a path, and its stub.
func (s *Sim) drop(d *dev, p string) {
	full := d.Root + "/" + p
	_ = s.FS.Remove(full)
	_ = s.FS.Remove(stubPath(full))
	delete(d.inflight, p)
}

// goAway renames a device's whole folder away: its files are kept aside
// and the root is gone until it comes back.
func (s *Sim) goAway(d *dev) {
	d.saved = map[string]savedFile{}
	for _, p := range s.FS.Files() {
		if strings.HasPrefix(p, d.Root+"/") {
			b, _ := s.FS.ReadFile(p)
			e, _ := s.FS.Stat(p)
			d.saved[p] = savedFile{b, e.Dataless}
		}
	}
	s.FS.RemoveAll(d.Root)
	d.away = s.step + 1 + s.rng.IntN(s.o.AwaySteps)
	s.stats.Aways++
}

func (s *Sim) comeBack(d *dev) {
	_ = s.FS.MkdirAll(d.Root)
	for p, f := range d.saved {
		s.FS.WriteFile(p, f.data)
		if f.dataless {
			s.FS.SetDataless(p, true)
		}
	}
	d.saved, d.away = nil, 0
}

// freeName returns name, or the first "name (n)" variant free on d.
func (s *Sim) freeName(d *dev, name string) string {
	for n := 1; ; n++ {
		if _, err := s.FS.Stat(d.Root + "/" + name); err != nil {
			return name
		}
		stem, ext := splitExt(name)
		name = fmt.Sprintf("%s (%d)%s", stem, n, ext)
	}
}

func splitExt(p string) (string, string) {
	ext := path.Ext(p)
	return strings.TrimSuffix(p, ext), ext
}

func conflictName(p string, d Device) string {
	stem, ext := splitExt(p)
	if d.Style == ICloud {
		return stem + " 2" + ext
	}
	return stem + " (" + d.Name + "'s conflicted copy 2026-01-02)" + ext
}

func duplicateName(p string, st Style) string {
	stem, ext := splitExt(p)
	if st == ICloud {
		return stem + " 2" + ext
	}
	return stem + " (1)" + ext
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
