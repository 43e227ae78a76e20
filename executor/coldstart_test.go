package executor_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infra-iac/infra/executor"
	"github.com/infra-iac/infra/executor/executortest"
)

// BenchmarkColdStart starts the bootstrap under the runtime emulator once
// per iteration and sends one request, reporting the init phase as the
// emulator measures it (init-ms, the goal is under 200) and the time from
// starting the process to the first response (first-response-ms). The
// request needs no cloud: it measures what every cold start pays.
//
//	go test ./executor -run '^$' -bench ColdStart -benchtime 10x
//
// "with-secret" also configures the credentials secret, whose read starts
// at init and is awaited by the request.
func BenchmarkColdStart(b *testing.B) {
	srv, env := lambdaEnv(b)
	b.Run("plain", func(b *testing.B) { coldStarts(b, env, `{"operation": "sweep"}`) })
	putCredentials(b, srv, "infra/bench", `{"SCW_SECRET_KEY": "x"}`)
	withSecret := append(append([]string{}, env...), executor.EnvCredentialsSecret+"=infra/bench")
	// plan without a document waits for the secret, then fails at once.
	b.Run("with-secret", func(b *testing.B) { coldStarts(b, withSecret, `{"operation": "plan"}`) })
}

func coldStarts(b *testing.B, env []string, body string) {
	var initTotal, firstTotal time.Duration
	for i := 0; i < b.N; i++ {
		rie, err := executortest.StartE(b, env...)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := http.Post(rie.URL+"/2015-03-31/functions/function/invocations", "application/json", strings.NewReader(body))
		first := time.Since(rie.Started)
		if err != nil {
			rie.Stop()
			b.Fatal(err)
		}
		resp.Body.Close()
		// The emulator prints its init report just before the response.
		var d time.Duration
		var ok bool
		for t0 := time.Now(); !ok && time.Since(t0) < 2*time.Second; time.Sleep(5 * time.Millisecond) {
			d, ok = rie.InitDuration()
		}
		rie.Stop()
		if !ok {
			b.Fatalf("no init report:\n%s", rie.Log())
		}
		initTotal += d
		firstTotal += first
	}
	b.ReportMetric(float64(initTotal.Microseconds())/1000/float64(b.N), "init-ms")
	b.ReportMetric(float64(firstTotal.Microseconds())/1000/float64(b.N), "first-response-ms")
}
