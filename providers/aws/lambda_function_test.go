package aws

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/infra-iac/infra/internal/moto"
	"github.com/infra-iac/infra/providers"
	"github.com/infra-iac/infra/providers/drivertest"
	"github.com/infra-iac/infra/spec"
)

// writeZip writes a .zip holding one file of the given content into dir
// and returns its path and the base64 SHA-256 of its bytes, computed here
// apart from CodeSHA256, which the driver and the operations use.
func writeZip(t *testing.T, dir, name, content string) (path, sha string) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, err := w.Create("app.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return path, base64.StdEncoding.EncodeToString(sum[:])
}

// The role fields name roles by name, as the engine resolves a reference
// to an iam-role (whose identity is its name); lambdaFixture makes them.
const (
	fnRoleA = "ct-fn-a"
	fnRoleB = "ct-fn-b"
)

func TestLambdaFunctionConformance(t *testing.T) {
	b, srv := newTestBackend(t)
	dir := t.TempDir()
	zipA, shaA := writeZip(t, dir, "a.zip", "def handler(e, c): return 1\n")
	zipB, shaB := writeZip(t, dir, "b.zip", "def handler(e, c): return 2\n")
	setup := func(t *testing.T) { lambdaFixture(t, b, srv) }
	archNote := "moto 5.2.1 ignores UpdateFunctionCode's Architectures, so no read could show the change; " +
		"TestLambdaFunctionSendsArchitectureWithTheCode checks the request"
	conformance(t, b, srv,
		drivertest.Case{
			Kind: spec.LambdaFunction, Name: "zip", Setup: setup,
			Create: map[string]any{
				"role": fnRoleA, "packageType": "Zip", "zip": zipA, "codeSha256": shaA, "runtime": "python3.13",
				"handler": "app.handler", "memoryMb": 256.0, "timeoutSec": 30.0, "architecture": "x86_64",
				"env": map[string]any{"A": "1", "B": "two words"},
			},
			Updates: []map[string]any{
				{"zip": zipB, "codeSha256": shaB},
				{"role": fnRoleB},
				{"runtime": "python3.12"},
				{"handler": "app.other"},
				{"memoryMb": 512.0},
				{"timeoutSec": 60.0},
				{"env": map[string]any{"A": "1", "C": "x=y:z"}},
				{"env": map[string]any{}},
				{"memoryMb": 1024.0, "timeoutSec": 5.0, "env": map[string]any{"K": "v"}, "zip": zipA, "codeSha256": shaA},
			},
			// The path is the fleet's; Lambda knows the hash only.
			Unreported: []string{"zip"},
			Untested: map[string]string{
				"packageType":  "switching to an image drops zip, runtime and handler, which a Replaces entry cannot; TestLambdaFunctionPackageTypeIsReplacedNotUpdated",
				"image":        "the image case's",
				"architecture": archNote,
			},
			OddNames: []string{"Fn_Mixed-Case_0", strings.Repeat("f", 64)},
		},
		drivertest.Case{
			Kind: spec.LambdaFunction, Name: "image", Setup: setup,
			Create: map[string]any{
				"role": fnRoleA, "packageType": "Image", "image": testImage1, "memoryMb": 256.0, "timeoutSec": 30.0,
				"env": map[string]any{"A": "1"},
			},
			Updates: []map[string]any{
				{"image": testImage2},
				{"role": fnRoleB, "memoryMb": 2048.0},
			},
			Untested: map[string]string{
				"packageType": "see the zip case", "zip": "the zip case's", "codeSha256": "the zip case's",
				"runtime": "the zip case's (an image carries its own)", "handler": "the zip case's (an image carries its own)",
				"timeoutSec": "the zip case's", "env": "the zip case's", "architecture": archNote,
			},
		},
	)
}

// inputs records the input of every call of the named operations.
type inputs struct {
	mu  sync.Mutex
	got map[string][]any
}

func (r *inputs) option() func(*config.LoadOptions) error {
	r.got = map[string][]any{}
	return config.WithAPIOptions([]func(*middleware.Stack) error{func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			r.mu.Lock()
			op := middleware.GetOperationName(ctx)
			r.got[op] = append(r.got[op], in.Parameters)
			r.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	}})
}

func (r *inputs) of(op string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.got[op]...)
}

// zipTarget is a zip function's create target.
func zipTarget(name, path, sha string) providers.Target {
	return providers.Target{Name: name, Region: testRegion, Owner: "fleet", Fields: map[string]any{
		"role": fnRoleA, "zip": path, "codeSha256": sha, "runtime": "python3.13", "handler": "app.handler",
	}}
}

// TestLambdaFunctionBehaviour runs the kind's own rules on one emulator
// reset and fixture; each subtest removes what it made.
func TestLambdaFunctionBehaviour(t *testing.T) {
	var calls inputs
	b, srv := newTestBackend(t, calls.option())
	lambdaFixture(t, b, srv)
	dr, _ := b.Driver(spec.LambdaFunction)
	d := dr.(*lambdaFunctions)
	ctx := context.Background()
	create := creator(d)
	dir := t.TempDir()

	// The plan was made with the zip's hash; a file that changed since is
	// refused before any call, at create and at update, and an update
	// refused so changes nothing at all (not even its configuration).
	t.Run("RefusesAZipThatIsNotThePlannedOne", func(t *testing.T) {
		path, sha := writeZip(t, dir, "planned.zip", "v1")
		if _, other := writeZip(t, dir, "other.zip", "v2"); other == sha {
			t.Fatal("two contents, one hash")
		}
		before := len(calls.of("CreateFunction"))
		tg := zipTarget("changed", path, sha)
		if err := os.WriteFile(path, []byte("not what was planned"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := d.Create(ctx, tg)
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "the file changed since") ||
			!strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "aws/lambda-function: changed:") {
			t.Fatalf("Create = %v (code %s), want invalid argument naming the function, the path and the change", err, errorCode(err))
		}
		if n := len(calls.of("CreateFunction")) - before; n != 0 {
			t.Errorf("CreateFunction was called %d times", n)
		}

		path, sha = writeZip(t, dir, "planned.zip", "v1")
		create(t, tg)
		newPath, newSHA := writeZip(t, dir, "next.zip", "v3")
		if err := os.WriteFile(newPath, []byte("rebuilt after the plan"), 0o644); err != nil {
			t.Fatal(err)
		}
		tg.Fields["zip"], tg.Fields["codeSha256"], tg.Fields["memoryMb"] = newPath, newSHA, 512.0
		conf, code := len(calls.of("UpdateFunctionConfiguration")), len(calls.of("UpdateFunctionCode"))
		_, err = d.Update(ctx, tg, []string{"codeSha256", "memoryMb", "zip"})
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), newSHA) {
			t.Fatalf("Update = %v (code %s), want invalid argument naming the planned hash", err, errorCode(err))
		}
		if n, m := len(calls.of("UpdateFunctionConfiguration"))-conf, len(calls.of("UpdateFunctionCode"))-code; n+m != 0 {
			t.Errorf("a refused update made %d configuration and %d code calls", n, m)
		}
		got, err := d.Read(ctx, testRegion, "changed")
		if err != nil {
			t.Fatal(err)
		}
		if got.Fields["codeSha256"] != sha || got.Fields["memoryMb"] != 128.0 {
			t.Errorf("after the refusal: codeSha256 %v, memoryMb %v; want %s, 128", got.Fields["codeSha256"], got.Fields["memoryMb"], sha)
		}
	})

	// A zip that is not there (the executor has no checkout) is refused
	// before any call, naming the path; so is a zip without its hash.
	t.Run("RefusesAMissingZipOrHash", func(t *testing.T) {
		before := len(calls.of("CreateFunction"))
		missing := filepath.Join(dir, "build", "fn.zip")
		_, err := d.Create(ctx, zipTarget("missing", missing, "AAAA"))
		if errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Create = %v (code %s), want invalid argument naming %s, wrapping the read's error", err, errorCode(err), missing)
		}
		path, _ := writeZip(t, dir, "nohash.zip", "v")
		tg := zipTarget("nohash", path, "")
		delete(tg.Fields, "codeSha256")
		if _, err := d.Create(ctx, tg); errorCode(err) != providers.InvalidArgument || !strings.Contains(err.Error(), "codeSha256") {
			t.Errorf("Create without codeSha256 = %v, want invalid argument naming codeSha256", err)
		}
		for _, bad := range []map[string]any{{"architecture": "arm"}, {"memoryMb": 64.0}, {"timeoutSec": 901.0}, {"image": testImage1}, {"runtime": nil}} {
			tg := zipTarget("bad", path, "AAAA")
			for k, v := range bad {
				if v == nil {
					delete(tg.Fields, k)
				} else {
					tg.Fields[k] = v
				}
			}
			if _, err := d.Create(ctx, tg); errorCode(err) != providers.InvalidArgument {
				t.Errorf("Create with %v = %v, want invalid argument", bad, err)
			}
		}
		if n := len(calls.of("CreateFunction")) - before; n != 0 {
			t.Errorf("CreateFunction was called %d times", n)
		}
	})

	// The ownership tag is in CreateFunction's own tags, so the function
	// never exists unowned; the role is passed as the ARN of the role of
	// that name in this account.
	t.Run("CreateCarriesTheMarkAndTheRoleARN", func(t *testing.T) {
		path, sha := writeZip(t, dir, "mark.zip", "mark")
		before := len(calls.of("CreateFunction"))
		create(t, zipTarget("marked", path, sha))
		ins := calls.of("CreateFunction")[before:]
		if len(ins) != 1 {
			t.Fatalf("%d CreateFunction calls", len(ins))
		}
		in := ins[0].(*lambda.CreateFunctionInput)
		if in.Tags[spec.OwnershipTagKey] != "fleet" {
			t.Errorf("CreateFunction tags = %v, want the ownership tag", in.Tags)
		}
		if want := "arn:aws:iam::" + moto.Account + ":role/" + fnRoleA; *in.Role != want {
			t.Errorf("CreateFunction role = %s, want %s", *in.Role, want)
		}
		if in.PackageType != lambdatypes.PackageTypeZip || CodeSHA256(in.Code.ZipFile) != sha {
			t.Errorf("CreateFunction code: %s, %d bytes", in.PackageType, len(in.Code.ZipFile))
		}
	})

	// An architecture change is sent with the code, as Lambda takes it
	// (UpdateFunctionCode's Architectures), the zip's bytes again with it.
	t.Run("SendsArchitectureWithTheCode", func(t *testing.T) {
		path, sha := writeZip(t, dir, "arch.zip", "arch")
		tg := zipTarget("arch", path, sha)
		create(t, tg)
		before := len(calls.of("UpdateFunctionCode"))
		tg.Fields["architecture"] = "arm64"
		if _, err := d.Update(ctx, tg, []string{"architecture"}); err != nil {
			t.Fatal(err)
		}
		ins := calls.of("UpdateFunctionCode")[before:]
		if len(ins) != 1 {
			t.Fatalf("%d UpdateFunctionCode calls, want 1", len(ins))
		}
		in := ins[0].(*lambda.UpdateFunctionCodeInput)
		if len(in.Architectures) != 1 || in.Architectures[0] != lambdatypes.ArchitectureArm64 || CodeSHA256(in.ZipFile) != sha {
			t.Errorf("UpdateFunctionCode: architectures %v, %d bytes", in.Architectures, len(in.ZipFile))
		}
	})

	// packageType is never updated: Lambda cannot change it, so the plan
	// replaces the function.
	t.Run("PackageTypeIsReplacedNotUpdated", func(t *testing.T) {
		info, _ := spec.Lookup(spec.LambdaFunction)
		if f, _ := info.Field("packageType"); !f.Replace {
			t.Error("packageType does not force replacement")
		}
		path, sha := writeZip(t, dir, "pt.zip", "pt")
		tg := zipTarget("pt", path, sha)
		create(t, tg)
		tg.Fields = map[string]any{"role": fnRoleA, "packageType": "Image", "image": testImage1}
		if _, err := d.Update(ctx, tg, []string{"packageType", "image"}); errorCode(err) != providers.InvalidArgument {
			t.Errorf("Update of packageType = %v, want invalid argument", err)
		}
		if got, _ := d.Read(ctx, testRegion, "pt"); got.Fields["packageType"] != "Zip" {
			t.Errorf("packageType = %v after a refused update", got.Fields["packageType"])
		}
	})

	// A role made moments before is retried while Lambda says it cannot
	// be assumed (compute's retryer), then reported in Lambda's words.
	t.Run("RetriesARoleNotYetAssumable", func(t *testing.T) {
		d.role.roleAttempts = 3
		defer func() { d.role.roleAttempts = 15 }()
		path, sha := writeZip(t, dir, "role.zip", "role")
		tg := zipTarget("norole", path, sha)
		tg.Fields["role"] = "not-yet"
		_, err := d.Create(ctx, tg)
		if err == nil || !strings.Contains(err.Error(), "cannot be assumed") || !strings.Contains(err.Error(), "exceeded maximum number of attempts, 3") {
			t.Fatalf("Create = %v, want Lambda's refusal after 3 attempts", err)
		}
	})
}

// A function's role compares as a reference to an iam-role resolves: its
// name, for a role at the path / of this account; any other role is its
// ARN, which no name equals.
func TestLambdaFunctionReportsTheRoleAsAReferenceResolves(t *testing.T) {
	d := &lambdaFunctions{account: func(context.Context) (string, error) { return "111111111111", nil }}
	for arn, want := range map[string]string{
		"arn:aws:iam::111111111111:role/app":              "app",
		"arn:aws:iam::222222222222:role/app":              "arn:aws:iam::222222222222:role/app",
		"arn:aws:iam::111111111111:role/service-role/app": "arn:aws:iam::111111111111:role/service-role/app",
		"not an arn": "not an arn",
	} {
		got, err := d.roleReported(context.Background(), arn)
		if err != nil || got != want {
			t.Errorf("roleReported(%s) = %q, %v; want %q", arn, got, err, want)
		}
	}
}

// A CreateFunction whose answer is lost after Lambda made the function is
// not sent again (a resend answers ResourceConflictException): the
// function found under its name with this fleet's tag is what it made.
func TestLambdaFunctionCreateWhoseAnswerIsLostFindsItsFunction(t *testing.T) {
	b, srv, proxy := proxiedBackend(t)
	lambdaFixture(t, b, srv)
	zip, sha := writeZip(t, t.TempDir(), "a.zip", "def handler(e, c): return 1\n")
	d, _ := b.Driver(spec.LambdaFunction)
	role := "arn:aws:iam::" + moto.Account + ":role/" + fnRoleA
	tg := providers.Target{Name: "lost-fn", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"role": fnRoleA, "packageType": "Zip", "zip": zip, "codeSha256": sha, "runtime": "python3.13", "handler": "app.handler"},
		// The role by its ARN, so that CreateFunction is the first call.
		Identities: map[spec.Address]string{{Provider: spec.AWS, Kind: spec.IAMRole, Name: fnRoleA}: role}}
	proxy.DropResponse(proxy.Calls() + 1)
	res, err := d.Create(context.Background(), tg)
	if err != nil {
		t.Fatalf("Create with CreateFunction's answer lost: %v", err)
	}
	if res.Owner != "fleet" {
		t.Errorf("Create reported the function owned by %q", res.Owner)
	}
}

// An image function's listing has all but its image, which GetFunction's
// Code alone carries: with the tag scan's tags, ReadListed calls
// GetFunction only when the engine wants the image.
func TestLambdaFunctionReadListedReadsTheImageOnlyWhenWanted(t *testing.T) {
	calls := &callCounter{}
	b, srv := newTestBackend(t, calls.option())
	lambdaFixture(t, b, srv)
	d, _ := b.Driver(spec.LambdaFunction)
	ctx := context.Background()
	creator(d)(t, providers.Target{Name: "listed-image", Region: testRegion, Owner: "fleet",
		Fields: map[string]any{"role": fnRoleA, "image": testImage1, "memoryMb": 512.0}})
	want, err := d.Read(ctx, testRegion, "listed-image")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := d.List(ctx, testRegion)
	if err != nil || len(listed) != 1 {
		t.Fatalf("List = %v, %v; want the one function", listed, err)
	}
	if _, ok := listed[0].Fields["image"]; ok {
		t.Errorf("List reported the image %v, which ListFunctions does not carry", listed[0].Fields["image"])
	}
	tags := map[string]string{spec.OwnershipTagKey: "fleet"}
	for _, wanted := range []bool{false, true} {
		ctx := providers.WithWant(ctx, providers.Want{Fields: map[string]bool{"image": wanted, "memoryMb": true}})
		before := calls.count("GetFunction")
		lr, ok := d.(providers.ListedReader)
		if !ok {
			t.Fatal("lambda-function has no ReadListed")
		}
		got, err := lr.ReadListed(ctx, listed[0], tags)
		if err != nil {
			t.Fatal(err)
		}
		if n, wantN := calls.count("GetFunction")-before, map[bool]int{false: 0, true: 1}[wanted]; n != wantN {
			t.Errorf("image wanted %v: %d GetFunction calls, want %d", wanted, n, wantN)
		}
		if got.Fields["memoryMb"] != 512.0 || got.Owner != "fleet" || wanted && got.Fields["image"] != want.Fields["image"] {
			t.Errorf("image wanted %v: ReadListed gave %v (owner %q); Read %v", wanted, got.Fields, got.Owner, want.Fields)
		}
	}
}
