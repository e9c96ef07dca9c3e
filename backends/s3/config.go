package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/minca-go/minca/engine"
)

// noCredentials is what to say when the chain finds nothing.
const noCredentials = "no AWS credentials: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE"

// client loads the AWS configuration and makes the S3 client, checking
// first that there are credentials: without them nothing is sent.
//
// The SDK's messages go to the Logger at Debug (by default the SDK prints
// them on stderr: "failed to discard remaining HTTP response body", IMDS
// fallbacks). The instance metadata service stays where the SDK puts it —
// last in the chain, off when AWS_EC2_METADATA_DISABLED=true — so
// instance roles keep working on EC2; elsewhere it fails quietly in a few
// seconds (4 s measured with the service refusing connections; its
// client dials with a 250 ms timeout and retries), bounded in any case by
// ConnectTimeout through ctx.
func client(ctx context.Context, loc Location, o *Options) (*s3.Client, error) {
	lo := []func(*config.LoadOptions) error{
		config.WithLogger(sdkLogger{o.Logger}),
	}
	if loc.Region != "" {
		lo = append(lo, config.WithRegion(loc.Region))
	}
	if o.Credentials != nil {
		lo = append(lo, config.WithCredentialsProvider(o.Credentials))
	}
	switch loc.Checksum {
	case "when_required":
		lo = append(lo, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	case "when_supported":
		lo = append(lo, config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenSupported),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenSupported))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.Canceled) {
		return nil, &problem{msg: "the AWS configuration was not loaded within the time to connect (connect-timeout): " + describe(err), kind: engine.ErrUnreachable, err: err}
	}
	if err != nil {
		var pe config.SharedConfigProfileNotExistError
		if errors.As(err, &pe) {
			return nil, &problem{msg: fmt.Sprintf("AWS profile %q not found: set AWS_PROFILE to a profile of ~/.aws/config, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", pe.Profile), kind: ErrConfig, err: err}
		}
		return nil, &problem{msg: "AWS configuration: " + describe(err), kind: ErrConfig, err: err}
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers mostly ignore it
	}
	if cfg.Credentials == nil {
		return nil, &problem{msg: noCredentials, kind: ErrConfig, err: errors.New("no credential provider")}
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			return nil, context.Cause(ctx)
		}
		if ctx.Err() != nil {
			// Out of time (ConnectTimeout) while the chain looked: a
			// credential service that did not answer, or a machine too
			// busy; not proof that there are none.
			return nil, &problem{msg: "no AWS credentials found within the time to connect (connect-timeout): " + describe(err), kind: engine.ErrUnreachable, err: err}
		}
		msg := noCredentials
		if p := profile(); p != "" {
			msg = fmt.Sprintf("no AWS credentials from profile %q (%s): fix the profile, or set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", p, describe(err))
		}
		return nil, &problem{msg: msg, kind: ErrConfig, err: err}
	}
	var hc aws.HTTPClient = awshttp.NewBuildableClient()
	if o.HTTPClient != nil {
		hc = o.HTTPClient
	}
	return s3.NewFromConfig(cfg, func(so *s3.Options) {
		if loc.Endpoint != "" {
			so.BaseEndpoint = aws.String(loc.Endpoint)
		}
		so.UsePathStyle = so.UsePathStyle || loc.PathStyle
		// Requests are retried by Store.do, one way for all of them; the
		// credential services keep the SDK's retryer.
		so.Retryer = aws.NopRetryer{}
		so.HTTPClient = watchdog{next: hc, timeout: o.Timeout}
		// Segments carry their own checksum, verified on every read; the
		// SDK's note that a server sent none is noise.
		so.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}

// profile is the named AWS profile, if any.
func profile() string {
	if p := os.Getenv("AWS_PROFILE"); p != "" {
		return p
	}
	return os.Getenv("AWS_DEFAULT_PROFILE")
}

// sdkLogger passes the SDK's messages to a slog.Logger at Debug.
type sdkLogger struct{ l *slog.Logger }

func (a sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	a.l.Debug("aws sdk: "+fmt.Sprintf(format, v...), "class", string(c))
}
