package aws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/infra-iac/infra/state"
)

// StateBlobs keeps infra's state in S3 (--state s3://bucket/prefix): the
// lock is created with If-None-Match: *, saves carry If-Match on the ETag
// last read, so two applies never interleave.
type StateBlobs struct {
	client *s3.Client
	bucket string
	prefix string
}

var _ state.Blobs = (*StateBlobs)(nil)

// OpenStateBlobs opens s3://bucket/prefix with the backend's configuration.
func (b *Backend) OpenStateBlobs(url string) (*StateBlobs, string, error) {
	rest, ok := strings.CutPrefix(url, "s3://")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return nil, "", fmt.Errorf("--state %s: want s3://bucket/prefix", url)
	}
	return &StateBlobs{client: newS3Client(b.cfg), bucket: bucket, prefix: strings.Trim(prefix, "/")}, strings.Trim(prefix, "/"), nil
}

func (s *StateBlobs) Where() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

func (s *StateBlobs) Get(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if isCode(err, "NoSuchKey", "NotFound") {
			return nil, "", fmt.Errorf("s3://%s/%s: %w", s.bucket, key, state.ErrBlobNotFound)
		}
		return nil, "", err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", err
	}
	return data, aws.ToString(out.ETag), nil
}

func (s *StateBlobs) Put(ctx context.Context, key string, data []byte, c state.Condition) (string, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentType: aws.String("application/json")}
	if c.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if c.IfMatch != "" {
		in.IfMatch = aws.String(c.IfMatch)
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		if isCode(err, "PreconditionFailed", "ConditionalRequestConflict") {
			return "", fmt.Errorf("s3://%s/%s: %w", s.bucket, key, state.ErrPrecondition)
		}
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

func (s *StateBlobs) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil && !isCode(err, "NoSuchKey", "NotFound") {
		return err
	}
	return nil
}

func isCode(err error, codes ...string) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	for _, c := range codes {
		if api.ErrorCode() == c {
			return true
		}
	}
	return false
}
