package scaleway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	mnq "github.com/scaleway/scaleway-sdk-go/api/mnq/v1beta1"
	secret "github.com/scaleway/scaleway-sdk-go/api/secret/v1beta1"
	"github.com/scaleway/scaleway-sdk-go/scw"

	"github.com/infra-iac/infra/providers"
)

// The SQS data plane signs with a credential minted by the Messaging and
// Queuing API, whose secret is shown once. Minting one per run churned
// credentials and a lost mint blocked the next (a predecessor's bug 13), so
// the credential is minted once per project and region, kept in memory,
// and shared through Secret Manager: a secret named sqsCredentialSecret,
// tagged infra-internal=sqs-credential, in the same project and region.
const (
	sqsCredentialName   = "infra"
	sqsCredentialSecret = "infra-sqs-credential"
	sqsCredentialTag    = "infra-internal=sqs-credential"
)

// sqsCredential is a usable SQS client for one region.
type sqsCredential struct {
	client *sqs.Client
	// fresh until this time: the data plane may still refuse it (403 or
	// 404 for a while after a mint or an activation).
	freshUntil time.Time
}

// errQueuesOff says Queues is not activated in the project: nothing can
// exist, and planning must not activate it.
var errQueuesOff = errors.New("queues are not activated in this project")

type storedCredential struct {
	ID        string `json:"id"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

// sqsClient returns the SQS client for region. With activate false (a
// listing, a read) it never activates Queues and returns errQueuesOff when
// they are off; a create activates them.
func (b *Backend) sqsClient(ctx context.Context, region string, activate bool) (*sqsCredential, error) {
	c, err := b.credential(ctx, region, activate)
	if errorCode(err) == providers.NotFound {
		// A 404 here is the credential's (its secret, a version of it) or
		// the project's, never a queue's. Returned as it is, it would read
		// as the queue asked about being absent, or deleted.
		return nil, fmt.Errorf("%w: %w", providers.Errorf(providers.Conflict,
			"scaleway: Queues in %s: the SQS credential cannot be had, so no queue can be read or deleted", region), err)
	}
	return c, err
}

// credential is sqsClient's work: the memo, or Queues' endpoint and the
// stored (else a newly minted) credential.
func (b *Backend) credential(ctx context.Context, region string, activate bool) (*sqsCredential, error) {
	project, _, err := b.scope(ctx)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if c, ok := b.sqs[region]; ok {
		b.mu.Unlock()
		return c, nil
	}
	b.mu.Unlock()
	api := mnq.NewSqsAPI(b.client)
	info, err := b.sqsInfo(ctx, api, region, project)
	if err != nil {
		return nil, err
	}
	fresh := time.Time{}
	if info.Status != mnq.SqsInfoStatusEnabled {
		if !activate {
			return nil, errQueuesOff
		}
		b.progress("scaleway: activating Queues in project %s in %s", project, region)
		_, err := api.ActivateSqs(&mnq.SqsAPIActivateSqsRequest{Region: scw.Region(region), ProjectID: project}, scw.WithContext(ctx))
		if err != nil && errorCode(err) != providers.AlreadyExists {
			return nil, err
		}
		if info, err = b.sqsInfoSettled(ctx, api, region, project); err != nil {
			return nil, err
		}
		fresh = time.Now().Add(b.opts.Settle)
	}
	stored, err := b.storedSQSCredential(ctx, region, project)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		if stored, err = b.mintSQSCredential(ctx, api, region, project); err != nil {
			return nil, err
		}
		fresh = time.Now().Add(b.opts.Settle)
	}
	cfg := awsConfig(region, stored.AccessKey, stored.SecretKey, b)
	endpoint := info.SqsEndpointURL
	c := &sqsCredential{freshUntil: fresh, client: sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })}
	b.mu.Lock()
	defer b.mu.Unlock()
	if have, ok := b.sqs[region]; ok {
		return have, nil
	}
	b.sqs[region] = c
	return c, nil
}

func (b *Backend) sqsInfo(ctx context.Context, api *mnq.SqsAPI, region, project string) (*mnq.SqsInfo, error) {
	return api.GetSqsInfo(&mnq.SqsAPIGetSqsInfoRequest{Region: scw.Region(region), ProjectID: project}, scw.WithContext(ctx))
}

// sqsInfoSettled waits for Queues to read as enabled after an activation:
// sqs-info answers 403 for a while (recorded).
func (b *Backend) sqsInfoSettled(ctx context.Context, api *mnq.SqsAPI, region, project string) (*mnq.SqsInfo, error) {
	deadline := time.Now().Add(b.opts.Settle)
	for {
		info, err := b.sqsInfo(ctx, api, region, project)
		if err == nil && info.Status == mnq.SqsInfoStatusEnabled {
			return info, nil
		}
		if err != nil && errorCode(err) != providers.PermissionDenied && errorCode(err) != providers.NotFound {
			return nil, err
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("queues still %s", info.Status)
			}
			return nil, fmt.Errorf("scaleway: Queues did not become usable in %s within %s: %w", region, b.opts.Settle, err)
		}
		if err := sleep(ctx, b.opts.WaitInterval); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// storedSQSCredential reads the shared credential from Secret Manager, or
// nil when there is none.
func (b *Backend) storedSQSCredential(ctx context.Context, region, project string) (*storedCredential, error) {
	api := secret.NewAPI(b.client)
	name := sqsCredentialSecret
	ss, err := allPages(ctx, "queues", region, func(page int32) ([]*secret.Secret, uint64, error) {
		out, err := api.ListSecrets(&secret.ListSecretsRequest{Region: scw.Region(region), ProjectID: &project, Name: &name,
			Path: ptr("/"), Page: &page, PageSize: &b.opts.PageSize}, scw.WithContext(ctx))
		if err != nil {
			return nil, 0, err
		}
		return out.Secrets, out.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		if s.DeletionRequestedAt != nil || s.VersionCount == 0 {
			continue
		}
		v, err := api.AccessSecretVersion(&secret.AccessSecretVersionRequest{Region: scw.Region(region), SecretID: s.ID,
			Revision: "latest_enabled"}, scw.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("scaleway: read the SQS credential from secret %s (enable a version of it, or delete it and infra mints a new one): %w",
				sqsCredentialSecret, err)
		}
		var c storedCredential
		if err := json.Unmarshal(v.Data, &c); err != nil || c.AccessKey == "" || c.SecretKey == "" {
			return nil, fmt.Errorf("scaleway: secret %s does not hold an SQS credential; delete it and infra mints a new one", sqsCredentialSecret)
		}
		return &c, nil
	}
	return nil, nil
}

// mintSQSCredential creates the credential and stores it before use, so
// that a crash after the mint does not lose its secret.
func (b *Backend) mintSQSCredential(ctx context.Context, api *mnq.SqsAPI, region, project string) (*storedCredential, error) {
	b.progress("scaleway: minting the SQS credential %q in project %s in %s", sqsCredentialName, project, region)
	yes := true
	cred, err := api.CreateSqsCredentials(&mnq.SqsAPICreateSqsCredentialsRequest{Region: scw.Region(region), ProjectID: project,
		Name: sqsCredentialName, Permissions: &mnq.SqsPermissions{CanPublish: &yes, CanReceive: &yes, CanManage: &yes}}, scw.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	c := &storedCredential{ID: cred.ID, AccessKey: cred.AccessKey, SecretKey: cred.SecretKey}
	data, _ := json.Marshal(c)
	sapi := secret.NewAPI(b.client)
	s, err := sapi.CreateSecret(&secret.CreateSecretRequest{Region: scw.Region(region), ProjectID: project, Name: sqsCredentialSecret,
		Tags: []string{sqsCredentialTag}, Type: secret.SecretTypeOpaque, Path: ptr("/"),
		Description: ptr("the SQS credential infra signs queue calls with; infra mints a new one if this is deleted")}, scw.WithContext(ctx))
	if err == nil {
		_, err = sapi.CreateSecretVersion(&secret.CreateSecretVersionRequest{Region: scw.Region(region), SecretID: s.ID, Data: data}, scw.WithContext(ctx))
	}
	if err != nil {
		// Unstored, the credential is useless to the next run: remove it.
		_ = api.DeleteSqsCredentials(&mnq.SqsAPIDeleteSqsCredentialsRequest{Region: scw.Region(region), SqsCredentialsID: cred.ID}, scw.WithContext(ctx))
		return nil, fmt.Errorf("scaleway: store the SQS credential in Secret Manager: %w", err)
	}
	return c, nil
}

// retryFresh runs call, retrying the refusals a just-minted credential or
// a just-activated project meets (403, 404) until the credential is no
// longer fresh.
func (b *Backend) retryFresh(ctx context.Context, c *sqsCredential, call func() error) error {
	for {
		err := call()
		if err == nil || time.Now().After(c.freshUntil) {
			return err
		}
		if code := errorCode(err); code != providers.PermissionDenied && !(code == providers.NotFound && isAuthNotFound(err)) {
			return err
		}
		if err := sleep(ctx, b.opts.WaitInterval); err != nil {
			return err
		}
	}
}

// isAuthNotFound: an unknown access key may answer 404 rather than 403,
// but a missing queue is also NotFound; only the former is retried.
func isAuthNotFound(err error) bool {
	var ae interface{ ErrorCode() string }
	return errors.As(err, &ae) && ae.ErrorCode() != "QueueDoesNotExist" && ae.ErrorCode() != "AWS.SimpleQueueService.NonExistentQueue"
}
