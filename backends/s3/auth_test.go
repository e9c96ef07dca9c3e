package s3

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/minca-go/minca/engine"
)

// noAWSEnv empties the environment the AWS credential chain reads, and
// points its files at nothing.
func noAWSEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
		"AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
}

// No credentials anywhere: Open says what to set, in one line, before
// sending anything, and nothing else is printed — with the instance
// metadata service off, and with it on but not there.
func TestMissingCredentials(t *testing.T) {
	for _, imds := range []string{"disabled", "unreachable"} {
		t.Run(imds, func(t *testing.T) {
			noAWSEnv(t)
			if imds == "disabled" {
				t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			} else {
				t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
				// Port 1, where nothing listens: a port freed by closing
				// a listener may be the fake server's started next.
				t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1")
			}
			f, ep := fakeS3(t)
			var logs logBuffer
			var err error
			start := time.Now()
			stderr := captureStderr(t, func() {
				_, err = Open(context.Background(), fakeURL(ep, "x", ""), &Options{Logger: logs.logger()})
			})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "no AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE") {
				t.Fatalf("open without credentials: %v", err)
			}
			if !errors.Is(err, ErrConfig) || errors.Is(err, engine.ErrUnreachable) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line, ErrConfig, not ErrUnreachable: %v", err)
			}
			if n := f.Requests.Load(); n != 0 {
				t.Fatalf("%d requests sent without credentials", n)
			}
			if stderr != "" || logs.String() != "" {
				t.Fatalf("printed: stderr %q, log %q", stderr, logs.String())
			}
			if took > 10*time.Second {
				t.Fatalf("finding no credentials took %v", took)
			}
			t.Logf("no credentials found in %v", took)
		})
	}
}

// A credential service that does not answer before ConnectTimeout (a
// slow instance metadata service, a machine too busy) is unreachable, not
// missing credentials: exit 4, try again, rather than exit 2, fix it.
func TestCredentialsTimeOut(t *testing.T) {
	_, ep := fakeS3(t)
	slow := aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		<-ctx.Done()
		return aws.Credentials{}, ctx.Err()
	})
	start := time.Now()
	_, err := Open(context.Background(), fakeURL(ep, "x", ""), &Options{Credentials: slow, ConnectTimeout: 300 * time.Millisecond})
	if !errors.Is(err, engine.ErrUnreachable) || errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "connect-timeout") {
		t.Fatalf("credentials not found in time: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	// Cancelled is only that.
	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := Open(cctx, fakeURL(ep, "x", ""), &Options{Credentials: slow}); !errors.Is(err, context.Canceled) || errors.Is(err, engine.ErrUnreachable) || errors.Is(err, ErrConfig) {
		t.Fatalf("cancelled while finding credentials: %v", err)
	}
}

// Credentials the server refuses are a configuration error naming what
// to fix, at once, not unreachable after retries.
func TestRefusedCredentials(t *testing.T) {
	for _, code := range []string{"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"} {
		t.Run(code, func(t *testing.T) {
			f, ep := fakeS3(t)
			hook := func(w http.ResponseWriter, r *http.Request) bool {
				s3Error(w, http.StatusForbidden, code)
				return true
			}
			f.hook.Store(&hook)
			_, err := Open(context.Background(), fakeURL(ep, "x", ""), testOptions(true))
			if !errors.Is(err, ErrConfig) || errors.Is(err, engine.ErrUnreachable) {
				t.Fatalf("open with refused credentials: %v", err)
			}
			want := map[string]string{"InvalidAccessKeyId": "check AWS_ACCESS_KEY_ID", "SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY", "AccessDenied": "access denied"}[code]
			if msg := err.Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "403 "+code) || strings.Contains(msg, "\n") {
				t.Fatalf("want one line with %q: %q", want, msg)
			}
			if n := f.Requests.Load(); n != 1 {
				t.Fatalf("%d requests; a refusal is not retried", n)
			}
		})
	}
}

// With read-only credentials, the first Put fails at its probe as a
// configuration error, once, without a retry.
func TestReadOnlyPut(t *testing.T) {
	ctx := context.Background()
	f, ep := fakeS3(t)
	fill(t, openFake(t, ep, "ro", "", true), 1)
	f.readOnly.Store(true)
	s := openFake(t, ep, "ro", "", false)
	f.resetMethods()
	err := s.Put(ctx, name(2), body(2))
	if !errors.Is(err, ErrConfig) || errors.Is(err, engine.ErrUnreachable) || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("put with read-only credentials: %v", err)
	}
	if n := f.method(http.MethodPut); n != 1 {
		t.Fatalf("%d PUTs; a refusal is not retried", n)
	}
}

// Options are validated: a negative value is an error, not a default.
func TestOptionsValidate(t *testing.T) {
	_, ep := fakeS3(t)
	for _, o := range []Options{{MaxAttempts: -1}, {MaxBackoff: -1}, {Timeout: -time.Second}, {ConnectTimeout: -time.Second}, {MaxObject: -1}} {
		if _, err := Open(context.Background(), fakeURL(ep, "x", ""), &o); err == nil {
			t.Errorf("accepted %+v", o)
		}
	}
	loc, _ := ParseURL(fakeURL(ep, "x", "timeout=5s&connect-timeout=7s"))
	o, err := resolve(&Options{Timeout: 2 * time.Second}, loc)
	if err != nil || o.Timeout != 2*time.Second || o.ConnectTimeout != 7*time.Second || o.MaxAttempts != defaultMaxAttempts {
		t.Fatalf("an option overrides the URL, the URL the default: %+v %v", o, err)
	}
}
