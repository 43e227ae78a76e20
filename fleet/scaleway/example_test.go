package scaleway_test

import (
	"fmt"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/fleet/internal/show"
	"github.com/infra-iac/infra/fleet/scaleway"
)

func ExampleUse() {
	f := fleet.New("shop")
	scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Amsterdam)
	doc, _ := f.Synth()
	fmt.Println(doc.Placement)
	// Output: map[scaleway:nl-ams]
}

func ExampleCloud_Function() {
	f := fleet.New("shop")
	cloud := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	ns := cloud.FunctionNamespace("shop-fns", scaleway.FunctionNamespaceSpec{})
	cloud.Function("shop-hello", ns, "python311", scaleway.FunctionSpec{
		Code: fleet.Set("def handle(event, context):\n    return {'body': 'hello'}\n"),
	})
	show.Fleet(f)
	// Output:
	// scaleway/scaleway-function-namespace/shop-fns {}
	// scaleway/scaleway-function/shop-hello {"code":"def handle(event, context):\n    return {'body': 'hello'}\n","namespace":{"ref":"scaleway/scaleway-function-namespace/shop-fns"},"runtime":"python311"}
}

func ExampleCloud_Container() {
	f := fleet.New("shop")
	cloud := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	ns := cloud.ContainerNamespace("shop-apps", scaleway.ContainerNamespaceSpec{})
	token := cloud.Secrets("shop-token", fleet.FromEnv("SHOP_TOKEN"), fleet.SecretsSpec{})
	cloud.In(scaleway.Warsaw).Container("shop-web", ns, fleet.Lit("nginx:1.27"), scaleway.ContainerSpec{
		MaxScale:  fleet.Set(3),
		SecretEnv: map[string]fleet.SecretField[scaleway.Secrets]{"TOKEN": token},
	})
	show.Fleet(f)
	// Output:
	// scaleway/scaleway-container-namespace/shop-apps {}
	// scaleway/secrets/shop-token {"value":{"fromEnv":"SHOP_TOKEN"}}
	// scaleway/scaleway-container/shop-web (in pl-waw) {"image":"nginx:1.27","maxScale":3,"namespace":{"ref":"scaleway/scaleway-container-namespace/shop-apps"},"secretEnv":{"TOKEN":{"ref":"scaleway/secrets/shop-token"}}}
}

func ExampleCloud_Compute() {
	f := fleet.New("shop")
	cloud := scaleway.Use(f, "11111111-2222-3333-4444-555555555555", scaleway.Paris)
	ns := cloud.ContainerNamespace("shop-apps", scaleway.ContainerNamespaceSpec{})
	// On Scaleway a compute lives in a containers namespace, so the
	// namespace is a parameter here (on AWS it is an execution role).
	cloud.Compute("shop-api", fleet.Lit("rg.fr-par.scw.cloud/shop/api:v1"), ns, fleet.ComputeSpec{TimeoutSec: fleet.Set(60)})
	show.Fleet(f)
	// Output:
	// scaleway/scaleway-container-namespace/shop-apps {}
	// scaleway/compute/shop-api {"image":"rg.fr-par.scw.cloud/shop/api:v1","namespace":{"ref":"scaleway/scaleway-container-namespace/shop-apps"},"timeoutSec":60}
}
