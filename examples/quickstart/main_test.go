package main

import (
	"bytes"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/infra-iac/infra/fleet"
	"github.com/infra-iac/infra/spec"
)

func decode(t *testing.T, data []byte) *spec.Document {
	t.Helper()
	doc, err := spec.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestSynthMatchesTheDocument: the Go quickstart and fleet.json are the same
// fleet. The Go program's synth output, decoded, equals the document,
// decoded.
func TestSynthMatchesTheDocument(t *testing.T) {
	want, err := os.ReadFile("fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := fleet.Run(quickstart(), []string{"synth"}, &out, &errs); code != 0 {
		t.Fatalf("synth exited %d: %s", code, errs.String())
	}
	if got, want := decode(t, out.Bytes()), decode(t, want); !reflect.DeepEqual(got, want) {
		t.Errorf("synth printed\n%s\nwhich differs from fleet.json", out.String())
	}
	_, diags := quickstart().Synth()
	if len(diags) != 0 {
		t.Errorf("the quickstart has diagnostics: %v", diags)
	}
}

// TestGoRunSynth runs the program the way a user does, go run . synth.
func TestGoRunSynth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	want, err := os.ReadFile("fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "run", ".", "synth")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run . synth: %v\n%s", err, stderr.String())
	}
	if got, want := decode(t, out), decode(t, want); !reflect.DeepEqual(got, want) {
		t.Errorf("go run . synth printed\n%s\nwhich differs from fleet.json", out)
	}
}
