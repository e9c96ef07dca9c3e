package transport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// WebRTCOptions shape the direct connections a [RelayClient] opens to the
// peers a relay introduces. nil means defaults.
type WebRTCOptions struct {
	// ICEServers are STUN or TURN URLs ("stun:stun.example.org:3478").
	// Default none: host candidates only.
	ICEServers []string
	// LoopbackOnly gathers loopback candidates only: peers on one machine,
	// and tests, with no other address used.
	LoopbackOnly bool
	// ConnectTimeout bounds signalling, ICE, DTLS and who for one
	// connection. Default 30 s.
	ConnectTimeout time.Duration
	// MaxSessions bounds the direct connections, open or being opened, of
	// one client; offers past it are ignored. Default 256.
	MaxSessions int
}

// Data channel framing (docs/sync.md, "WebRTC").
const (
	dcLabel     = "minca"
	dcChunk     = 16 << 10 // one SCTP message: every implementation takes 16 KiB
	dcReadBuf   = 64 << 10 // a peer's message past this ends the link
	dcHighWater = 1 << 20  // BufferedAmount above which a write waits
	maxSDP      = 32 << 10
)

// signalPayload is the payload of a relay signal between two members.
type signalPayload struct {
	Kind string `json:"kind"` // "offer" or "answer"
	SID  string `json:"sid"`  // a session id the offerer chose, 16 random bytes base64url
	SDP  string `json:"sdp"`  // the whole description, candidates included (no trickle)
}

func decodeSignal(b []byte) (*signalPayload, error) {
	m, err := members(b, "signal.payload", []string{"kind", "sid", "sdp"}, []string{"kind", "sid", "sdp"})
	if err != nil {
		return nil, err
	}
	p := &signalPayload{}
	if p.Kind, err = stringOf(m["kind"], "kind"); err != nil || (p.Kind != "offer" && p.Kind != "answer") {
		return nil, errorf(CodeRelayShape, "signal.payload.kind is offer or answer")
	}
	if p.SID, err = stringOf(m["sid"], "sid"); err != nil || len(p.SID) == 0 || len(p.SID) > 64 {
		return nil, errorf(CodeRelayShape, "signal.payload.sid is a string of 1 to 64 bytes")
	}
	if p.SDP, err = stringOf(m["sdp"], "sdp"); err != nil || len(p.SDP) > maxSDP {
		return nil, errorf(CodeRelayShape, "signal.payload.sdp is a string of at most %d bytes", maxSDP)
	}
	return p, nil
}

// rtc makes peer connections.
type rtc struct {
	api     *webrtc.API
	servers []webrtc.ICEServer
	o       WebRTCOptions
}

func newRTC(opts *WebRTCOptions) (*rtc, error) {
	o := WebRTCOptions{}
	if opts != nil {
		o = *opts
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = 256
	}
	if o.ConnectTimeout < 0 || o.MaxSessions < 0 {
		return nil, fmt.Errorf("minca/transport: WebRTC options: ConnectTimeout %v and MaxSessions %d must not be negative", o.ConnectTimeout, o.MaxSessions)
	}
	se := webrtc.SettingEngine{}
	se.DetachDataChannels()
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	if o.LoopbackOnly {
		se.SetIncludeLoopbackCandidate(true)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
		se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	}
	r := &rtc{api: webrtc.NewAPI(webrtc.WithSettingEngine(se)), o: o}
	if len(o.ICEServers) > 0 {
		r.servers = []webrtc.ICEServer{{URLs: o.ICEServers}}
	}
	return r, nil
}

// newPC makes a peer connection with a fresh DTLS certificate, and
// returns the certificate's SHA-256 digest for the channel binding.
func (r *rtc) newPC() (*webrtc.PeerConnection, [32]byte, error) {
	var fp [32]byte
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fp, err
	}
	cert, err := webrtc.GenerateCertificate(k)
	if err != nil {
		return nil, fp, err
	}
	fps, err := cert.GetFingerprints()
	if err != nil || len(fps) == 0 || fps[0].Algorithm != "sha-256" {
		return nil, fp, fmt.Errorf("minca/transport: no SHA-256 fingerprint of our DTLS certificate: %v", err)
	}
	b, err := hex.DecodeString(strings.ReplaceAll(fps[0].Value, ":", ""))
	if err != nil || len(b) != 32 {
		return nil, fp, fmt.Errorf("minca/transport: DTLS fingerprint %q", fps[0].Value)
	}
	copy(fp[:], b)
	pc, err := r.api.NewPeerConnection(webrtc.Configuration{ICEServers: r.servers, Certificates: []webrtc.Certificate{*cert}})
	return pc, fp, err
}

// remoteFingerprint is the SHA-256 digest of the peer's DTLS certificate,
// as the DTLS handshake proved it (not as the SDP claimed it).
func remoteFingerprint(pc *webrtc.PeerConnection) ([32]byte, error) {
	sctp := pc.SCTP()
	if sctp == nil || sctp.Transport() == nil {
		return [32]byte{}, errors.New("minca/transport: no DTLS transport")
	}
	der := sctp.Transport().GetRemoteCertificate()
	if len(der) == 0 {
		return [32]byte{}, errors.New("minca/transport: no remote DTLS certificate")
	}
	return sha256.Sum256(der), nil
}

// openChannel waits for dc to open, detaches it and returns it as a byte
// stream.
func openChannel(ctx context.Context, pc *webrtc.PeerConnection, dc *webrtc.DataChannel) (io.ReadWriteCloser, error) {
	opened := make(chan struct{})
	var once sync.Once
	dc.OnOpen(func() { once.Do(func() { close(opened) }) })
	if dc.ReadyState() == webrtc.DataChannelStateOpen {
		once.Do(func() { close(opened) })
	}
	select {
	case <-opened:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	raw, err := dc.Detach()
	if err != nil {
		return nil, fmt.Errorf("minca/transport: detaching the data channel: %w", err)
	}
	s := &dcStream{dc: dc, pc: pc, raw: raw, low: make(chan struct{}, 1), closed: make(chan struct{})}
	dc.SetBufferedAmountLowThreshold(dcHighWater / 2)
	dc.OnBufferedAmountLow(func() {
		select {
		case s.low <- struct{}{}:
		default:
		}
	})
	return s, nil
}

// dcStream is a detached data channel as a byte stream: writes go out in
// messages of at most 16 KiB, and wait while more than 1 MiB is buffered,
// so a peer that does not read slows only this channel.
type dcStream struct {
	dc  *webrtc.DataChannel
	pc  *webrtc.PeerConnection
	raw io.ReadWriteCloser

	buf    [dcReadBuf]byte
	r, n   int
	low    chan struct{}
	once   sync.Once
	closed chan struct{}
}

func (s *dcStream) Read(p []byte) (int, error) {
	if s.r == s.n {
		n, err := s.raw.Read(s.buf[:])
		if err != nil {
			return 0, err
		}
		s.r, s.n = 0, n
	}
	k := copy(p, s.buf[s.r:s.n])
	s.r += k
	return k, nil
}

func (s *dcStream) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		for s.dc.BufferedAmount() > dcHighWater {
			select {
			case <-s.low:
			case <-s.closed:
				return done, net.ErrClosed
			case <-time.After(100 * time.Millisecond): // the callback may have fired before we waited
			}
		}
		end := min(done+dcChunk, len(p))
		if _, err := s.raw.Write(p[done:end]); err != nil {
			return done, err
		}
		done = end
	}
	return done, nil
}

func (s *dcStream) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.raw.Close()
		s.pc.Close()
	})
	return nil
}

// offer opens a direct connection to peer as the offerer: it signals
// through send and takes the answer from answers.
func (r *rtc) offer(ctx context.Context, o *resolved, peer string, send func(context.Context, *signalPayload) error, answers <-chan *signalPayload) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.ConnectTimeout)
	defer cancel()
	pc, ours, err := r.newPC()
	if err != nil {
		return nil, fmt.Errorf("minca/transport: WebRTC: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			pc.Close()
		}
	}()
	dc, err := pc.CreateDataChannel(dcLabel, nil) // ordered and reliable
	if err != nil {
		return nil, err
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sid := make([]byte, 16)
	rand.Read(sid)
	sp := &signalPayload{Kind: "offer", SID: b64.EncodeToString(sid), SDP: pc.LocalDescription().SDP}
	if err := send(ctx, sp); err != nil {
		return nil, err
	}
	var answer *signalPayload
	for answer == nil {
		select {
		case a := <-answers:
			if a.SID == sp.SID {
				answer = a
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("minca/transport: WebRTC: no answer from %s: %w", peer, ctx.Err())
		}
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		return nil, fmt.Errorf("minca/transport: WebRTC: the answer of %s: %w", peer, err)
	}
	stream, err := openChannel(ctx, pc, dc)
	if err != nil {
		return nil, fmt.Errorf("minca/transport: WebRTC: the data channel to %s: %w", peer, err)
	}
	theirs, err := remoteFingerprint(pc)
	if err != nil {
		stream.Close()
		return nil, err
	}
	ok = true
	return handshake(ctx, NewStreamLink(stream), o, HandshakeOptions{Role: Initiator, Binding: DTLSBinding(ours, theirs), Expect: peer})
}

// answer takes an offer from peer and returns the proven connection once
// the offerer's data channel opens.
func (r *rtc) answer(ctx context.Context, o *resolved, peer string, offer *signalPayload, send func(context.Context, *signalPayload) error) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.ConnectTimeout)
	defer cancel()
	pc, ours, err := r.newPC()
	if err != nil {
		return nil, fmt.Errorf("minca/transport: WebRTC: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			pc.Close()
		}
	}()
	channels := make(chan *webrtc.DataChannel, 1)
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() != dcLabel {
			dc.Close()
			return
		}
		select {
		case channels <- dc:
		default:
			dc.Close() // one channel a connection
		}
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		return nil, fmt.Errorf("minca/transport: WebRTC: the offer of %s: %w", peer, err)
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return nil, err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return nil, err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := send(ctx, &signalPayload{Kind: "answer", SID: offer.SID, SDP: pc.LocalDescription().SDP}); err != nil {
		return nil, err
	}
	var dc *webrtc.DataChannel
	select {
	case dc = <-channels:
	case <-ctx.Done():
		return nil, fmt.Errorf("minca/transport: WebRTC: no data channel from %s: %w", peer, ctx.Err())
	}
	stream, err := openChannel(ctx, pc, dc)
	if err != nil {
		return nil, err
	}
	theirs, err := remoteFingerprint(pc)
	if err != nil {
		stream.Close()
		return nil, err
	}
	ok = true
	return handshake(ctx, NewStreamLink(stream), o, HandshakeOptions{Role: Responder, Binding: DTLSBinding(theirs, ours), Expect: peer})
}

func encodeSignal(p *signalPayload) json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}
