package operations

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	awsprovider "github.com/infra-iac/infra/providers/aws"
	"github.com/infra-iac/infra/spec"
)

// ZipError is a Lambda function's zip that cannot be read when its
// document is loaded, so no plan could say what its code is.
type ZipError struct {
	Address spec.Address
	Path    string
	Err     error
}

func (e *ZipError) Error() string {
	return fmt.Sprintf("%s: zip %s cannot be read (build it before planning): %v", e.Address, e.Path, e.Err)
}
func (e *ZipError) Unwrap() error { return e.Err }

// ResolveZips is the step between loading a document and planning it
// that spec, which does no I/O, cannot take: each lambda-function's zip
// path, relative to dir (the document's directory; "" or "." for the
// directory infra runs in, where a fleet program's document is made), is
// made relative to the directory infra runs in, where the apply reads it;
// and a zip without a codeSha256 gets the one of the file's bytes, as
// Lambda reports it, so that the plan shows a code change exactly when the
// bytes change. A codeSha256 already written is kept: the apply holds the
// file to it. doc is not changed; the returned document may be doc.
func ResolveZips(doc *spec.Document, dir string) (*spec.Document, error) {
	if doc == nil {
		return nil, nil
	}
	out := doc
	for i, r := range doc.Resources {
		a, err := spec.ParseAddress(r.Address)
		if err != nil || a.Provider != spec.AWS || a.Kind != spec.LambdaFunction {
			continue
		}
		path, ok := r.Spec["zip"].(string)
		if !ok {
			continue // none, or not a string: check says so
		}
		_, hashed := r.Spec["codeSha256"]
		moved := path != "" && dir != "" && dir != "." && !filepath.IsAbs(path)
		if hashed && !moved {
			continue
		}
		if moved {
			path = filepath.Join(dir, path)
		}
		s := maps.Clone(r.Spec)
		s["zip"] = path
		if !hashed {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, &ZipError{Address: a, Path: path, Err: err}
			}
			s["codeSha256"] = awsprovider.CodeSHA256(b)
		}
		if out == doc {
			c := *doc
			c.Resources = slices.Clone(doc.Resources)
			out = &c
		}
		out.Resources[i].Spec = s
	}
	return out, nil
}
