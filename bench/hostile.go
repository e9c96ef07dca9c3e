package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/node/peers/hostilepeer"
	"github.com/minca-go/minca/store"
	"github.com/minca-go/minca/transport"
)

// HostileConfig configures [RunHostile].
type HostileConfig struct {
	// Minca is the minca binary that serves the node attacked, as
	// `minca bench hostile --serve DIR` (a child process, so its memory is
	// its own).
	Minca string
	// Dir is where the stores go; default a new temporary directory.
	Dir string
	// Versions is how many versions the node serves, and the honest peer
	// syncs into an empty store. Default 40,000.
	Versions int
	// Rounds is how many rounds of every case; medians. Default 3.
	Rounds int
	// Attacks names the attacks to run (HostileCase.Name); none: all.
	Attacks []string
	// Progress, if set, is told as each step starts.
	Progress Progress
}

// HostileCase is one attack's effect on the honest sync and on the node.
type HostileCase struct {
	Name string `json:"name"`
	// What the attacker does.
	What string `json:"what"`
	// SyncSeconds is the honest sync's time under the attack (median);
	// Ratio is that over the sync alone just before it (median of the
	// rounds' ratios; goal ≤ 1.5).
	SyncSeconds float64 `json:"syncSeconds"`
	Ratio       float64 `json:"ratio"`
	// PeakRSSMiB is the node's peak resident memory during the case, and
	// GrowthMiB that less its resident memory just before (the largest of
	// the rounds; goal ≤ 256).
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	GrowthMiB  float64 `json:"growthMiB"`
	// StoreGrowthMiB is how much the node's store grew on disk during
	// the case (the largest of the rounds; goal ≤ 64 for the 270 MB of
	// versions that can never stand), and SentMiB what the attacker sent.
	StoreGrowthMiB float64 `json:"storeGrowthMiB"`
	SentMiB        float64 `json:"sentMiB,omitempty"`
	// NodeCPURatio is the node's CPU time (user and system) during the
	// honest sync under the attack over that during the sync alone just
	// before it (median of the rounds): the work the attack makes the
	// node do, apart from the machine's other load. HonestCPUSeconds is
	// the honest peer's CPU during the attacked sync, and
	// AttackerCPUSeconds the attacker's (a process of its own, `minca
	// bench hostile --attack`) from its start to its end (medians): on a
	// machine of few cores, the attacker's is taken from the others.
	NodeCPURatio       float64 `json:"nodeCPURatio"`
	HonestCPUSeconds   float64 `json:"honestCPUSeconds"`
	AttackerCPUSeconds float64 `json:"attackerCPUSeconds"`
	// HonestRedials is how many times, over the rounds, the honest peer's
	// connection failed in the handshake under the attack and it dialled
	// again (at most twice a sync); the time lost is in its sync's.
	HonestRedials int `json:"honestRedials,omitempty"`
}

// HostileResult is what [RunHostile] measured.
type HostileResult struct {
	Cores    int `json:"cores"`
	Versions int `json:"versions"`
	// AloneSeconds is the honest sync with no attack (median).
	AloneSeconds float64       `json:"aloneSeconds"`
	Cases        []HostileCase `json:"cases"`
}

func (c *HostileConfig) fill() {
	if c.Versions <= 0 {
		c.Versions = 40_000
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
}

// attack is one of docs/sync.md's Limits' attacks, run from a loopback
// address of its own until ctx ends.
type attack struct {
	name, what string
	run        func(ctx context.Context, a attacker)
	// whole: the attack is let run to its end (within 3 minutes), not
	// stopped with the honest sync.
	whole bool
}

// attacker is where an attack comes from and goes to.
type attacker struct {
	url, space string
	// from is a loopback address of its own (another machine, as the node
	// counts): one attack's refusals never touch the next's.
	from string
	sent *atomic.Int64 // bytes of versions sent, where it counts them
}

// dialled is one attacker's run: a connection of a's own with a new
// throwaway key, given to body and closed after it.
func (a attacker) dialled(body func(ctx context.Context, h *hostilepeer.Peer) error) func(context.Context) error {
	return a.dialledAs(nil, body)
}

// dialledAs is dialled proving self (nil: a new throwaway key).
func (a attacker) dialledAs(self transport.Self, body func(ctx context.Context, h *hostilepeer.Peer) error) func(context.Context) error {
	return func(ctx context.Context) error {
		h, err := hostilepeer.Dial(ctx, a.url, &hostilepeer.Options{From: a.from, Self: self})
		if err != nil {
			return err
		}
		defer h.Close()
		return body(ctx, h)
	}
}

func attacks() []attack {
	return []attack{
		{"answers-nobody-reads", "8 sessions on one connection sending NEG-MSGs that ask for every id, reading one frame every 15 s; again when ended", nobodyReads, false},
		{"live-sessions", "8 connections (throwaway keys) × 256 live NEG-OPENs", liveSessions, false},
		{"session-churn", "4 connections opening and closing sessions as fast as they are answered", sessionChurn, false},
		{"silent-handshakes", "64 WebSockets that never say hello, and 1,024 throwaway-key connections that say nothing after who; again when dropped", silentHandshakes, false},
		{"keep-alive-flood", "2,000 kept-alive HTTP connections to the peer listener, each answered once", keepAliveFlood, false},
		{"forgeries", "connections pushing 1,024 versions with broken signatures at a time; again when ended", forgeries, false},
		{"unstandable", "270 MB of validly signed edits by a throwaway key whose prev exists nowhere (300 × 900 KB), pushed from one connection; again when ended", unstandable, true},
	}
}

// pickAttacks is the attacks named, in their order; all when none is.
func pickAttacks(names []string) ([]attack, error) {
	all := attacks()
	if len(names) == 0 {
		return all, nil
	}
	var out []attack
	for _, a := range all {
		if slices.Contains(names, a.name) {
			out = append(out, a)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(all, func(a attack) bool { return a.name == n }) {
			return nil, fmt.Errorf("bench: hostile: no attack named %q", n)
		}
	}
	return out, nil
}

// RunHostile measures an honest sync of Versions versions alone and
// under each attack against the same node, and the node's peak memory
// during each (docs/sync.md, Limits).
func RunHostile(ctx context.Context, cfg HostileConfig) (HostileResult, error) {
	cfg.fill()
	res := HostileResult{Cores: runtime.GOMAXPROCS(0), Versions: cfg.Versions}
	if cfg.Minca == "" {
		return res, errors.New("bench: hostile: the minca binary to serve the node is required")
	}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-hostile-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	as, err := pickAttacks(cfg.Attacks)
	if err != nil {
		return res, err
	}
	steps := newSteps(cfg.Progress, 2+cfg.Rounds*2*len(as))
	steps.next("corpus")
	path, err := corpusIn(ctx, dir, "", CorpusConfig{Versions: cfg.Versions, Spaces: 1, Seed: 21})
	if err != nil {
		return res, err
	}
	lines, err := readLines(path)
	if err != nil {
		return res, err
	}
	sp, err := spaceOf(lines[0])
	if err != nil {
		return res, err
	}
	src := filepath.Join(dir, "node")
	st, err := openBenchStore(src, &judge.Judge{})
	if err != nil {
		return res, err
	}
	err = importAll(ctx, st, lines, 1000, len(lines))
	st.Close()
	if err != nil {
		return res, err
	}
	steps.next("start the node")
	target, err := startTarget(ctx, cfg.Minca, src)
	if err != nil {
		return res, err
	}
	defer target.stop()
	retries := map[string]int{} // honest connections that failed, by case
	// honest syncs into an empty store; it returns the seconds it took,
	// and the node's and the bench process's CPU seconds meanwhile.
	honest := func(r int, name string) (secs, nodeCPU, benchCPU float64, err error) {
		p := filepath.Join(dir, fmt.Sprintf("honest-%s-%d", name, r))
		hs, err := openBenchStore(p, &judge.Judge{})
		if err != nil {
			return 0, 0, 0, err
		}
		defer os.RemoveAll(p)
		defer hs.Close()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		start, node0, bench0 := time.Now(), target.cpu(), cputime.Process()
		sum, err := syncOnce(cctx, syncHost{hs, []string{sp}}, target.url)
		for try := 1; try < 3 && err != nil && handshakeFailed(err); try++ {
			// As `minca sync` is run again: the time taken counts.
			retries[name]++
			sum, err = syncOnce(cctx, syncHost{hs, []string{sp}}, target.url)
		}
		if err != nil {
			return 0, 0, 0, err
		}
		if sum.Received != int64(len(lines)) {
			return 0, 0, 0, fmt.Errorf("bench: the honest sync received %d of %d versions", sum.Received, len(lines))
		}
		return time.Since(start).Seconds(), (target.cpu() - node0).Seconds(), (cputime.Process() - bench0).Seconds(), nil
	}
	var alone []float64
	times := make([][]float64, len(as))
	ratios := make([][]float64, len(as))
	cpuRatios := make([][]float64, len(as))
	benchCPU := make([][]float64, len(as))
	attackCPU := make([][]float64, len(as))
	cases := make([]HostileCase, len(as))
	for r := range cfg.Rounds {
		for i, at := range as {
			// Each attack's sync is set against a sync alone just before
			// it: the shared machine's speed drifts over minutes.
			steps.next(fmt.Sprintf("round %d of %d: alone, before %s", r+1, cfg.Rounds, at.name))
			a, aloneCPU, _, err := honest(r, "alone-"+at.name)
			if err != nil {
				return res, err
			}
			alone = append(alone, a)
			steps.next(fmt.Sprintf("round %d of %d: %s", r+1, cfg.Rounds, at.name))
			base, disk0 := target.rss(), dirSize(src)
			peak := target.samplePeak()
			from := fmt.Sprintf("127.0.%d.%d", 1+r, 10+i)
			att, err := startAttack(ctx, cfg.Minca, at.name, target.url, sp, from)
			if err != nil {
				peak()
				return res, err
			}
			time.Sleep(2 * time.Second) // the attack under way
			t, nodeCPU, bcpu, err := honest(r, at.name)
			sent, acpu := att.stop(at.whole)
			top := peak()
			if err != nil {
				return res, fmt.Errorf("bench: under %s: %w", at.name, err)
			}
			times[i] = append(times[i], t)
			ratios[i] = append(ratios[i], t/a)
			cpuRatios[i] = append(cpuRatios[i], nodeCPU/max(aloneCPU, 0.01))
			benchCPU[i] = append(benchCPU[i], bcpu)
			attackCPU[i] = append(attackCPU[i], acpu)
			c := &cases[i]
			c.Name, c.What = at.name, at.what
			c.PeakRSSMiB = max(c.PeakRSSMiB, mib(top))
			c.GrowthMiB = max(c.GrowthMiB, mib(top)-mib(base))
			c.StoreGrowthMiB = max(c.StoreGrowthMiB, mib(dirSize(src)-disk0))
			c.SentMiB = max(c.SentMiB, mib(sent))
			time.Sleep(time.Second) // what the attack left is let go
		}
	}
	res.AloneSeconds = median(alone)
	for i := range cases {
		cases[i].SyncSeconds, cases[i].Ratio = median(times[i]), median(ratios[i])
		cases[i].NodeCPURatio, cases[i].HonestCPUSeconds = median(cpuRatios[i]), median(benchCPU[i])
		cases[i].AttackerCPUSeconds = median(attackCPU[i])
		cases[i].HonestRedials = retries[cases[i].Name]
	}
	res.Cases = cases
	return res, nil
}

// handshakeFailed reports whether err is a dial or handshake that did not
// get through: one a person would run `minca sync` again after.
func handshakeFailed(err error) bool {
	return errors.Is(err, transport.ErrUnreachable) || strings.HasPrefix(transport.Code(err), "who/")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// attackProc is an attack run in a process of its own: `minca bench
// hostile --attack NAME`, so its CPU is its own and the honest peer's is
// the bench's.
type attackProc struct {
	*target
	out *bufio.Reader
}

func startAttack(ctx context.Context, minca, name, url, space, from string) (*attackProc, error) {
	cmd, out, err := startHostile(ctx, minca, "--attack", name, "--url", url, "--space", space, "--from", from)
	if err != nil {
		return nil, err
	}
	return &attackProc{target: &target{cmd: cmd, pid: cmd.Process.Pid}, out: out}, nil
}

// startHostile starts `minca bench hostile ARGS…` with its stderr ours and
// its stdout to read.
func startHostile(ctx context.Context, minca string, args ...string) (*exec.Cmd, *bufio.Reader, error) {
	cmd := exec.CommandContext(ctx, minca, append([]string{"bench", "hostile"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, bufio.NewReader(out), nil
}

// stop ends the attack — when whole, once it has ended by itself, within
// 3 minutes — and returns the bytes of versions it sent and its CPU
// seconds.
func (a *attackProc) stop(whole bool) (sent int64, cpu float64) {
	var res struct{ Sent int64 }
	read := make(chan struct{})
	go func() { json.NewDecoder(a.out).Decode(&res); close(read) }()
	if whole {
		select {
		case <-read:
		case <-time.After(3 * time.Minute):
		}
	}
	cpu = a.cpu().Seconds()
	a.target.stop()
	<-read
	return res.Sent, cpu
}

// RunAttack runs the attack name (as [HostileCase.Name] names it) from
// the loopback address from against the node at url, on space, until ctx
// ends — or, for an attack let run whole, until it is over — then prints
// {"sent": bytes of versions sent} to out.
func RunAttack(ctx context.Context, name, url, space, from string, out io.Writer) error {
	as, err := pickAttacks([]string{name})
	if err != nil {
		return err
	}
	var sent atomic.Int64
	as[0].run(ctx, attacker{url: url, space: space, from: from, sent: &sent})
	return json.NewEncoder(out).Encode(map[string]int64{"sent": sent.Load()})
}

// target is the node attacked: `minca bench hostile --serve DIR`.
type target struct {
	cmd *exec.Cmd
	url string
	pid int
}

func startTarget(ctx context.Context, minca, dir string) (*target, error) {
	cmd, out, err := startHostile(ctx, minca, "--serve", dir)
	if err != nil {
		return nil, err
	}
	line, err := out.ReadString('\n')
	var ready struct{ URL string }
	if err != nil || json.Unmarshal([]byte(line), &ready) != nil || ready.URL == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("bench: the node did not start: %q %v", line, err)
	}
	return &target{cmd: cmd, url: ready.URL, pid: cmd.Process.Pid}, nil
}

func (t *target) stop() {
	t.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.cmd.Process.Kill()
		<-done
	}
}

// rss is the node's resident memory now, in bytes.
func (t *target) rss() int64 {
	v, err := procStatus(fmt.Sprintf("/proc/%d/status", t.pid), "VmRSS")
	if err != nil {
		return 0
	}
	return v[0] << 10
}

// cpu is the CPU time, user and system, the node has used so far.
func (t *target) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which ends at the last ')':
	// utime and stime are the 14th and 15th of the line, in clock ticks.
	i := strings.LastIndex(string(b), ") ")
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b)[i+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on Linux everywhere it runs.
const clockTicks = 100

// samplePeak samples rss every 50 ms until the returned function is
// called, which returns the largest.
func (t *target) samplePeak() func() int64 {
	var top atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			if r := t.rss(); r > top.Load() {
				top.Store(r)
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	return func() int64 { close(stop); <-done; return top.Load() }
}

// ServeTarget serves the store at dir as a node serving its spaces to any
// peer, with the default limits, on a loopback port; it prints
// {"url"} to out and serves until ctx ends. `minca bench hostile` runs it
// in a child process.
func ServeTarget(ctx context.Context, dir string, out io.Writer) error {
	kv, err := pebble.Open(dir, nil)
	if err != nil {
		return err
	}
	// The bounds `minca serve` keeps on what waits, from peers.
	st, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}, Waiting: store.PeersBounded(engine.WaitingLimits{})})
	if err != nil {
		kv.Close()
		return err
	}
	defer st.Close()
	spaces, err := st.Spaces(ctx)
	if err != nil {
		return err
	}
	k := mustBenchKey()
	p, err := peers.New(syncHost{st, spaces}, &peers.Options{Transport: &transport.Options{Self: transport.Carrier(k)}})
	if err != nil {
		return err
	}
	defer p.Close() // its connections end before the store closes
	srv, err := p.Handler(ctx, nil)
	if err != nil {
		return err
	}
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle(transport.PathPeer, srv)
	ln, err := transport.Listen("127.0.0.1:0", mux, nil)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := json.NewEncoder(out).Encode(map[string]string{"url": ln.URL(transport.PathPeer)}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// again runs one attacker after another until ctx ends, pausing a little
// when one fails at once (refused).
func again(ctx context.Context, one func(ctx context.Context) error) {
	for ctx.Err() == nil {
		again1(ctx, one)
	}
}

// again1 runs one attacker, pausing after it when it failed at once.
func again1(ctx context.Context, one func(ctx context.Context) error) {
	start := time.Now()
	if err := one(ctx); err != nil && time.Since(start) < time.Second {
		// Refused: an attacker that keeps its hold, not a flood of
		// connections (that is the kernel's and the network's to bound).
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func nobodyReads(ctx context.Context, a attacker) {
	again(ctx, a.dialled(func(ctx context.Context, h *hostilepeer.Peer) error {
		go func() { // one frame every 15 s
			t := time.NewTicker(15 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-h.Conn.Done():
					return
				case <-t.C:
					h.Recv(ctx)
				}
			}
		}()
		for sid := uint64(1); sid <= 8; sid++ {
			if err := h.Send(ctx, hostilepeer.NegOpen(sid, a.space, false, hostilepeer.SendEverything())); err != nil {
				return err
			}
		}
		for i := 0; ; i++ {
			if err := h.Send(ctx, hostilepeer.NegMsg(uint64(1+i%8), hostilepeer.SendEverything())); err != nil {
				return err
			}
		}
	}))
}

func liveSessions(ctx context.Context, a attacker) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			again(ctx, a.dialled(func(ctx context.Context, h *hostilepeer.Peer) error {
				h.Drain()
				for sid := uint64(1); sid <= 256; sid++ {
					if err := h.Send(ctx, hostilepeer.NegOpen(sid, a.space, true, hostilepeer.EmptySet())); err != nil {
						return err
					}
				}
				select {
				case <-ctx.Done():
				case <-h.Conn.Done():
				}
				return nil
			}))
		})
	}
	wg.Wait()
}

func sessionChurn(ctx context.Context, a attacker) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			again(ctx, a.dialled(func(ctx context.Context, h *hostilepeer.Peer) error {
				for sid := uint64(1); ; sid = sid%1024 + 1 {
					if err := h.Send(ctx, hostilepeer.NegOpen(sid, a.space, false, hostilepeer.EmptySet())); err != nil {
						return err
					}
					for {
						m, err := h.Recv(ctx)
						if err != nil {
							return err
						}
						if typ, s, _, _ := hostilepeer.Parse(m); s == sid && (typ == hostilepeer.NegMsgType || typ == hostilepeer.NegErrType) {
							if typ == hostilepeer.NegMsgType {
								h.Send(ctx, hostilepeer.NegErrMsg(sid, "sync/closed", "churn"))
							}
							break
						}
					}
				}
			}))
		})
	}
	wg.Wait()
}

func silentHandshakes(ctx context.Context, a attacker) {
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			again(ctx, func(ctx context.Context) error {
				ws, err := hostilepeer.Upgrade(ctx, a.url, &hostilepeer.Options{From: a.from})
				if err != nil {
					return err
				}
				defer ws.CloseNow()
				ws.Read(ctx) // until the node drops it
				return nil
			})
		})
	}
	// Each connection's throwaway key is made before the attack, and kept
	// when it connects again: the bench's process, which the honest peer
	// shares, spends on the attack what the attacker must, not more.
	keys := make([]transport.Self, 1024)
	for i := range keys {
		k, err := identity.GenerateKey()
		if err != nil {
			return
		}
		keys[i] = transport.Carrier(k)
	}
	for _, k := range keys {
		wg.Go(func() {
			again(ctx, a.dialledAs(k, func(ctx context.Context, h *hostilepeer.Peer) error {
				select {
				case <-ctx.Done():
				case <-h.Conn.Done():
				}
				return nil
			}))
		})
	}
	wg.Wait()
}

func keepAliveFlood(ctx context.Context, a attacker) {
	addr := strings.TrimSuffix(strings.TrimPrefix(a.url, "ws://"), transport.PathPeer)
	var mu sync.Mutex
	var held []net.Conn
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a.from)}}
	for i := 0; i < 2000 && ctx.Err() == nil; i++ {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			continue
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", transport.PathPeer)
		c.SetReadDeadline(time.Now().Add(time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			resp.Body.Close()
		}
	}
	<-ctx.Done()
	for _, c := range held {
		c.Close()
	}
}

func forgeries(ctx context.Context, a attacker) {
	f, err := hostilepeer.NewForger(a.space)
	if err != nil {
		return
	}
	var mu sync.Mutex
	batch := func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		out := make([][]byte, 0, 1024)
		for range 1024 {
			out = append(out, f.Next())
		}
		return out
	}
	again(ctx, a.dialled(func(ctx context.Context, h *hostilepeer.Peer) error {
		h.Drain()
		if err := h.Send(ctx, hostilepeer.NegOpen(1, a.space, false, hostilepeer.EmptySet())); err != nil {
			return err
		}
		for {
			if err := h.Send(ctx, hostilepeer.Versions(1, hostilepeer.FlagPush, batch()...)); err != nil {
				return err
			}
		}
	}))
}

func unstandable(ctx context.Context, a attacker) {
	f, err := hostilepeer.NewForger(a.space)
	if err != nil {
		return
	}
	const size, total = 900 << 10, 300
	n := 0
	for n < total && ctx.Err() == nil {
		again1(ctx, a.dialled(func(ctx context.Context, h *hostilepeer.Peer) error {
			h.Drain()
			if err := h.Send(ctx, hostilepeer.NegOpen(1, a.space, false, hostilepeer.EmptySet())); err != nil {
				return err
			}
			for ; n < total; n++ {
				v := f.Unstandable(size)
				if err := h.Send(ctx, hostilepeer.Versions(1, hostilepeer.FlagPush, v)); err != nil {
					return err
				}
				a.sent.Add(int64(len(v)))
			}
			// What was sent is taken in before the attacker leaves.
			time.Sleep(2 * time.Second)
			return nil
		}))
	}
}
