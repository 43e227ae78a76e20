package aws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// fifoIsTheName: a topic's fifo follows its name, which a replacement
// keeps, so no replace under one address can change it alone.
var fifoIsTheName = map[string]string{"fifo": "follows the name (.fifo), which a replacement keeps; a mismatch is refused before any call " +
	"(TestSNSTopicRefusesBeforeAnyCall)"}

func TestSNSTopicConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	fifoName := func(suffix string) string {
		return "ct" + strings.ReplaceAll(suffix, "-", "") + randomTestSuffix() + ".fifo"
	}
	conformance(t, b, srv, drivertest.Case{
		Kind:     spec.SNSTopic,
		Create:   map[string]any{"displayName": "Orders"},
		Updates:  []map[string]any{{"displayName": "Orders, renamed"}, {"displayName": ""}},
		OddNames: []string{"Mixed_Case-0", strings.Repeat("t", 256)},
		Untested: map[string]string{"contentBasedDeduplication": "FIFO topics only: the fifo case updates it", "fifo": fifoIsTheName["fifo"]},
	}, drivertest.Case{
		Name:     "sns-topic-fifo",
		Kind:     spec.SNSTopic,
		NewName:  fifoName,
		Create:   map[string]any{"fifo": true, "contentBasedDeduplication": false},
		Updates:  []map[string]any{{"contentBasedDeduplication": true}, {"displayName": "Ordered"}},
		OddNames: []string{strings.Repeat("f", 251) + ".fifo"},
		Untested: fifoIsTheName,
	})
}

// randomTestSuffix is a short random suffix for names a case makes itself.
func randomTestSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// A name SNS refuses, a fifo that disagrees with the name and a
// deduplication setting on a standard topic are refused before any call.
func TestSNSTopicRefusesBeforeAnyCall(t *testing.T) {
	var calls callCounter
	b, _ := newTestBackend(t, calls.option())
	d, _ := b.Driver(spec.SNSTopic)
	for _, c := range []struct {
		name   string
		fields map[string]any
		says   string
	}{
		{"has.dots", nil, "1 to 256"},
		{strings.Repeat("t", 257), nil, "1 to 256"},
		{"orders", map[string]any{"fifo": true}, "ends in .fifo"},
		{"orders.fifo", map[string]any{"fifo": false}, "ends in .fifo"},
		{"orders", map[string]any{"contentBasedDeduplication": true}, "FIFO topics only"},
	} {
		_, err := d.Create(context.Background(), providers.Target{Name: c.name, Region: testRegion, Owner: "fleet", Fields: c.fields})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Create %.20s %v = %v (code %s), want invalid argument saying %q", c.name, c.fields, err, errorCode(err), c.says)
		}
	}
	if n := calls.total(); n != 0 {
		t.Errorf("%d calls were made", n)
	}
}

// CreateTopic answers an existing topic's ARN: a create of a name another
// made must neither adopt nor tag it.
func TestSNSTopicCreateDoesNotTakeAnotherTopic(t *testing.T) {
	b, _ := newTestBackend(t)
	c := sns.NewFromConfig(b.Config(), func(o *sns.Options) { o.Region = testRegion })
	for name, tags := range map[string]map[string]string{"untagged": nil, "theirs": {spec.OwnershipTagKey: "billing", "team": "x"}} {
		if _, err := c.CreateTopic(context.Background(), &sns.CreateTopicInput{Name: aws.String(name), Tags: snsTags(tags)}); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := b.Driver(spec.SNSTopic)
	for _, name := range []string{"untagged", "theirs"} {
		_, err := d.Create(context.Background(), providers.Target{Name: name, Region: testRegion, Owner: "shop", Fields: map[string]any{}})
		if errorCode(err) != providers.AlreadyExists {
			t.Errorf("Create %s = %v (code %s), want already exists", name, err, errorCode(err))
		}
		res, err := d.Read(context.Background(), testRegion, name)
		if err != nil {
			t.Fatal(err)
		}
		if res.Owner == "shop" {
			t.Errorf("%s: the create tagged it for shop", name)
		}
	}
}
