package bench

import (
	"context"
	"testing"
)

func TestRunRecordsMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for a few seconds")
	}
	r, err := RunRecords(context.Background(), RecordsConfig{Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.VersionBytes < 500 || r.VersionBytes > 700 {
		t.Fatalf("typical version is %d bytes", r.VersionBytes)
	}
	if r.Verify.NsPerOp <= 0 || r.BareVerify.NsPerOp <= 0 || r.Sign.NsPerOp <= 0 || r.CanonicalHash.NsPerOp <= 0 {
		t.Fatalf("missing figures: %+v", r)
	}
	// The ratio itself depends on the machine's load and is reported, not
	// asserted; it must only be a ratio of two measurements.
	if r.VerifyRatio <= 0 {
		t.Fatalf("verify/bare ratio %.2f", r.VerifyRatio)
	}
}

func TestMedian(t *testing.T) {
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 3, 2}) != 2.5 || median(nil) != 0 {
		t.Fatal("median")
	}
}
