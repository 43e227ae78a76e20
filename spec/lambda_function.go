package spec

import "strings"

// Package types of a Lambda function, as Lambda names them.
const (
	PackageZip   = "Zip"
	PackageImage = "Image"
)

// lambdaCode holds a lambda-function to one shape of code: a zip with its
// runtime and handler, or an image without them. It derives packageType
// from which of the two is set, so that a switch between them is a change
// of a forcing field (Lambda cannot change a function's package type) and
// nobody need write it; a packageType written is held to the code.
func (c *compiler) lambdaCode(where string, d Declared) {
	_, zip := d.Fields["zip"]
	_, image := d.Fields["image"]
	switch {
	case zip == image:
		c.add(Errorf(RowLambdaCode, where, `set "zip" to the path of a .zip file, or "image" to an image URI`,
			"lambda-function needs exactly one of zip and image"))
		return
	case zip:
		var missing []string
		for _, f := range []string{"runtime", "handler"} {
			if _, set := d.Fields[f]; !set {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			c.add(Errorf(RowLambdaCode, where, "set "+strings.Join(missing, " and ")+": Lambda requires them for a .zip file",
				"lambda-function from a zip needs %s", strings.Join(missing, " and ")))
		}
		if _, set := d.Fields["codeSha256"]; !set {
			c.add(Errorf(RowZipUnhashed, where, "plan, apply or check the document with infra, which fills codeSha256 from the zip, or write it (base64 of the file's SHA-256)",
				"lambda-function's zip has no codeSha256, so no plan could see its code change"))
		}
	case image:
		for _, f := range []string{"runtime", "handler", "codeSha256"} {
			if _, set := d.Fields[f]; set {
				c.add(Errorf(RowLambdaCode, where, "remove "+f+": an image carries its own",
					"lambda-function from an image cannot use %s", f))
			}
		}
	}
	want := PackageImage
	if zip {
		want = PackageZip
	}
	if lit, ok := d.Fields["packageType"].(Lit); ok && lit.V != want {
		c.add(Errorf(RowLambdaCode, where, "remove packageType: it follows from zip and image",
			"lambda-function's packageType %v is not %s, which its code is", lit.V, want))
		return
	}
	d.Fields["packageType"] = Lit{V: want}
}
