package providers

import "github.com/infra-iac/infra/spec"

// Readers of a target's resolved fields, shared by every driver: the engine
// hands JSON-like values, and a test may hand Go's own types.

// FieldString returns a string field.
func FieldString(f map[string]any, name string) (string, bool) {
	s, ok := f[name].(string)
	return s, ok
}

// FieldNumber returns a numeric field, whatever Go number type holds it.
func FieldNumber(f map[string]any, name string) (float64, bool) {
	switch x := f[name].(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// FieldStringMap returns an object-of-strings field (tags, env); an absent
// one is empty. A Sensitive value is revealed here, at the driver's edge,
// because the cloud call is where it goes.
func FieldStringMap(f map[string]any, name string) (map[string]string, error) {
	out := map[string]string{}
	switch m := f[name].(type) {
	case nil:
	case map[string]string:
		for k, v := range m {
			out[k] = v
		}
	case map[string]any:
		for k, v := range m {
			switch s := v.(type) {
			case string:
				out[k] = s
			case spec.Sensitive:
				out[k] = s.Reveal()
			default:
				return nil, Errorf(InvalidArgument, "field %q: value of %q is %T, want a string", name, k, v)
			}
		}
	default:
		return nil, Errorf(InvalidArgument, "field %q is %T, want an object of strings", name, m)
	}
	return out, nil
}
