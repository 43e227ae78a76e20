package sdkshape

import (
	"testing"

	"github.com/infra-iac/infra/spec"
)

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"memoryMb": "MemoryMB", "imageId": "ImageID", "cpuLimit": "CPULimit", "n-virginia": "NVirginia",
		"m7i-flex": "M7iFlex", "registryEndpoint": "RegistryEndpoint", "uae": "UAE", "vpcId": "VPCID",
		"scaleway-container-namespace": "ScalewayContainerNamespace",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"imageId": "imageID", "masterPasswordSecret": "masterPasswordSecret", "arn": "arn", "value": "value",
	} {
		if got := ParamName(in); got != want {
			t.Errorf("ParamName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"nano": "Nano", "xlarge": "XLarge", "2xlarge": "X2Large", "32xlarge": "X32Large",
		"metal": "Metal", "metal-24xl": "Metal24XL",
	} {
		if got := SizeMethod(in); got != want {
			t.Errorf("SizeMethod(%q) = %q, want %q", in, got, want)
		}
	}
	if got := KindType(spec.Scaleway, spec.ScalewayContainerNS); got != "ContainerNamespace" {
		t.Errorf("kindType = %q", got)
	}
	if got := KindType(spec.AWS, spec.AWSInstance); got != "Instance" {
		t.Errorf("kindType = %q", got)
	}
}
