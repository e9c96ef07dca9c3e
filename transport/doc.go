// Package transport holds peer connections: our profile of 04 — Network,
// written out in docs/sync.md (DESIGN.md, "Negentropy and sync"). It
// carries frames between nodes and proves who is at each end; it never
// reads a record.
//
// # Connections
//
// A [Link] carries frames in order: a WebSocket (one binary message a
// frame), a WebRTC data channel or any byte stream ([NewStreamLink]: a
// 4-byte big-endian length, then the frame). A frame is one kind byte —
// 0x00 control, 0x01 data — and a body; frames past the receiver's limit
// (Options.MaxFrame, 1 MiB by default, told to the peer in hello) end the
// connection with frame/too-large before they are read.
//
// [Handshake] opens every connection with hello and who (06 §1.2): each
// end sends a fresh 32-byte nonce, then its session note (or from: null,
// a carrier's or throwaway key, 06 §3, §4.1) and its signature over the
// challenge "minca/who/v1" ‖ its role ‖ the binding kind ‖ its nonce ‖
// the peer's nonce ‖ the channel binding. The binding is the TLS exporter
// on wss://, the two DTLS certificates on WebRTC, nothing on a plain
// loopback link; so a signature is good for one connection only, and a
// relay or a man in the middle cannot splice two. The peer's note is
// checked at now (06 §2.9, [Options].Now), made out to the key that
// signed, and that key must not be revoked ([Revocations]). The result is
// a [*Conn] whose [Peer] names the key, the account (the note's issuer)
// and the note.
//
// A Conn's Send and Recv move data frames; this package never looks inside
// them. Each Conn has one reader goroutine that holds at most one frame
// for Recv, so a slow reader slows its peer through the link's own flow
// control and nothing else; and a keepalive goroutine that pings after
// KeepAlive of silence. A connection on which no whole frame arrives for
// IdleTimeout, or one frame cannot be sent for WriteTimeout, ends. Every
// end carries an [*Error] with a stable reason code ([Codes]), sent to the
// peer in a bye when the link still works.
//
// # Endpoints
//
//   - [Server] (an http.Handler) accepts WebSocket peers, bounding
//     connections and handshakes in total and per source address ([AddrOf];
//     the oldest handshake under way makes room for a new one) and refusing
//     web pages' Origins unless listed; [Listen] serves a handler on an
//     address, plain on loopback only (and only for loopback Host names),
//     TLS with a certificate and key elsewhere, its sockets capped in total
//     and per address ([LimitListener]) and idle HTTP connections closed; [Dial] connects to ws:// (loopback) or
//     wss:// (verified against Options.RootCAs or the system roots);
//     [Redial] keeps a connection with backoff and jitter.
//   - [Relay] (an http.Handler) lets members meet in rooms: it forwards
//     signals and payloads between members of a room and introduces those
//     that asked to be introduced; per connection it bounds rooms, bytes a
//     second and bytes queued, per room members and messages queued.
//   - [RelayClient] is a member of a relay: it keeps its rooms across
//     reconnections, and opens a direct WebRTC data channel, signalled
//     through the relay, to each peer introduced to it. Its reader never
//     waits: forwards nobody takes are dropped.
//
// transport/transporttest has in-memory links with injected faults for
// the tests of code above this package.
//
// All exported functions and methods are safe for concurrent use unless
// said otherwise. Slices returned by Recv are the caller's. A large frame
// is read into a buffer of a shared pool: [Conn.RecvFrame] hands it over
// as it is, and the receiver gives it back with [Frame.Release] once done,
// so a stream of large messages is received with no copy and no
// allocation each.
package transport
