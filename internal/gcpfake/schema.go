package gcpfake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CheckOptions say how a value travelled.
type CheckOptions struct {
	// EnumInts: the request asked for $alt=json;enum-encoding=int, as the
	// GAPIC REST clients do; an enum may then be sent as its protobuf
	// number.
	EnumInts bool
	// Response: the value is the fake's own answer. A real API omits an
	// unset field, so a null there is a violation; in a request it is
	// accepted, as protojson reads it as unset.
	Response bool
}

// Check validates a decoded JSON value (encoding/json's any, numbers as
// json.Number or float64) against the schema named ref and returns the
// violations, each with its JSON path: "Secret.labels.team: want string,
// got number".
func (d *Doc) Check(ref string, v any, opts CheckOptions) []string {
	c := &checker{doc: d, opts: opts}
	c.value(ref, &Schema{Ref: ref}, v, field{})
	return c.errs
}

// checker walks a value beside its schema, collecting violations.
type checker struct {
	doc  *Doc
	opts CheckOptions
	errs []string
}

// field names the property a value sits in (Secret.secretType), through
// arrays and maps: the protobuf field an enum number belongs to.
type field struct{ schema, prop string }

func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

func (c *checker) value(path string, s *Schema, v any, f field) {
	if s.Ref != "" {
		target := c.doc.Schemas[s.Ref]
		if target == nil {
			c.fail(path, "no schema %q in the %s discovery document", s.Ref, c.doc.Name)
			return
		}
		s = target
	}
	if s.Type == "any" || s.Type == "" {
		return
	}
	if v == nil {
		if c.opts.Response {
			c.fail(path, "null (the API omits an unset field)")
		}
		return
	}
	switch s.Type {
	case "string":
		c.str(path, s, v, f)
	case "integer":
		c.integer(path, s, v)
	case "number":
		c.number(path, v)
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.fail(path, "want boolean, got %s", jsonType(v))
		}
	case "array":
		c.array(path, s, v, f)
	case "object":
		c.object(path, s, v, f)
	default:
		c.fail(path, "schema type %q is not known to the checker", s.Type)
	}
}

func (c *checker) array(path string, s *Schema, v any, f field) {
	a, ok := v.([]any)
	if !ok {
		c.fail(path, "want array, got %s", jsonType(v))
		return
	}
	if s.Items == nil {
		return
	}
	for i, x := range a {
		c.value(fmt.Sprintf("%s[%d]", path, i), s.Items, x, f)
	}
}

func (c *checker) object(path string, s *Schema, v any, f field) {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(path, "want object, got %s", jsonType(v))
		return
	}
	for _, k := range sortedKeys(m) {
		switch {
		case s.Properties[k] != nil:
			c.value(path+"."+k, s.Properties[k], m[k], field{s.ID, k})
		case s.AdditionalProperties != nil:
			// A map's values belong to the map's own field.
			c.value(path+"."+k, s.AdditionalProperties, m[k], f)
		default:
			c.fail(path, "unknown property %q (not in schema %s)", k, schemaName(s))
		}
	}
}

func (c *checker) str(path string, s *Schema, v any, f field) {
	if len(s.Enum) > 0 {
		c.enum(path, s, v, f)
		return
	}
	x, ok := v.(string)
	if !ok {
		want := "string"
		if s.Format != "" {
			want = "string (" + s.Format + ")"
		}
		c.fail(path, "want %s, got %s", want, jsonType(v))
		return
	}
	if msg := checkFormat(s.Format, x); msg != "" {
		c.fail(path, "%s: %q", msg, x)
	}
}

// enum accepts a listed name, or, when the request asked for integer
// enums, the number protobuf gives a listed value (see enumNumbers: the
// discovery document lists names only, and numbers need not be indices:
// Secret.secretType's OTHER is 50).
func (c *checker) enum(path string, s *Schema, v any, f field) {
	if x, ok := v.(string); ok {
		if !slices.Contains(s.Enum, x) {
			c.fail(path, "%q is not one of %s", x, strings.Join(s.Enum, ", "))
		}
		return
	}
	text, ok := numberText(v)
	if !ok {
		c.fail(path, "want enum string, got %s", jsonType(v))
		return
	}
	if !c.opts.EnumInts {
		c.fail(path, "enum as number %s, but the request did not ask for enum-encoding=int", text)
		return
	}
	n, err := strconv.ParseInt(text, 10, 32)
	nums, _ := enumNumbers(c.doc, f, s.Enum)
	if err != nil || !slices.Contains(numberValues(nums), int32(n)) {
		c.fail(path, "enum number %s is none of %s", text, describeNumbers(s.Enum, nums))
	}
}

func (c *checker) integer(path string, s *Schema, v any) {
	text, ok := numberText(v)
	if !ok {
		c.fail(path, "want integer (%s), got %s", orDefault(s.Format, "int32"), jsonType(v))
		return
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) {
		c.fail(path, "want integer, got %s", text)
		return
	}
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if s.Format == "uint32" {
		lo, hi = 0, math.MaxUint32
	}
	if f < lo || f > hi {
		c.fail(path, "%s out of %s range", text, orDefault(s.Format, "int32"))
	}
}

func (c *checker) number(path string, v any) {
	if _, ok := numberText(v); ok {
		return
	}
	// protojson writes the IEEE specials as strings.
	if x, ok := v.(string); ok && (x == "NaN" || x == "Infinity" || x == "-Infinity") {
		return
	}
	c.fail(path, "want number, got %s", jsonType(v))
}

var (
	durationRE  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`)
	fieldPathRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
)

// checkFormat checks a string against its discovery format and says what
// is wrong, or "".
func checkFormat(format, x string) string {
	switch format {
	case "int64":
		if _, err := strconv.ParseInt(x, 10, 64); err != nil {
			return "want int64 in a string"
		}
	case "uint64":
		if _, err := strconv.ParseUint(x, 10, 64); err != nil {
			return "want uint64 in a string"
		}
	case "google-datetime", "date-time":
		if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
			return "want an RFC 3339 timestamp"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, x); err != nil {
			return "want a date YYYY-MM-DD"
		}
	case "google-duration":
		if !durationRE.MatchString(x) {
			return `want a duration like "3.5s"`
		}
	case "byte":
		if !isBase64(x) {
			return "want base64"
		}
	case "google-fieldmask":
		for _, p := range strings.Split(x, ",") {
			if x != "" && !fieldPathRE.MatchString(p) {
				return "want a field mask (comma-separated field paths)"
			}
		}
	}
	return ""
}

// isBase64 accepts what protojson accepts for bytes: standard or URL-safe
// alphabet, padded or not.
func isBase64(x string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(x); err == nil {
			return true
		}
	}
	return false
}

// numberText is a JSON number's text, whichever way it was decoded.
func numberText(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		return n.String(), true
	case float64:
		return strconv.FormatFloat(n, 'f', -1, 64), true
	case int:
		return strconv.Itoa(n), true
	case int64:
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if _, ok := numberText(v); ok {
		return "number"
	}
	return fmt.Sprintf("Go %T", v)
}

func schemaName(s *Schema) string { return orDefault(s.ID, "(inline object)") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
