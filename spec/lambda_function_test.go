package spec

import (
	"encoding/json"
	"testing"
)

// lambdaDoc is a document of the iam-role and iam-policy examples and one
// lambda-function of the given spec.
func lambdaDoc(t *testing.T, fn map[string]any) string {
	t.Helper()
	var resources []string
	for _, r := range []struct {
		addr string
		spec map[string]any
	}{
		{"aws/iam-policy/example", mustKind(t, IAMPolicy).Example},
		{"aws/iam-role/example", mustKind(t, IAMRole).Example},
		{"aws/lambda-function/fn", fn},
	} {
		b, err := json.Marshal(map[string]any{"address": r.addr, "spec": r.spec})
		if err != nil {
			t.Fatal(err)
		}
		resources = append(resources, string(b))
	}
	return docJSON(nil, resources...)
}

func mustKind(t *testing.T, k Kind) *KindInfo {
	t.Helper()
	info, ok := Lookup(k)
	if !ok || info.Example == nil {
		t.Fatalf("%s has no Example", k)
	}
	return info
}

func zipSpec(over map[string]any) map[string]any {
	s := map[string]any{"role": map[string]any{"ref": "aws/iam-role/example"}, "zip": "build/fn.zip",
		"codeSha256": "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", "runtime": "python3.13", "handler": "app.handler"}
	for k, v := range over {
		if v == nil {
			delete(s, k)
		} else {
			s[k] = v
		}
	}
	return s
}

// The example (an image function) checks, and so does a zip function with
// its runtime, handler and hash; check derives packageType from the code.
func TestLambdaFunctionExampleAndZipCheck(t *testing.T) {
	for name, fn := range map[string]map[string]any{
		"example": mustKind(t, LambdaFunction).Example,
		"zip":     zipSpec(nil),
	} {
		d, err := DecodeDocument([]byte(lambdaDoc(t, fn)))
		if err != nil {
			t.Fatal(err)
		}
		m, diags := Compile(d)
		checkRows(t, diags)
		want := PackageImage
		if name == "zip" {
			want = PackageZip
		}
		got, _ := m.Lookup(Address{Provider: AWS, Kind: LambdaFunction, Name: "fn"})
		if got == nil || got.Fields["packageType"] != (Lit{V: want}) {
			t.Errorf("%s: packageType = %v, want %s", name, got.Fields["packageType"], want)
		}
	}
}

// Each shape of code a function cannot have is a row naming the function.
func TestLambdaFunctionCodeRows(t *testing.T) {
	const at = "aws/lambda-function/fn"
	for _, c := range []struct {
		name string
		fn   map[string]any
		want []row
	}{
		{"neither zip nor image", zipSpec(map[string]any{"zip": nil, "codeSha256": nil, "runtime": nil, "handler": nil}),
			[]row{{at, "lambda-function needs exactly one of zip and image"}}},
		{"both", zipSpec(map[string]any{"image": "i:1"}),
			[]row{{at, "lambda-function needs exactly one of zip and image"}}},
		{"zip without runtime and handler", zipSpec(map[string]any{"runtime": nil, "handler": nil}),
			[]row{{at, "lambda-function from a zip needs runtime and handler"}}},
		{"zip without its hash", zipSpec(map[string]any{"codeSha256": nil}),
			[]row{{at, "lambda-function's zip has no codeSha256, so no plan could see its code change"}}},
		{"image with a runtime", map[string]any{"role": map[string]any{"ref": "aws/iam-role/example"}, "image": "i:1", "runtime": "python3.13"},
			[]row{{at, "lambda-function from an image cannot use runtime"}}},
		{"packageType against the code", zipSpec(map[string]any{"packageType": "Image"}),
			[]row{{at, "lambda-function's packageType Image is not Zip, which its code is"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkRows(t, validateJSON(t, lambdaDoc(t, c.fn)), c.want...)
		})
	}
}
