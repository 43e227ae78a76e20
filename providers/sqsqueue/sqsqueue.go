// Package sqsqueue is a queue on the SQS protocol, which AWS SQS and
// Scaleway Queues both speak: the name a queue URL ends in, the attributes
// a create or an update sends and what a read's attributes report. It
// lives under providers so neither provider imports the other; each keeps
// its own clients, retries, tags and ownership.
package sqsqueue

import (
	"math"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/infra-iac/infra/providers"
)

const visibilityField = providers.QueuesVisibilityTimeoutSec

// Name is the last path segment of a queue URL.
func Name(u string) string {
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		return path.Base(p.Path)
	}
	return u[strings.LastIndex(u, "/")+1:]
}

// ReadAttributes are the attributes a read asks for: what the spec holds,
// and, in the same call, the settings it does not (unmodelled).
func ReadAttributes() []sqstypes.QueueAttributeName {
	out := []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameVisibilityTimeout,
		sqstypes.QueueAttributeNameQueueArn, sqstypes.QueueAttributeNameCreatedTimestamp}
	for _, u := range unmodelled {
		out = append(out, u.name)
	}
	return out
}

// unmodelled are the queue settings the spec has no field for, with the
// value SQS gives a queue that never set them.
var unmodelled = []struct {
	name sqstypes.QueueAttributeName
	dflt string
}{
	{sqstypes.QueueAttributeNameDelaySeconds, "0"},
	{sqstypes.QueueAttributeNameMaximumMessageSize, "262144"},
	{sqstypes.QueueAttributeNameMessageRetentionPeriod, "345600"},
	{sqstypes.QueueAttributeNameReceiveMessageWaitTimeSeconds, "0"},
	{sqstypes.QueueAttributeNameRedrivePolicy, ""},
	{sqstypes.QueueAttributeNameKmsMasterKeyId, ""},
}

// CreateAttributes are a create's attributes: the visibility timeout the
// target sets, and FIFO for a name ending in ".fifo", as SQS requires.
func CreateAttributes(t providers.Target) map[string]string {
	attrs := map[string]string{}
	if v, ok := providers.FieldNumber(t.Fields, visibilityField); ok {
		attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(int(v))
	}
	if strings.HasSuffix(t.Name, ".fifo") {
		attrs[string(sqstypes.QueueAttributeNameFifoQueue)] = "true"
	}
	return attrs
}

// VisibilityUpdate is the attribute an update of visibilityTimeoutSec
// sets.
func VisibilityUpdate(fields map[string]any) (map[string]string, error) {
	v, ok := providers.FieldNumber(fields, visibilityField)
	if !ok {
		return nil, providers.Errorf(providers.InvalidArgument, "visibilityTimeoutSec is not a number")
	}
	return map[string]string{string(sqstypes.QueueAttributeNameVisibilityTimeout): strconv.Itoa(int(v))}, nil
}

// Report fills in what a read's attributes tell: the visibility timeout,
// the creation time, and the settings the spec does not hold, where they
// differ from a new queue's. res.Fields must be set.
func Report(res *providers.Resource, attrs map[string]string) {
	for _, u := range unmodelled {
		if v, ok := attrs[string(u.name)]; ok && v != u.dflt {
			res.Unmodelled = append(res.Unmodelled, string(u.name)+"="+v)
		}
	}
	if v, err := strconv.Atoi(attrs[string(sqstypes.QueueAttributeNameVisibilityTimeout)]); err == nil {
		res.Fields[visibilityField] = float64(v)
	}
	// CreatedTimestamp is epoch seconds; some endpoints send a fraction.
	if s, err := strconv.ParseFloat(attrs[string(sqstypes.QueueAttributeNameCreatedTimestamp)], 64); err == nil {
		sec, frac := math.Modf(s)
		res.Created = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	}
}
