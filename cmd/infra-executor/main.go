// Command infra-executor is infra as a Lambda function: built as bootstrap
// for the provided.al2023 runtime, it serves the executor protocol
// (docs/executor.md) with the state in S3.
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o bootstrap ./cmd/infra-executor
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/infra-iac/infra/executor"
)

func main() {
	lambda.Start(executor.New(executor.FromEnv(os.Getenv, os.Stderr)).Handle)
}
