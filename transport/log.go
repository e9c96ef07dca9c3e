package transport

import (
	"log"
	"log/slog"
)

// slogErrorLog sends net/http's own complaints (a TLS handshake from a
// port scanner) to slog at debug level rather than to stderr.
func slogErrorLog() *log.Logger {
	return slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug)
}
