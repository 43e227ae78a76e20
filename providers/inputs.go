package providers

import "github.com/infra-iac/infra/spec"

//go:generate go run ./internal/inputgen

// The typed inputs (inputs_gen.go, generated from spec's field table) are
// how a driver reads its target: a misspelled field is then a compile
// error, where a string key silently read nothing. Each <Kind>Input holds
// one Go field per spec field and Has<Field> says whether the target set
// it, since drivers treat an unset field differently from its zero value
// (a key that is absent or nil is unset). An unset map is empty, not nil,
// as FieldStringMap gives it, so a driver may add to it.

// decoder fills one <Kind>Input: each read marks its field's bit when the
// target set it, and the first value of the wrong type is the error.
type decoder struct {
	fields map[string]any
	set    uint64
	err    error
}

// value is the field's value when it is set and no read has failed yet.
func (d *decoder) value(bit uint, name string) (any, bool) {
	v := d.fields[name]
	if v == nil || d.err != nil {
		return nil, false
	}
	d.set |= 1 << bit
	return v, true
}

func (d *decoder) wrong(name string, v any, want string) {
	d.err = Errorf(InvalidArgument, "field %q is %T, want %s", name, v, want)
}

// scalar is a field whose resolved value has one Go type.
func scalar[T any](d *decoder, bit uint, name, want string) T {
	var x T
	v, ok := d.value(bit, name)
	if !ok {
		return x
	}
	if x, ok = v.(T); !ok {
		d.wrong(name, v, want)
	}
	return x
}

func (d *decoder) str(bit uint, name string) string { return scalar[string](d, bit, name, "a string") }

func (d *decoder) boolean(bit uint, name string) bool {
	return scalar[bool](d, bit, name, "a boolean")
}

// number accepts every Go number type FieldNumber does: tests hand Go's
// own types, the engine JSON's float64.
func (d *decoder) number(bit uint, name string) float64 {
	v, ok := d.value(bit, name)
	if !ok {
		return 0
	}
	n, ok := FieldNumber(d.fields, name)
	if !ok {
		d.wrong(name, v, "a number")
	}
	return n
}

func (d *decoder) strings(bit uint, name string) []string {
	v, ok := d.value(bit, name)
	if !ok {
		return nil
	}
	switch l := v.(type) {
	case []string:
		return append([]string{}, l...)
	case []any:
		out := make([]string, 0, len(l))
		for i, x := range l {
			s, ok := x.(string)
			if !ok {
				d.err = Errorf(InvalidArgument, "field %q: item %d is %T, want a string", name, i, x)
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	d.wrong(name, v, "a list of strings")
	return nil
}

// stringMap reveals a Sensitive value, through FieldStringMap, at the
// driver's edge as before.
func (d *decoder) stringMap(bit uint, name string) map[string]string {
	d.value(bit, name)
	if d.err != nil {
		return nil
	}
	m, err := FieldStringMap(d.fields, name)
	d.err = err
	return m
}

// secret is a secret's value. A plain string is taken too, as the readers
// before it took one (a test may hand one); the engine hands a Sensitive.
func (d *decoder) secret(bit uint, name string) spec.Sensitive {
	v, ok := d.value(bit, name)
	if !ok {
		return spec.Sensitive{}
	}
	switch s := v.(type) {
	case spec.Sensitive:
		return s
	case string:
		return spec.NewSensitive(s)
	}
	d.wrong(name, v, "a secret")
	return spec.Sensitive{}
}

// list is a list whose items the driver checks itself (ingress rules,
// whose errors name the rule).
func (d *decoder) list(bit uint, name string) []any {
	v, ok := d.value(bit, name)
	if !ok {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		d.wrong(name, v, "a list")
	}
	return l
}

// objects is a TypeObjects field: each item decoded by item, the errors
// naming the item.
func objects[T any](d *decoder, bit uint, name string, item func(map[string]any) (T, error)) map[string]T {
	v, ok := d.value(bit, name)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.wrong(name, v, "an object of objects")
		return nil
	}
	out := make(map[string]T, len(m))
	for k, x := range m {
		fields, ok := x.(map[string]any)
		if !ok {
			d.err = Errorf(InvalidArgument, "field %q: item %q is %T, want an object", name, k, x)
			return nil
		}
		it, err := item(fields)
		if err != nil {
			d.err = Errorf(InvalidArgument, "field %q: item %q: %v", name, k, err)
			return nil
		}
		out[k] = it
	}
	return out
}
