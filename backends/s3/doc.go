// Package s3 is an [engine.Blobs] on an S3 bucket or any S3-compatible
// server, through aws-sdk-go-v2 (DESIGN, Backends; catalog S1–S8 in the
// fault research).
//
// A store is named by a URL (see [ParseURL]):
//
//	s3://BUCKET/PREFIX?endpoint=URL&region=R&path-style=true&checksum=when_required&timeout=30s&connect-timeout=30s
//
// Its parameters:
//   - endpoint: an http(s) URL, for S3-compatible servers; default AWS.
//   - region: default the AWS configuration's, else us-east-1.
//   - path-style: true for local and most S3-compatible servers.
//   - checksum: when_supported (the SDK's default) or when_required, for
//     servers that reject the SDK's checksum headers (S6).
//   - timeout: how long a request may make no progress before it is given
//     up and retried ([Options.Timeout]; default 30s).
//   - connect-timeout: how long Open may take, retries included
//     ([Options.ConnectTimeout]; default 30s).
//
// [Options] override the URL's timeouts; see there for retries
// (MaxAttempts, MaxBackoff), object size, credentials and the logger.
//
// Guarantees:
//   - Opening a store that exists, and reading it, sends no write: the
//     probe for conditional writes waits for the first Put, so read-only
//     credentials can restore. Only Open with Create on an empty prefix,
//     and Put, write.
//   - Put never overwrites: with If-None-Match: * where the server honours
//     it (probed once, before the first write), else by a HEAD first (our
//     names are content-addressed, so the race can only write the same
//     bytes). A create whose reply was lost is retried; the 412 it then
//     meets is success when the object holds the bytes Put was given, and
//     [engine.ErrBlobExists] otherwise — also when a first attempt meets
//     412.
//   - The probe object (.minca-probe-TOKEN, outside the name grammar) is
//     deleted on every path, even when the context is cancelled; the next
//     probe sweeps any older than an hour that a killed process left.
//   - Every request — listings, reads, writes, deletes, the marker check
//     — is retried the same way, by this package (the SDK's retryer is
//     off): throttling (503 SlowDown), 5xx, connections refused, reset or
//     stalled, and bodies cut short (a cut listing too), with exponential
//     backoff and full jitter, up to MaxAttempts, each wait announced by a
//     Warn line on Options.Logger naming the endpoint, the operation and
//     the attempt. Then the error wraps [engine.ErrUnreachable].
//   - Missing credentials are found before any request is sent. They, and
//     what retrying cannot mend (403, unknown key, bad signature, expired
//     token, wrong region, a skewed clock), are [ErrConfig], whose text
//     says what to set. Neither is ever ErrUnreachable. The credential
//     chain is the SDK's, instance roles included: off EC2, finding none
//     takes a few seconds while the instance metadata service fails to
//     answer (silently; AWS_EC2_METADATA_DISABLED=true skips it).
//   - The SDK prints nothing: its messages go to Options.Logger at Debug.
//   - List pages through ListObjectsV2 however small the server's pages,
//     and returns only names in the grammar.
//   - A marker object (minca-store.json) under the prefix holds the store's
//     id; without it every operation is [engine.ErrBlobStoreGone] (checked
//     at most every 10 s).
//   - Locate ([engine.BlobLocator]) names the bucket and prefix, and the
//     endpoint of an S3-compatible server, in one canonical form without
//     credentials, region or timeouts: a store that mirrors here remembers
//     the marker's id under it, and refuses another store found in its
//     place (the prefix emptied and set up again) unless told to adopt it.
//   - Nothing is ordered by LastModified (probe sweeping aside, which
//     waits far longer than any clock skew SigV4 accepts).
//
// A Store is safe for concurrent use.
package s3
