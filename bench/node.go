package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/internal/cputime"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/api"
	"github.com/minca-go/minca/record"
)

// NodeConfig configures [RunNode].
type NodeConfig struct {
	// Dir is where the nodes go; default a new temporary directory,
	// removed afterwards.
	Dir string
	// Writes is how many records each round writes. Default 20,000.
	Writes int
	// Writers is how many goroutines write at once. Default 64.
	Writers int
	// Rounds is how many rounds; medians are reported. Default 3.
	Rounds int
	// Events is how many writes the event latencies are measured on.
	// Default 1,000.
	Events int
	// Progress, if set, is told as each step starts.
	Progress Progress
}

// NodeResult is what [RunNode] measured: local writes through the node's
// full path — derive the version, take its log place (written down with
// fsync), preview it with the judge, sign, store through the judge (the
// capability gate on every core — the crypto gate takes the node's own
// signature as passing — the decision, a synced commit) — in writes per
// second, against the bound of bare ECDSA sign + verify (SHA-256 and
// ecdsa.Sign then ecdsa.Verify, on every core) of the same versions,
// measured between slices of the writes (goal ≥ 0.6); and the
// latency from Put returning to a subscriber receiving the event, taken
// directly and through the HTTP API's event stream.
type NodeResult struct {
	Writes       int     `json:"writes"`
	Writers      int     `json:"writers"`
	Cores        int     `json:"cores"`
	Rounds       int     `json:"rounds"`
	BoundPerSec  float64 `json:"boundPerSecond"`
	WritesPerSec float64 `json:"writesPerSecond"`
	Ratio        float64 `json:"ratio"`
	// The CPU time (every thread, user and system) a write took, and a
	// bare sign + verify; their ratio is the ratio the node would reach
	// were every core busy with its writes, as the bound's are: what the
	// work costs, apart from how much of the machine the node was given
	// (shared with other processes) and how well it fills the cores.
	WriteCPUMicros float64 `json:"writeCpuMicros,omitempty"`
	BoundCPUMicros float64 `json:"boundCpuMicros,omitempty"`
	CPURatio       float64 `json:"cpuRatio,omitempty"`
	// The same two ratios against a bound that signs as the node does,
	// with RFC 6979's deterministic nonce (identity), rather than
	// crypto/ecdsa's hedged one: how much of the node's gain over the
	// bound is its cheaper nonce.
	Bound6979PerSec   float64 `json:"bound6979PerSecond"`
	Ratio6979         float64 `json:"ratio6979"`
	Bound6979CPUMicro float64 `json:"bound6979CpuMicros,omitempty"`
	CPURatio6979      float64 `json:"cpuRatio6979,omitempty"`
	// One writer, one write at a time: what a program that waits for each
	// write sees (every write its own fsyncs).
	SerialPerSec   float64 `json:"serialPerSecond"`
	EventP50Ms     float64 `json:"eventP50Ms"`
	EventP99Ms     float64 `json:"eventP99Ms"`
	EventHTTPP50Ms float64 `json:"eventHttpP50Ms"`
	EventHTTPP99Ms float64 `json:"eventHttpP99Ms"`
}

// RunNode measures the node's write path and events.
func RunNode(ctx context.Context, cfg NodeConfig) (NodeResult, error) {
	if cfg.Writes <= 0 {
		cfg.Writes = 20_000
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 64
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Events <= 0 {
		cfg.Events = 1000
	}
	res := NodeResult{Writes: cfg.Writes, Writers: cfg.Writers, Cores: runtime.GOMAXPROCS(0), Rounds: cfg.Rounds}
	dir, cleanup, err := workDir(cfg.Dir, "minca-bench-node-")
	if err != nil {
		return res, err
	}
	defer cleanup()
	var bound, rate, ratio, serial, writeCPU, boundCPU, cpuRatio []float64
	var bound6979, ratio6979, boundCPU6979, cpuRatio6979 []float64
	var prev []*record.Version // versions of the same shape, for the bound before a slice of writes
	steps := newSteps(cfg.Progress, cfg.Rounds+2)
	for r := range cfg.Rounds {
		steps.next(fmt.Sprintf("round %d of %d: writes and the bound", r+1, cfg.Rounds))
		n, sp, err := benchNode(ctx, fmt.Sprintf("%s/round-%d", dir, r))
		if err != nil {
			return res, err
		}
		if prev == nil {
			if _, prev, err = writeRate(ctx, n, sp, min(cfg.Writes, nodeSlice), cfg.Writers); err != nil {
				n.Close()
				return res, err
			}
		}
		// The machine's load moves: the writes go in slices, each after
		// the bound measured on the versions of the slice before, and
		// the bound once more after the last; the round's rates are its
		// writes over their time and the bound's work over its time.
		// The CPU time each takes is counted too.
		var wn, wt, bn, bt, dn, dt float64
		var wcpu, bcpu, dcpu time.Duration
		boundOf := func(vs []*record.Version) error {
			c := cputime.Process()
			b, err := signVerifyRate(vs, false)
			bcpu += cputime.Process() - c
			if err != nil {
				return err
			}
			bn, bt = bn+float64(len(vs)), bt+float64(len(vs))/b
			c = cputime.Process()
			d, err := signVerifyRate(vs, true)
			dcpu += cputime.Process() - c
			dn, dt = dn+float64(len(vs)), dt+float64(len(vs))/d
			return err
		}
		for done := 0; done < cfg.Writes; {
			k := min(nodeSlice, cfg.Writes-done)
			if err := boundOf(prev); err != nil {
				n.Close()
				return res, err
			}
			c := cputime.Process()
			w, vs, err := writeRate(ctx, n, sp, k, cfg.Writers)
			wcpu += cputime.Process() - c
			if err != nil {
				n.Close()
				return res, err
			}
			wn, wt = wn+float64(k), wt+float64(k)/w
			done, prev = done+k, vs
		}
		if err := boundOf(prev); err != nil {
			n.Close()
			return res, err
		}
		if wcpu > 0 && bcpu > 0 && dcpu > 0 {
			wus, bus, dus := float64(wcpu.Microseconds())/wn, float64(bcpu.Microseconds())/bn, float64(dcpu.Microseconds())/dn
			writeCPU, boundCPU, cpuRatio = append(writeCPU, wus), append(boundCPU, bus), append(cpuRatio, bus/wus)
			boundCPU6979, cpuRatio6979 = append(boundCPU6979, dus), append(cpuRatio6979, dus/wus)
		}
		s, _, err := writeRate(ctx, n, sp, min(cfg.Writes/20, 500), 1)
		n.Close()
		if err != nil {
			return res, err
		}
		w, b, d := wn/wt, bn/bt, dn/dt
		bound, rate, ratio, serial = append(bound, b), append(rate, w), append(ratio, w/b), append(serial, s)
		bound6979, ratio6979 = append(bound6979, d), append(ratio6979, w/d)
	}
	res.BoundPerSec, res.WritesPerSec, res.Ratio, res.SerialPerSec = median(bound), median(rate), median(ratio), median(serial)
	res.Bound6979PerSec, res.Ratio6979 = median(bound6979), median(ratio6979)
	if len(cpuRatio) > 0 {
		res.WriteCPUMicros, res.BoundCPUMicros, res.CPURatio = median(writeCPU), median(boundCPU), median(cpuRatio)
		res.Bound6979CPUMicro, res.CPURatio6979 = median(boundCPU6979), median(cpuRatio6979)
	}
	n, sp, err := benchNode(ctx, dir+"/events")
	if err != nil {
		return res, err
	}
	defer n.Close()
	steps.next("event latency, direct")
	if res.EventP50Ms, res.EventP99Ms, err = eventLatency(ctx, n, sp, cfg.Events, false); err != nil {
		return res, err
	}
	steps.next("event latency, over HTTP")
	if res.EventHTTPP50Ms, res.EventHTTPP99Ms, err = eventLatency(ctx, n, sp, cfg.Events, true); err != nil {
		return res, err
	}
	return res, nil
}

// nodeSlice is how many writes go between two measures of the bound: a
// fraction of a second, so the machine's load changes little in between.
const nodeSlice = 2000

func benchNode(ctx context.Context, dir string) (*node.Node, string, error) {
	acc, err := identity.GenerateKey()
	if err != nil {
		return nil, "", err
	}
	n, err := node.Open(ctx, &node.Options{Dir: dir, Account: acc})
	if err != nil {
		return nil, "", err
	}
	g, err := n.CreateSpace(ctx, "bench", nil)
	if err != nil {
		n.Close()
		return nil, "", err
	}
	return n, g.ID, nil
}

// writeRate writes count records of about 200 bytes from writers
// goroutines; writes per second, and the versions written.
func writeRate(ctx context.Context, n *node.Node, sp string, count, writers int) (float64, []*record.Version, error) {
	vs := make([]*record.Version, count)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < count; i = int(next.Add(1) - 1) {
				v, err := n.Put(ctx, sp, "app.bench", map[string]any{"i": i, "text": "a record of about two hundred bytes, as a chat message or a task is", "done": false}, nil)
				if err != nil {
					errs <- err
					return
				}
				vs[i] = v
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, nil, err
	}
	return float64(count) / el.Seconds(), vs, nil
}

// signVerifyRate signs each version's signed part with a fresh P-256 key
// and verifies it, on every core: the ECDSA work one write needs, alone.
// The nonce is crypto/ecdsa's hedged one, or with deterministic RFC
// 6979's, as the node's own keys sign (identity).
func signVerifyRate(vs []*record.Version, deterministic bool) (float64, error) {
	payloads := make([][]byte, len(vs))
	for i, v := range vs {
		p, err := v.SignedPart()
		if err != nil {
			return 0, err
		}
		payloads[i] = p
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return 0, err
	}
	var next, bad atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(payloads); i = int(next.Add(1) - 1) {
				d := sha256.Sum256(payloads[i])
				if deterministic {
					sig, err := k.Sign(nil, d[:], crypto.SHA256)
					if err != nil || !ecdsa.VerifyASN1(&k.PublicKey, d[:], sig) {
						bad.Add(1)
					}
					continue
				}
				r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
				if err != nil || !ecdsa.Verify(&k.PublicKey, d[:], r, s) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		return 0, fmt.Errorf("bench: a bare signature did not verify")
	}
	return float64(len(payloads)) / time.Since(start).Seconds(), nil
}

// eventLatency writes count records one at a time and measures, for each,
// the time from Put returning to the subscriber receiving its event:
// directly (node.Subscribe) or through the API's Server-Sent Events on a
// loopback port. Milliseconds, p50 and p99.
func eventLatency(ctx context.Context, n *node.Node, sp string, count int, viaHTTP bool) (p50, p99 float64, err error) {
	got := make(chan string, 1024)
	var stop func()
	if viaHTTP {
		srv, err := api.New(n, nil)
		if err != nil {
			return 0, 0, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		hs := &http.Server{Handler: srv}
		go hs.Serve(ln)
		tok, _ := api.Token(n.Dir())
		c := api.NewClient("http://"+ln.Addr().String(), tok)
		sctx, cancel := context.WithCancel(ctx)
		ready := make(chan struct{})
		go func() {
			close(ready)
			c.Events(sctx, "/v1/spaces/"+sp+"/events", func(data json.RawMessage) bool {
				got <- string(data)
				return true
			})
		}()
		<-ready
		time.Sleep(200 * time.Millisecond) // the stream is open
		stop = func() { cancel(); hs.Close() }
	} else {
		s, err := n.Subscribe(sp, "", 4096)
		if err != nil {
			return 0, 0, err
		}
		go func() {
			for ev := range s.Events() {
				got <- ev.ID
			}
		}()
		stop = s.Close
	}
	defer stop()
	var lat []float64
	for i := range count {
		v, err := n.Put(ctx, sp, "app.event", map[string]any{"i": i}, nil)
		if err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		for {
			select {
			case s := <-got:
				if !strings.Contains(s, v.ID) {
					continue
				}
			case <-time.After(10 * time.Second):
				return 0, 0, fmt.Errorf("bench: no event for %s in 10 s", v.ID)
			}
			break
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}
