package executor

import (
	"testing"

	"github.com/infra-iac/infra/executor/executortest"
	"github.com/infra-iac/infra/internal/moto"
)

// TestMain shares one moto_server and one build of bootstrap among the
// package's tests, and cleans both up.
func TestMain(m *testing.M) { moto.Main(m, executortest.Cleanup) }
