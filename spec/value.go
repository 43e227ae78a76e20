package spec

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Value is what a spec field holds once interpreted against the kind's
// metadata: a literal, a container of values, or an expression. There is no
// conditional and no iteration: what exists never depends on a value known
// only after apply.
type Value interface{ isValue() }

// Lit is a JSON literal: string, float64 or bool.
type Lit struct{ V any }

// List is a list of values.
type List []Value

// Map is an object of values (tags, env, one ingress rule).
type Map map[string]Value

// Ref is {"ref": ADDR}: an ordering edge, and the referenced resource's
// identity (its name) once resolved.
type Ref struct{ To Address }

// Observed is {"observed": ADDR, "attribute": A}: a value known after that
// resource is applied.
type Observed struct {
	Of        Address
	Attribute string
}

// SecretValue is {"secretValue": ADDR}: one of this fleet's secrets, only
// inside a secret's composed value.
type SecretValue struct{ Of Address }

// Composed is {"composed": {"format": F, "args": [...]}}: F with {0}, {1} …
// replaced by the arguments' values.
type Composed struct {
	Format string
	Args   []Value
}

// FromEnv is {"fromEnv": VAR}: a secret's value read from the environment of
// the process that applies.
type FromEnv struct{ Var string }

func (Lit) isValue()         {}
func (List) isValue()        {}
func (Map) isValue()         {}
func (Ref) isValue()         {}
func (Observed) isValue()    {}
func (SecretValue) isValue() {}
func (Composed) isValue()    {}
func (FromEnv) isValue()     {}

// Deps returns the addresses v depends on, in a stable order, without
// duplicates.
func Deps(v Value) []Address {
	seen := map[Address]bool{}
	var out []Address
	walk(v, func(w Value) {
		var a Address
		switch e := w.(type) {
		case Ref:
			a = e.To
		case Observed:
			a = e.Of
		case SecretValue:
			a = e.Of
		default:
			return
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// IsLiteral reports whether v holds no expression at all.
func IsLiteral(v Value) bool {
	lit := true
	walk(v, func(w Value) {
		switch w.(type) {
		case Ref, Observed, SecretValue, Composed, FromEnv, Import:
			lit = false
		}
	})
	return lit
}

func walk(v Value, fn func(Value)) {
	fn(v)
	switch e := v.(type) {
	case List:
		for _, x := range e {
			walk(x, fn)
		}
	case Map:
		for _, k := range sortedKeys(e) {
			walk(e[k], fn)
		}
	case Composed:
		for _, x := range e.Args {
			walk(x, fn)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Encode turns a value back into its JSON tree (map[string]any, []any,
// string, float64, bool). Decode(Encode(v)) == v.
func Encode(v Value) any {
	switch e := v.(type) {
	case Lit:
		return e.V
	case List:
		out := make([]any, len(e))
		for i, x := range e {
			out[i] = Encode(x)
		}
		return out
	case Map:
		out := make(map[string]any, len(e))
		for k, x := range e {
			out[k] = Encode(x)
		}
		return out
	case Ref:
		return map[string]any{"ref": e.To.String()}
	case Observed:
		return map[string]any{"observed": e.Of.String(), "attribute": e.Attribute}
	case SecretValue:
		return map[string]any{"secretValue": e.Of.String()}
	case Composed:
		args := make([]any, len(e.Args))
		for i, x := range e.Args {
			args[i] = Encode(x)
		}
		return map[string]any{"composed": map[string]any{"format": e.Format, "args": args}}
	case FromEnv:
		return map[string]any{"fromEnv": e.Var}
	case Import:
		return map[string]any{"use": e.Slot, "export": e.Export}
	}
	return nil
}

// Decode interprets a JSON tree as a value of field f. The error says what
// was expected; it never panics on any input.
func Decode(f Field, raw any) (Value, error) {
	switch f.Type {
	case TypeString:
		if s, ok := raw.(string); ok {
			return Lit{s}, nil
		}
		if f.Expr {
			if v, ok, err := decodeExpr(raw, false); ok || err != nil {
				return v, err
			}
		}
	case TypeInt:
		if n, ok := raw.(float64); ok {
			if n != math.Trunc(n) || math.IsInf(n, 0) {
				return nil, fmt.Errorf("want an integer, got %v", n)
			}
			return Lit{n}, nil
		}
	case TypeNumber:
		if n, ok := raw.(float64); ok {
			return Lit{n}, nil
		}
	case TypeBool:
		if b, ok := raw.(bool); ok {
			return Lit{b}, nil
		}
	case TypeStringList:
		if xs, ok := raw.([]any); ok {
			return decodeStringList(f, xs)
		}
	case TypeStringMap:
		if im, ok := mapImport(raw); ok {
			return im, nil // a reach-all set, the whole map
		}
		if m, ok := raw.(map[string]any); ok {
			return decodeStringMap(f, m)
		}
	case TypeRef:
		if im, ok := fieldImport(f, raw); ok {
			return im, nil
		}
		return decodeRef(raw)
	case TypeRefMap:
		if m, ok := raw.(map[string]any); ok {
			return decodeRefMap(f, m)
		}
	case TypeSecretSource:
		if v, ok, err := decodeSecretSource(raw); ok {
			return v, err
		}
	case TypeIngress:
		if xs, ok := raw.([]any); ok {
			return decodeIngressList(xs)
		}
	case TypeObjects:
		if m, ok := raw.(map[string]any); ok {
			return decodeObjects(f, m)
		}
	}
	return nil, fmt.Errorf("want %s %s, got %s", article(f.Type.String()), f.Type, describe(raw))
}

// decodeStringList reads a list of strings, or of expressions where the
// field takes them (a role's policies: an ARN, or the arn a policy of the
// fleet publishes).
func decodeStringList(f Field, xs []any) (Value, error) {
	out := make(List, 0, len(xs))
	for i, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, Lit{s})
			continue
		}
		if f.Expr {
			v, ok, err := decodeExpr(x, false)
			if err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if ok {
				out = append(out, v)
				continue
			}
		}
		return nil, fmt.Errorf("item %d: want a string, got %s", i, describe(x))
	}
	return out, nil
}

// decodeStringMap reads a map of strings, or of expressions where the field
// takes them.
func decodeStringMap(f Field, m map[string]any) (Value, error) {
	out := make(Map, len(m))
	for _, k := range sortedKeys(m) {
		x := m[k]
		if s, ok := x.(string); ok {
			out[k] = Lit{s}
			continue
		}
		if f.Expr {
			v, ok, err := decodeExpr(x, false)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			if ok {
				out[k] = v
				continue
			}
		}
		return nil, fmt.Errorf("%q: want a string, got %s", k, describe(x))
	}
	return out, nil
}

// fieldImport reads {"use": SLOT, "export": E} where a reference field
// takes one: where it takes a secret (a database's master password, a
// secret environment entry), another fleet's secret export stands in for
// one of this fleet's secrets; where it is Wired (an ALB's subnets),
// another fleet's export of the referent's identity stands in for a
// reference.
func fieldImport(f Field, raw any) (Value, bool) {
	m, ok := raw.(map[string]any)
	if !ok || !(f.Secret || f.Wired) || !has(m, "use") {
		return nil, false
	}
	v, ok, err := decodeExpr(raw, f.Secret)
	if !ok || err != nil {
		return nil, false
	}
	im, ok := v.(Import)
	if !ok {
		return nil, false
	}
	im.SecretField = f.Secret
	im.RefField = f.Wired && !f.Secret
	return im, true
}

func decodeRefMap(f Field, m map[string]any) (Value, error) {
	out := make(Map, len(m))
	for _, k := range sortedKeys(m) {
		if im, ok := fieldImport(f, m[k]); ok {
			out[k] = im
			continue
		}
		r, err := decodeRef(m[k])
		if err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		out[k] = r
	}
	return out, nil
}

// decodeSecretSource reads {"fromEnv": …} or {"composed": …}; ok is false
// when raw is neither and not a literal value either.
func decodeSecretSource(raw any) (v Value, ok bool, err error) {
	if m, isMap := raw.(map[string]any); isMap {
		if v, found := m["fromEnv"]; found && len(m) == 1 {
			s, isStr := v.(string)
			if !isStr || s == "" {
				return nil, true, fmt.Errorf(`"fromEnv" wants the name of an environment variable`)
			}
			return FromEnv{s}, true, nil
		}
		if _, found := m["composed"]; found && len(m) == 1 {
			v, _, err := decodeExpr(raw, true)
			return v, true, err
		}
	}
	if _, isStr := raw.(string); isStr {
		return nil, true, fmt.Errorf(`a secret's value is never written in the document: use {"fromEnv": "VAR"} or {"composed": …}`)
	}
	return nil, false, nil
}

func decodeIngressList(xs []any) (Value, error) {
	out := make(List, 0, len(xs))
	for i, x := range xs {
		rule, err := decodeIngress(x)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		out = append(out, rule)
	}
	return out, nil
}

// decodeObjects reads an object of items, each an object of f.Of's fields.
func decodeObjects(f Field, m map[string]any) (Value, error) {
	out := make(Map, len(m))
	for _, name := range sortedKeys(m) {
		item, ok := m[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q: want an object, got %s", name, describe(m[name]))
		}
		v := make(Map, len(item))
		for _, k := range sortedKeys(item) {
			sub, ok := f.ItemField(k)
			if !ok {
				return nil, fmt.Errorf("%q: unknown field %q (known: %s)", name, k, strings.Join(f.itemNames(), ", "))
			}
			x, err := Decode(sub, item[k])
			if err != nil {
				return nil, fmt.Errorf("%q: field %q: %w", name, k, err)
			}
			v[k] = x
		}
		for _, sub := range f.Of {
			if _, ok := item[sub.Name]; sub.Required && !ok {
				return nil, fmt.Errorf("%q: missing required field %q", name, sub.Name)
			}
		}
		out[name] = v
	}
	return out, nil
}

func decodeRef(raw any) (Value, error) {
	m, ok := raw.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf(`want {"ref": "provider/kind/name"}, got %s`, describe(raw))
	}
	s, ok := m["ref"].(string)
	if !ok {
		return nil, fmt.Errorf(`want {"ref": "provider/kind/name"}, got %s`, describe(raw))
	}
	a, err := ParseAddress(s)
	if err != nil {
		return nil, err
	}
	return Ref{a}, nil
}

func decodeIngress(raw any) (Value, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`want {"port": N, "cidr": "a.b.c.d/n"}, got %s`, describe(raw))
	}
	// Sorted, so that a rule with two unknown keys names the same one
	// every time (FuzzValidate found map order in the message).
	for _, k := range sortedKeys(m) {
		if k != "port" && k != "cidr" {
			return nil, fmt.Errorf("unknown key %q (want port and cidr)", k)
		}
	}
	port, ok := m["port"].(float64)
	if !ok || port != math.Trunc(port) || port < 0 || port > 65535 {
		return nil, fmt.Errorf(`"port" wants an integer from 0 to 65535`)
	}
	cidr, ok := m["cidr"].(string)
	if !ok || !strings.Contains(cidr, "/") {
		return nil, fmt.Errorf(`"cidr" wants a block such as "10.0.0.0/16"`)
	}
	return Map{"port": Lit{port}, "cidr": Lit{cidr}}, nil
}

// decodeExpr reads an expression object. ok is false when raw is not an
// expression at all. allowSecret admits secretValue (inside a secret's
// composed value only).
func decodeExpr(raw any, allowSecret bool) (Value, bool, error) {
	m, isObj := raw.(map[string]any)
	if !isObj {
		return nil, false, nil
	}
	switch {
	case has(m, "observed"):
		for k := range m {
			if k != "observed" && k != "attribute" {
				return nil, true, fmt.Errorf("observed expression: unknown key %q", k)
			}
		}
		s, _ := m["observed"].(string)
		a, err := ParseAddress(s)
		if err != nil {
			return nil, true, fmt.Errorf("observed expression: %w", err)
		}
		attr, _ := m["attribute"].(string)
		if attr == "" {
			return nil, true, fmt.Errorf(`observed expression: "attribute" is required`)
		}
		return Observed{Of: a, Attribute: attr}, true, nil
	case has(m, "use"):
		slot, _ := m["use"].(string)
		export, _ := m["export"].(string)
		if slot == "" || export == "" || len(m) != 2 {
			return nil, true, fmt.Errorf(`want {"use": "SLOT", "export": "EXPORT"}`)
		}
		return Import{Slot: slot, Export: export, InSecret: allowSecret}, true, nil
	case has(m, "secretValue"):
		if !allowSecret {
			return nil, true, fmt.Errorf(`"secretValue" may only appear inside a secret's composed value`)
		}
		s, _ := m["secretValue"].(string)
		a, err := ParseAddress(s)
		if err != nil || len(m) != 1 {
			return nil, true, fmt.Errorf(`want {"secretValue": "provider/secrets/name"}`)
		}
		return SecretValue{a}, true, nil
	case has(m, "composed"):
		c, ok := m["composed"].(map[string]any)
		if !ok || len(m) != 1 {
			return nil, true, fmt.Errorf(`want {"composed": {"format": "…{0}…", "args": [...]}}`)
		}
		format, ok := c["format"].(string)
		if !ok {
			return nil, true, fmt.Errorf(`composed: "format" wants a string`)
		}
		rawArgs, _ := c["args"].([]any)
		if _, present := c["args"]; present && rawArgs == nil {
			return nil, true, fmt.Errorf(`composed: "args" wants a list`)
		}
		args := make([]Value, 0, len(rawArgs))
		for i, x := range rawArgs {
			if s, ok := x.(string); ok {
				args = append(args, Lit{s})
				continue
			}
			v, ok, err := decodeExpr(x, allowSecret)
			if err != nil {
				return nil, true, fmt.Errorf("composed: arg %d: %w", i, err)
			}
			if !ok {
				return nil, true, fmt.Errorf("composed: arg %d: want a string or an expression, got %s", i, describe(x))
			}
			args = append(args, v)
		}
		if err := checkFormat(format, len(args)); err != nil {
			return nil, true, fmt.Errorf("composed: %w", err)
		}
		return Composed{Format: format, Args: args}, true, nil
	case has(m, "ref"):
		return nil, true, fmt.Errorf(`a reference is not a value here; to use another resource's value write {"observed": ADDR, "attribute": A}`)
	}
	return nil, false, nil
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// checkFormat makes sure every {n} placeholder names an argument.
func checkFormat(format string, n int) error {
	_, err := Format(format, make([]string, n))
	return err
}

// Format replaces {0}, {1} … in format with args. "{{" and "}}" are literal
// braces.
func Format(format string, args []string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '{' && i+1 < len(format) && format[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(format) && format[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("format %q: unclosed {", format)
			}
			idx := 0
			digits := format[i+1 : i+end]
			if digits == "" {
				return "", fmt.Errorf("format %q: {} needs an argument number, such as {0}", format)
			}
			for _, d := range digits {
				if d < '0' || d > '9' {
					return "", fmt.Errorf("format %q: {%s} is not an argument number", format, digits)
				}
				idx = idx*10 + int(d-'0')
				if idx > len(args) {
					break
				}
			}
			if idx >= len(args) {
				return "", fmt.Errorf("format %q: {%s} but only %d argument(s)", format, digits, len(args))
			}
			b.WriteString(args[idx])
			i += end
		case c == '}':
			return "", fmt.Errorf("format %q: unmatched }", format)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func describe(x any) string {
	switch v := x.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

// ObservedIn returns the observed attributes v reads, in walk order.
func ObservedIn(v Value) []Observed { return exprsIn[Observed](v) }

// RefsIn returns the references within v, in walk order.
func RefsIn(v Value) []Ref { return exprsIn[Ref](v) }

// SecretValuesIn returns the secret values v reads, in walk order.
func SecretValuesIn(v Value) []SecretValue { return exprsIn[SecretValue](v) }

// exprsIn returns the expressions of type T within v, in walk order.
func exprsIn[T Value](v Value) []T {
	var out []T
	walk(v, func(w Value) {
		if x, ok := w.(T); ok {
			out = append(out, x)
		}
	})
	return out
}
