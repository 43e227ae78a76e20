// Package sdkshape decides the shape of the fleet SDK from spec's tables:
// the Go names of kinds, fields, parameters, regions and instance types,
// which fields a constructor takes as parameters and which its spec struct
// holds, and the Go type of each. The SDK generator (fleet/internal/gen)
// writes the SDK by these decisions and `infra import`'s Go writer
// (render.GoSource) writes calls into it by the same ones, so the two can
// never disagree on what the SDK is called.
package sdkshape

import (
	"fmt"
	"strings"

	"github.com/infra-iac/infra/internal/goname"
	"github.com/infra-iac/infra/spec"
)

// ProviderName is how a provider is written in prose, and in Go names that
// carry it.
func ProviderName(p spec.Provider) string {
	switch p {
	case spec.AWS:
		return "AWS"
	case spec.Scaleway:
		return "Scaleway"
	case spec.GCP:
		return "GCP"
	}
	return string(p)
}

// KindType is the Go name of a kind in provider p's package: the provider
// prefix of a provider-local kind is dropped (aws-instance is aws.Instance).
func KindType(p spec.Provider, k spec.Kind) string {
	return GoName(strings.TrimPrefix(string(k), string(p)+"-"))
}

// GoName turns a kebab-case or camelCase name into an exported Go name;
// the providers' input generator spells names by the same rule.
func GoName(s string) string { return goname.Of(s) }

// ParamName is a Go parameter name for a field.
func ParamName(field string) string {
	n := GoName(field)
	// Lower the leading capital run, keeping an acronym's tail readable:
	// ImageID -> imageID, ARN -> arn.
	i := 0
	for i < len(n) && n[i] >= 'A' && n[i] <= 'Z' {
		i++
	}
	switch {
	case i == len(n):
		return strings.ToLower(n)
	case i > 1:
		i--
	}
	return strings.ToLower(n[:i]) + n[i:]
}

// FieldsOf splits a kind's fields for provider p into parameters (required)
// and options (optional), by where each field is expressible and required.
// A field in neither has no place in p's constructor.
func FieldsOf(p spec.Provider, info *spec.KindInfo) (params, options []spec.Field) {
	for _, f := range info.Fields {
		// Where portability stops for a field some cloud requires (spec's
		// RequiredOn), the SDK does better than check's diagnostic: it is a
		// parameter where required, and absent where the cloud cannot
		// express or has no use for it. An optional field one cloud cannot
		// express (OnlyOn alone) stays in the portable spec, so one value
		// deploys anywhere; check names it where it does not apply.
		if len(f.RequiredOn) > 0 && !f.UsedOn(p) {
			continue
		}
		if f.RequiredFor(p) {
			params = append(params, f)
		} else {
			options = append(options, f)
		}
	}
	return params, options
}

// PortableOptions are the optional fields of a portable kind that every
// cloud leaves optional: the fields of fleet.<Kind>Spec.
func PortableOptions(info *spec.KindInfo) []spec.Field {
	var out []spec.Field
	for _, f := range info.Fields {
		if f.Required {
			continue
		}
		if len(f.RequiredOn) == 0 {
			out = append(out, f)
		}
	}
	return out
}

// SpecStruct is the package and name of the struct p's constructor of a
// kind takes its options in: fleet.<Kind>Spec for a portable kind, so one
// value deploys on any cloud, else <cloud>.<Kind>Spec.
func SpecStruct(p spec.Provider, info *spec.KindInfo) (pkg, name string) {
	if info.Portable {
		return "fleet", KindType("", info.Kind) + "Spec"
	}
	return string(p), KindType(p, info.Kind) + "Spec"
}

// RegionName is the name of the region constant at locality l.
func RegionName(l spec.Locality) string { return GoName(string(l)) }

// FamilyName is the name of an instance family's constant (t3 is T3).
func FamilyName(family string) string { return GoName(family) }

// SizeMethod names a size: 2xlarge is X2Large (a Go name cannot start with
// a digit), metal-24xl is Metal24XL.
func SizeMethod(size string) string {
	if m := xlarge.FindStringSubmatch(size); m != nil {
		return "X" + m[1] + "Large"
	}
	var b strings.Builder
	for _, part := range strings.Split(size, "-") {
		if m := xl.FindStringSubmatch(part); m != nil {
			b.WriteString(m[1] + "XL")
			continue
		}
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// Comment lays text out as // comment lines at indent, wrapped so that a
// line stays within 80 columns.
func Comment(indent, text string) string {
	var b strings.Builder
	for _, line := range Wrap(text, 76-len(indent)) {
		b.WriteString(indent + "// " + line + "\n")
	}
	return b.String()
}

// Wrap breaks text into lines of at most width bytes at spaces; a word
// longer than width gets a line of its own.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func allBuckets(ks []spec.Kind) bool {
	for _, k := range ks {
		if info, ok := spec.Lookup(k); !ok || info.Physical != "bucket" {
			return false
		}
	}
	return len(ks) > 0
}

// errorf names the field an error is about.
func errorf(info *spec.KindInfo, f spec.Field, format string, args ...any) error {
	return fmt.Errorf("%s field %s: %s", info.Kind, f.Name, fmt.Sprintf(format, args...))
}
