package lifecycle

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/infra-iac/infra/engine"
	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/internal/testbin"
	"github.com/infra-iac/infra/providers"
	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
	"github.com/infra-iac/infra/state"
)

func TestMain(m *testing.M) { moto.Main(m, testbin.Remove) }

const prefix = "ci-life-"

// stage is one declaration of the AWS test fleet: the numbers a ramp
// changes, and which lines are present.
type stage struct {
	visibility, memory, timeout int
	maxCapacity                 float64
	immutable                   bool
	ports                       []int
	trimmed                     bool
}

func (s stage) document() string {
	ingress := make([]string, len(s.ports))
	for i, p := range s.ports {
		ingress[i] = fmt.Sprintf(`{"port": %d, "cidr": "10.0.0.0/8"}`, p)
	}
	rs := []string{
		fmt.Sprintf(`{"address": "aws/queues/%sjobs", "spec": {"visibilityTimeoutSec": %d}}`, prefix, s.visibility),
		fmt.Sprintf(`{"address": "aws/s3-bucket/%sarchive", "spec": {"objectLock": false, "versioning": true}}`, prefix),
		fmt.Sprintf(`{"address": "aws/secrets/%sbase", "spec": {"value": {"fromEnv": "LIFE_PASSWORD"}}}`, prefix),
		fmt.Sprintf(`{"address": "aws/postgres/%sdb", "spec": {"masterUsername": "dbadmin", "masterPasswordSecret": {"ref": "aws/secrets/%sbase"}, "minCapacity": 0.5, "maxCapacity": %g}}`, prefix, prefix, s.maxCapacity),
		fmt.Sprintf(`{"address": "aws/secrets/%surl", "spec": {"value": {"composed": {"format": "postgres://dbadmin:{0}@{1}/main", "args": [{"secretValue": "aws/secrets/%sbase"}, {"observed": "aws/postgres/%sdb", "attribute": "endpoint"}]}}}}`, prefix, prefix, prefix),
		fmt.Sprintf(`{"address": "aws/image-registry/%sapp", "spec": {"immutableTags": %v}}`, prefix, s.immutable),
		fmt.Sprintf(`{"address": "aws/iam/%sdeployer", "spec": {"policies": ["arn:aws:iam::aws:policy/ReadOnlyAccess"]}}`, prefix),
		fmt.Sprintf(`{"address": "aws/security-group/%sweb", "spec": {"description": "web tier", "ingress": [%s]}}`, prefix, strings.Join(ingress, ", ")),
		fmt.Sprintf(`{"address": "aws/aws-instance/%sweb-1", "spec": {"imageId": "latest", "instanceType": "t3.micro", "securityGroup": {"ref": "aws/security-group/%sweb"}}}`, prefix, prefix),
		fmt.Sprintf(`{"address": "aws/compute/%sapi", "spec": {"image": "123456789012.dkr.ecr.eu-west-3.amazonaws.com/app:1", "executionRole": "arn:aws:iam::123456789012:role/%sfn", "memoryMb": %d, "timeoutSec": %d}}`, prefix, prefix, s.memory, s.timeout),
	}
	if s.trimmed {
		rs = append(rs, fmt.Sprintf(`{"address": "aws/queues/%sevents", "spec": {}}`, prefix))
	} else {
		rs = append(rs,
			fmt.Sprintf(`{"address": "aws/queues/%smail", "spec": {}}`, prefix),
			fmt.Sprintf(`{"address": "aws/object-store/%sassets", "spec": {"versioning": true, "tags": {"team": "web"}}}`, prefix))
	}
	return `{"apiVersion": "infra/v1", "fleet": "lifecycle", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": [` +
		strings.Join(rs, ",\n") + `]}`
}

const emptyDocument = `{"apiVersion": "infra/v1", "fleet": "lifecycle", "accounts": {"aws": "123456789012"}, "placement": {"aws": "eu-west-3"}, "resources": []}`

func TestAWSFiveStages(t *testing.T) {
	srv := moto.Fresh(t)
	if err := srv.Config(`{"lambda":{"use_docker":false}}`); err != nil {
		t.Fatal(err)
	}
	os.Setenv("LIFE_PASSWORD", "life-password-1")
	ctx := context.Background()
	b, err := awsprovider.New(ctx, awsprovider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The function's execution role is not a kind infra manages; it is the
	// account's, made here.
	if _, err := iam.NewFromConfig(b.Config()).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(prefix + "fn"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenFile(t.TempDir(), "lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Backends: map[spec.Provider]providers.Backend{spec.AWS: b}})

	full := stage{visibility: 30, memory: 256, timeout: 30, maxCapacity: 2, ports: []int{443}}
	up := stage{visibility: 120, memory: 512, timeout: 60, maxCapacity: 4, immutable: true, ports: []int{443, 8443}}
	trimmed := full
	trimmed.trimmed = true
	RunStages(t, e, store, []Stage{
		{"full", full.document(), engine.Summary{Create: 12}, 12},
		{"ramp-up", up.document(), engine.Summary{Update: 5}, 12},
		{"ramp-down", full.document(), engine.Summary{Update: 5}, 12},
		{"trimmed", trimmed.document(), engine.Summary{Create: 1, Delete: 2}, 11},
		{"empty", emptyDocument, engine.Summary{Delete: 11}, 0},
	})
	// The audit: the account itself, not the ledger, has nothing left.
	for _, k := range awsprovider.Kinds() {
		d, _ := b.Driver(k)
		rs, err := d.List(ctx, "eu-west-3")
		if err != nil {
			t.Fatalf("audit %s: %v", k, err)
		}
		for _, r := range rs {
			if k == spec.IAMRole && r.Name == prefix+"fn" {
				continue // the execution role made above, outside the fleet
			}
			if strings.HasPrefix(r.Name, prefix) {
				t.Errorf("left behind: aws/%s/%s", k, r.Name)
			}
		}
	}
}
