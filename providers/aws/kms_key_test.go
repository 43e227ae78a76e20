package aws

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

func TestKMSKeyConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	d, _ := b.Driver(spec.KMSKey)
	d.(*kmsKeys).pageSize = 2
	conformance(t, b, srv, drivertest.Case{
		Kind:   spec.KMSKey,
		Create: map[string]any{"description": "conformance key"},
		Updates: []map[string]any{
			{"description": "changed"},
			{"enableKeyRotation": true},
			{"enableKeyRotation": false, "description": ""},
		},
		Replaces: []map[string]any{
			{"keySpec": "RSA_2048", "keyUsage": "SIGN_VERIFY"},
			{"keySpec": "HMAC_256", "keyUsage": "GENERATE_VERIFY_MAC"},
		},
		OddNames: []string{"Mixed_Case.dots and spaces", strings.Repeat("k", 256)},
		PageSize: 2,
	})
}

func kmsTarget(name string, fields map[string]any) providers.Target {
	return kindTarget(spec.KMSKey, name, fields)
}

// What CreateKey, EnableKeyRotation or ScheduleKeyDeletion would refuse is
// refused before any call, naming the key.
func TestKMSKeyRefusesBadDeclarationsBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.KMSKey)
	for why, f := range map[string]map[string]any{
		"unknown usage":                  {"keyUsage": "ENCRYPT"},
		"unknown spec":                   {"keySpec": "AES_256"},
		"symmetric key that signs":       {"keyUsage": "SIGN_VERIFY"},
		"HMAC spec that encrypts":        {"keySpec": "HMAC_256"},
		"MAC usage on an RSA key":        {"keySpec": "RSA_2048", "keyUsage": "GENERATE_VERIFY_MAC"},
		"rotation of an RSA key":         {"keySpec": "RSA_2048", "enableKeyRotation": true},
		"window under 7 days":            {"deletionWindowDays": 6.0},
		"window over 30 days":            {"deletionWindowDays": 31.0},
		"fractional window":              {"deletionWindowDays": 7.5},
		"a Name tag other than the name": {"tags": map[string]any{"Name": "other"}},
	} {
		_, err := d.Create(context.Background(), kmsTarget("k1", f))
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "aws/kms-key: k1:") {
			t.Errorf("%s: Create = %v, want invalid argument naming the key", why, err)
		}
	}
	if err := d.Delete(context.Background(), kmsTarget("k1", map[string]any{"deletionWindowDays": 3.0})); errorCode(err) != providers.InvalidArgument {
		t.Errorf("Delete with a 3-day window = %v, want invalid argument", err)
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// A delete schedules the key's deletion with the declared window (30 days
// for an orphan), and the key pending deletion is absent: not read, not
// listed.
func TestKMSKeyDeleteSchedulesDeletion(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.KMSKey)
	ctx := context.Background()
	c := kms.NewFromConfig(inTestRegion(b))
	for _, tc := range []struct {
		name   string
		fields map[string]any
		days   int
	}{{"declared", map[string]any{"deletionWindowDays": 7.0}, 7}, {"orphan", nil, 30}} {
		res, err := d.Create(ctx, kmsTarget(tc.name, nil))
		if err != nil {
			t.Fatal(err)
		}
		tg := providers.Target{Name: tc.name, Region: testRegion, Owner: "fleet"}
		if tc.fields != nil {
			tg = kmsTarget(tc.name, tc.fields)
		}
		before := time.Now()
		if err := d.Delete(ctx, tg); err != nil {
			t.Fatal(err)
		}
		out, err := c.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(res.Attributes["keyId"])})
		if err != nil {
			t.Fatal(err)
		}
		m := out.KeyMetadata
		if m.KeyState != kmstypes.KeyStatePendingDeletion {
			t.Errorf("%s: key state %s after delete, want PendingDeletion", tc.name, m.KeyState)
		}
		if m.DeletionDate == nil || m.DeletionDate.Sub(before) < time.Duration(tc.days)*24*time.Hour-time.Hour ||
			m.DeletionDate.Sub(before) > time.Duration(tc.days)*24*time.Hour+time.Hour {
			t.Errorf("%s: deletion date %v, want %d days from now", tc.name, m.DeletionDate, tc.days)
		}
		if _, err := d.Read(ctx, testRegion, tc.name); errorCode(err) != providers.NotFound {
			t.Errorf("%s: Read of a key pending deletion = %v, want not found", tc.name, err)
		}
		if err := d.Delete(ctx, tg); errorCode(err) != providers.NotFound {
			t.Errorf("%s: a second delete = %v, want not found", tc.name, err)
		}
	}
	if rs, err := d.List(ctx, testRegion); err != nil || len(rs) != 0 {
		t.Errorf("List = %v, %v; want nothing: both keys are pending deletion", drivertest.Names(rs), err)
	}
}

// Two live keys with one Name tag are a conflict naming both ids, never a
// guess.
func TestKMSKeyTwoOfOneNameConflict(t *testing.T) {
	b, _ := newTestBackend(t)
	d, _ := b.Driver(spec.KMSKey)
	ctx := context.Background()
	var ids []string
	for range 2 {
		res, err := d.Create(ctx, kmsTarget("twin", nil))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Attributes["keyId"])
	}
	_, err := d.Read(ctx, testRegion, "twin")
	if errorCode(err) != providers.Conflict || !strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1]) {
		t.Errorf("Read = %v (code %s), want a conflict naming %v", err, errorCode(err), ids)
	}
}
