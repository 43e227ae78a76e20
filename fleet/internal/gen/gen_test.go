package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infra-iac/infra/spec"
)

// TestGeneratedFilesAreUpToDate fails when spec's tables changed and
// `go generate ./fleet` was not run: the SDK must offer exactly what spec
// says each cloud has.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		have, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./fleet)", name, err)
			continue
		}
		if !bytes.Equal(have, files[name]) {
			t.Errorf("fleet/%s is stale: run go generate ./fleet", name)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"memoryMb": "MemoryMB", "imageId": "ImageID", "cpuLimit": "CPULimit", "n-virginia": "NVirginia",
		"m7i-flex": "M7iFlex", "registryEndpoint": "RegistryEndpoint", "uae": "UAE", "vpcId": "VPCID",
		"scaleway-container-namespace": "ScalewayContainerNamespace",
	} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"imageId": "imageID", "masterPasswordSecret": "masterPasswordSecret", "arn": "arn", "value": "value",
	} {
		if got := paramName(in); got != want {
			t.Errorf("paramName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"nano": "Nano", "xlarge": "XLarge", "2xlarge": "X2Large", "32xlarge": "X32Large",
		"metal": "Metal", "metal-24xl": "Metal24XL",
	} {
		if got := sizeMethod(in); got != want {
			t.Errorf("sizeMethod(%q) = %q, want %q", in, got, want)
		}
	}
	if got := kindType(spec.Scaleway, spec.ScalewayContainerNS); got != "ContainerNamespace" {
		t.Errorf("kindType = %q", got)
	}
	if got := kindType(spec.AWS, spec.AWSInstance); got != "Instance" {
		t.Errorf("kindType = %q", got)
	}
}

// TestOnlyTheCloudsKinds: each cloud package gets a constructor for the
// kinds spec says it offers, and for no other.
func TestOnlyTheCloudsKinds(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range spec.Providers {
		src := files[string(p)+"/kinds_gen.go"]
		for _, info := range spec.Kinds() {
			decl := []byte("func (c *Cloud) " + kindType(p, info.Kind) + "(")
			if has := bytes.Contains(src, decl); has != info.OfferedBy(p) {
				t.Errorf("%s: constructor for %s present=%v, offered=%v", p, info.Kind, has, info.OfferedBy(p))
			}
		}
	}
}
