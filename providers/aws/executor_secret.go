package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/infra-iac/infra/spec"
)

// ReadSecretString returns the current value of a Secrets Manager secret by
// name or ARN, in the backend's region. The executor reads its credentials
// secret with it at cold start; the value comes back as spec.Sensitive, so
// no message can print it.
func (b *Backend) ReadSecretString(ctx context.Context, id string) (spec.Sensitive, error) {
	out, err := secretsmanager.NewFromConfig(b.cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return spec.Sensitive{}, fmt.Errorf("aws: read secret %s: %w", id, err)
	}
	if out.SecretString == nil {
		return spec.Sensitive{}, fmt.Errorf("aws: read secret %s: it holds a binary value; store a JSON object as a string", id)
	}
	return spec.NewSensitive(aws.ToString(out.SecretString)), nil
}
