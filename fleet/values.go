package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/infra-iac/infra/spec"
)

// valuer is what every fleet value type implements so that Fleet can turn
// it into a spec.Value. set is false for an unset value (the field stays
// unknown); problems are the author's mistakes found in the value, reported
// as diagnostics at the resource that holds it.
type valuer interface {
	specValue() (v spec.Value, set bool, problems []string)
}

// Ref is a handle on a declared resource of kind K. The constructors of the
// cloud packages are the only way to get a non-zero one, so a reference
// cannot dangle and cannot point at the wrong kind: a field that wants a
// security group takes a Ref[aws.SecurityGroup], and a Ref[aws.ObjectStore]
// does not compile there.
//
// The zero Ref names nothing; using it where a reference is required is
// reported as an error. In an optional reference of a spec struct it leaves
// the field unset, as the struct's zero value does.
type Ref[K Kind] struct {
	addr spec.Address
}

// Address is the resource's address, provider/kind/name. It is known when
// the resource is declared, so reading it is fine; the zero Ref has the zero
// address.
func (r Ref[K]) Address() spec.Address { return r.addr }

// Name is the resource's name, its identity within its provider and kind.
func (r Ref[K]) Name() string { return r.addr.Name }

// String is the address in its text form, for messages.
func (r Ref[K]) String() string {
	if r.addr.IsZero() {
		return "(zero fleet.Ref)"
	}
	return r.addr.String()
}

func (r *Ref[K]) setAddress(a spec.Address) { r.addr = a }

func (r Ref[K]) specValue() (spec.Value, bool, []string) {
	if r.addr.IsZero() {
		return nil, false, []string{zeroRef}
	}
	return spec.Ref{To: r.addr}, true, nil
}

const zeroRef = "a zero fleet.Ref names no resource: use the handle the constructor returned"

// SecretField is what a field that takes a secret accepts
// (masterPasswordSecret, each entry of secretEnv), K being the cloud's
// Secrets kind: a handle on one of the fleet's secrets (a Ref[K]), or
// another fleet's secret export read through a slot, made one with
// SecretFrom[K], which the engine reads at apply by its reference.
//
// Only those implement it, and only for their K: an Output[string], a
// literal, a SecretValue, a Ref of another kind or of another cloud's
// secrets does not compile there.
type SecretField[K Kind] interface {
	secretField(K)
}

func (r Ref[K]) secretField(K) {}

// SecretFrom makes another fleet's secret export (a slot's, from
// Slot.Exports()) the value of a field that takes one of this fleet's
// secrets of kind K:
//
//	cloud.Postgres("replica", "shop", fleet.SecretFrom[aws.Secrets](db.Exports().Password), fleet.PostgresSpec{})
//
// Which cloud holds the provider's secret is the provider's business:
// the engine reads it by its reference with this fleet's credentials for
// that cloud. A provider's own binding (aws.SecretRefOf) or an interface's
// definition is reported.
func SecretFrom[K Kind](e SecretExport) SecretField[K] { return secretFrom[K]{e} }

type secretFrom[K Kind] struct{ e SecretExport }

func (secretFrom[K]) secretField(K) {}

func (s secretFrom[K]) specValue() (spec.Value, bool, []string) { return s.e.fieldValue() }

// RefField is what a reference field that takes its referent by identity
// accepts (an ALB's subnets, a target group's VPC, a record's zone): a
// handle on one of the fleet's resources of kind K (a Ref[K]), or another
// fleet's export of such a resource's identity read through a slot, made
// one with RefFrom[K]. Which fields take one is spec's Field.Wired.
type RefField[K Kind] interface {
	refField(K)
}

func (r Ref[K]) refField(K) {}

// RefFrom makes another fleet's public string export of a resource's
// identity (a subnet's id, from Slot.Exports()) the value of a field that
// takes a reference to a K:
//
//	cloud.ALB("web", map[string]fleet.RefField[aws.Subnet]{
//		"eu-west-3a": fleet.RefFrom[aws.Subnet](net.SubnetA), …}, aws.ALBSpec{})
//
// The engine hands the driver the export's value as the referent's
// identity. An Output of this fleet's own (an observed attribute, a
// literal) is reported: give the resource's handle instead.
func RefFrom[K Kind](o Output[string]) RefField[K] { return refFrom[K]{o} }

type refFrom[K Kind] struct{ o Output[string] }

func (refFrom[K]) refField(K) {}

func (r refFrom[K]) specValue() (spec.Value, bool, []string) {
	v, ok, problems := r.o.specValue()
	if !ok {
		return v, ok, problems
	}
	im, isImport := v.(spec.Import)
	if !isImport {
		return nil, false, append(problems, "fleet.RefFrom takes a slot's export (Slot.Exports()); for a resource of this fleet, give its fleet.Ref")
	}
	im.RefField = true
	return im, true, problems
}

// BucketRef is a reference to a bucket on any cloud: an object store on AWS
// or Scaleway, or an AWS S3 bucket. Get one with Bucket. Its zero value is
// unset.
type BucketRef struct {
	addr spec.Address
	set  bool
}

// Bucket turns a handle on any bucket kind into a BucketRef, for fields
// that accept a bucket wherever it lives (a Scaleway function's
// sourceBucket may read an AWS bucket). A handle on a kind that is not a
// bucket does not compile.
func Bucket[K BucketKind](r Ref[K]) BucketRef { return BucketRef{addr: r.addr, set: true} }

func (b BucketRef) specValue() (spec.Value, bool, []string) {
	switch {
	case !b.set:
		return nil, false, nil
	case b.addr.IsZero():
		return nil, false, []string{zeroRef}
	}
	return spec.Ref{To: b.addr}, true, nil
}

// Optional is an optional field's value. Its zero value is unset: the field
// is absent from the document, so infra never compares it and never acts on
// it. That is different from Go's zero value of T: Set(false) is enforced,
// an unset Optional[bool] is not.
type Optional[T any] struct {
	v   T
	set bool
}

// Set makes an Optional holding v.
func Set[T any](v T) Optional[T] { return Optional[T]{v: v, set: true} }

// Get returns the value and whether it is set. A literal is known when the
// fleet is written, so reading it back is allowed.
func (o Optional[T]) Get() (T, bool) { return o.v, o.set }

// IsSet reports whether the value is set.
func (o Optional[T]) IsSet() bool { return o.set }

func (o Optional[T]) specValue() (spec.Value, bool, []string) {
	if !o.set {
		return nil, false, nil
	}
	v, err := literal(any(o.v))
	if err != "" {
		return nil, false, []string{err}
	}
	return v, true, nil
}

// literal turns a Go literal into its JSON-tree form (numbers are float64,
// as they are once a document is decoded, so a synthesized document and a
// decoded one compare equal).
func literal(x any) (spec.Value, string) {
	switch v := x.(type) {
	case string:
		return spec.Lit{V: v}, ""
	case bool:
		return spec.Lit{V: v}, ""
	case int:
		return spec.Lit{V: float64(v)}, ""
	case float64:
		return spec.Lit{V: v}, ""
	}
	return nil, fmt.Sprintf("a %T is not a value a field can hold", x)
}

// Output is a value of type T known only after apply: a database's
// endpoint, a queue's URL, a composed connection string. The cloud packages'
// accessors (aws.EndpointOf, scaleway.URLOf …) make one from a handle;
// Format and Join compose them; Lit lifts a value you already have.
//
// An Output can flow into a field that accepts one, but no Go code can read
// it: it has no method that returns a T, so it cannot decide how many
// resources exist or what they are called. That keeps the dependency graph
// fixed before anything runs. Printing one shows "(known after apply)".
//
// The zero Output is unset: in an optional field the field stays unknown.
type Output[T any] struct {
	v        spec.Value
	problems []string
	// export is set on an interface's export (NewExport), and kept when a
	// slot reads it, so that a requirement knows which export it is on.
	export *exportDef
	// anywhere: the provider says the observed value means the same
	// everywhere (Anywhere), narrowing the binding's locality to global.
	anywhere bool
}

// Anywhere says that an attribute a provider exports means the same on
// every cloud and in every account, though it is a regional resource's: a
// bucket's public URL, read over HTTPS from anywhere. Bound to an export
// whose locality allows fleet.Global, it may then be read by a consumer on
// another cloud; without it, check keeps a region's value in its account
// (locality-account). It changes nothing but the binding's locality.
func Anywhere[T any](o Output[T]) Output[T] {
	o.anywhere = true
	return o
}

// Lit lifts a value known now into an Output, for fields and arguments that
// take one.
func Lit[T string | int | float64 | bool](v T) Output[T] {
	lit, _ := literal(any(v))
	return Output[T]{v: lit}
}

func (o *Output[T]) setExpr(v spec.Value, problems []string) { o.v, o.problems = v, problems }

func (o *Output[T]) refuse(problems []string) { o.problems = append(o.problems, problems...) }

func (o Output[T]) specValue() (spec.Value, bool, []string) {
	if o.v == nil && len(o.problems) == 0 && o.export != nil {
		return nil, false, []string{o.export.unread()}
	}
	if r, raised := o.v.(spec.SecretRef); raised {
		return nil, false, append(o.problems, raisedProblem(r))
	}
	return o.v, o.v != nil, o.problems
}

// Format prints "(known after apply)", or the literal for one made with Lit,
// so that a log line shows what an Output is without pretending to know it.
func (o Output[T]) Format(s fmt.State, verb rune) {
	if lit, ok := o.v.(spec.Lit); ok {
		fmt.Fprintf(s, "%v", lit.V)
		return
	}
	if _, raised := o.v.(spec.SecretRef); raised {
		_, _ = s.Write([]byte(spec.Redacted))
		return
	}
	_, _ = s.Write([]byte("(known after apply)"))
}

func (o Output[T]) arg() (spec.Value, []string)       { return o.argValue() }
func (o Output[T]) secretArg() (spec.Value, []string) { return o.argValue() }

func (o Output[T]) argValue() (spec.Value, []string) {
	if o.v == nil && len(o.problems) == 0 && o.export != nil {
		return nil, []string{o.export.unread()}
	}
	if r, raised := o.v.(spec.SecretRef); raised {
		return nil, append(o.problems, raisedProblem(r))
	}
	return argValue(o.v, o.problems)
}

func argValue(v spec.Value, problems []string) (spec.Value, []string) {
	if v == nil && len(problems) == 0 {
		return nil, []string{"an unset fleet.Output"}
	}
	// A composed argument is a string or an expression; a literal number or
	// boolean is written in its text form.
	if lit, ok := v.(spec.Lit); ok {
		switch x := lit.V.(type) {
		case float64:
			return spec.Lit{V: strconv.FormatFloat(x, 'f', -1, 64)}, problems
		case bool:
			return spec.Lit{V: strconv.FormatBool(x)}, problems
		}
	}
	return v, problems
}

// Arg is what Format and Join accept: any Output. A SecretValue is not an
// Arg, so a secret's value cannot leak into a plain field through Format.
type Arg interface {
	arg() (spec.Value, []string)
}

// SecretArg is what Composed accepts: any Output, and a SecretValue.
type SecretArg interface {
	secretArg() (spec.Value, []string)
}

// Format composes Outputs into a string known after apply. Each {} in
// format takes the next argument, {0}, {1} … name one explicitly, and {{
// and }} are literal braces:
//
//	fleet.Format("https://{}/health", aws.URLOf(api))
//
// Every placeholder must have an argument and every argument a
// placeholder; a mismatch is reported as an error at the resource whose
// field holds the result, since Go cannot check a format string.
func Format(format string, args ...Arg) Output[string] {
	v, problems := compose(format, len(args), func(i int) (spec.Value, []string) {
		if args[i] == nil {
			return nil, []string{"nil"}
		}
		return args[i].arg()
	})
	return Output[string]{v: v, problems: problems}
}

// compose builds a composed expression from n arguments, each read by arg.
// Format and Composed share it; they differ only in what they accept.
func compose(format string, n int, arg func(int) (spec.Value, []string)) (spec.Value, []string) {
	vals := make([]spec.Value, n)
	var problems []string
	for i := range vals {
		v, p := arg(i)
		for _, s := range p {
			problems = append(problems, fmt.Sprintf("format %q: argument %d: %s", format, i, s))
		}
		if v == nil {
			// Keep the document decodable; the problem is reported.
			v = spec.Lit{V: ""}
		}
		vals[i] = v
	}
	tmpl, p := convertFormat(format, n)
	return spec.Composed{Format: tmpl, Args: vals}, append(problems, p...)
}

// Join is Format with the arguments separated by sep: Join("-", a, b) is
// Format("{}-{}", a, b).
func Join(sep string, args ...Arg) Output[string] {
	esc := strings.NewReplacer("{", "{{", "}", "}}").Replace(sep)
	return Format(strings.TrimSuffix(strings.Repeat("{}"+esc, len(args)), esc), args...)
}

// convertFormat rewrites the SDK's format syntax ({} for the next argument)
// into the document's ({0}, {1} …) and reports what Go could not check.
func convertFormat(format string, n int) (string, []string) {
	var b strings.Builder
	var problems []string
	bad := func(msg string, args ...any) {
		problems = append(problems, fmt.Sprintf("format %q: ", format)+fmt.Sprintf(msg, args...))
	}
	used := make([]bool, n)
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '{' && i+1 < len(format) && format[i+1] == '{':
			b.WriteString("{{")
			i++
		case c == '}' && i+1 < len(format) && format[i+1] == '}':
			b.WriteString("}}")
			i++
		case c == '{':
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				bad("unclosed {; write {{ for a literal brace")
				b.WriteString("{{")
				continue
			}
			inside := format[i+1 : i+end]
			idx := next
			if inside == "" {
				next++
			} else if k, err := strconv.Atoi(inside); err == nil && k >= 0 && inside[0] != '+' {
				idx = k
			} else {
				bad("{%s} is not a placeholder: write {} or {0}, {1} …", inside)
				b.WriteString("{{" + inside + "}}")
				i += end
				continue
			}
			if idx >= n {
				bad("placeholder %d but only %d argument(s)", idx, n)
			} else {
				used[idx] = true
			}
			b.WriteString("{" + strconv.Itoa(idx) + "}")
			i += end
		case c == '}':
			bad("unmatched }; write }} for a literal brace")
			b.WriteString("}}")
		default:
			b.WriteByte(c)
		}
	}
	for i, u := range used {
		if !u {
			bad("argument %d is not used", i)
		}
	}
	return b.String(), problems
}

// Outputs is a list of values that may be known only after apply, for
// fields such as a role's policies: an ARN you have, lifted with Lit, or
// one another resource publishes (aws.ARNOf). A nil Outputs is unset.
type Outputs []Output[string]

func (l Outputs) specValue() (spec.Value, bool, []string) {
	if l == nil {
		return nil, false, nil
	}
	out := make(spec.List, 0, len(l))
	var problems []string
	for i, o := range l {
		v, set, p := o.specValue()
		for _, s := range p {
			problems = append(problems, fmt.Sprintf("item %d: %s", i, s))
		}
		if !set {
			if len(p) == 0 {
				problems = append(problems, fmt.Sprintf("item %d has no value (an unset fleet.Output)", i))
			}
			continue
		}
		out = append(out, v)
	}
	return out, true, problems
}

// Env is a map of values that may be known only after apply, for fields
// such as a function's environment. Literals lifts a plain map into one;
// a nil Env is unset.
type Env map[string]Output[string]

// Literals lifts a map of values known now into an Env. Add Outputs to the
// result as to any map.
func Literals(m map[string]string) Env {
	if m == nil {
		return nil
	}
	out := make(Env, len(m))
	for k, v := range m {
		out[k] = Lit(v)
	}
	return out
}

// Merge returns a new Env holding e's entries and then each of others' in
// turn; a later key wins. It never modifies e.
func (e Env) Merge(others ...Env) Env {
	out := make(Env, len(e))
	for k, v := range e {
		out[k] = v
	}
	for _, o := range others {
		for k, v := range o {
			out[k] = v
		}
	}
	return out
}

func (e Env) specValue() (spec.Value, bool, []string) {
	if e == nil {
		return nil, false, nil
	}
	if v, set, problems, isSet := e.keyedSet(); isSet {
		return v, set, problems // SlotAll.Each: the whole field
	}
	out := make(spec.Map, len(e))
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(e)) {
		v, set, p := e[k].specValue()
		for _, s := range p {
			problems = append(problems, fmt.Sprintf("%q: %s", k, s))
		}
		if !set {
			if len(p) == 0 {
				problems = append(problems, fmt.Sprintf("%q has no value (an unset fleet.Output)", k))
			}
			continue
		}
		out[k] = v
	}
	return out, true, problems
}

// SecretSource is where a secret's value comes from at apply time. It is
// never a value written in the fleet: either FromEnv (an environment
// variable of the process that applies) or Composed (built from other
// values). The zero SecretSource is unset.
type SecretSource struct {
	v        spec.Value
	problems []string
}

// FromEnv reads the secret's value from the environment variable name of
// the process that applies, so the value never lives in the repository.
func FromEnv(name string) SecretSource { return SecretSource{v: spec.FromEnv{Var: name}} }

// Composed builds a secret's value at apply time from other values, with
// Format's placeholders. It may read other secrets' values (SecretValue)
// as well as Outputs:
//
//	fleet.Composed("postgres://admin:{}@{}/main", aws.SecretValueOf(pw), aws.EndpointOf(db))
//
// Each argument is a dependency, so one apply creates them first. A
// composed value with no dependency would be a plaintext in disguise, and
// is reported as an error.
func Composed(format string, args ...SecretArg) SecretSource {
	v, problems := compose(format, len(args), func(i int) (spec.Value, []string) {
		if args[i] == nil {
			return nil, []string{"nil"}
		}
		return args[i].secretArg()
	})
	return SecretSource{v: v, problems: problems}
}

func (s SecretSource) specValue() (spec.Value, bool, []string) {
	return s.v, s.v != nil, s.problems
}

// SecretValue is the value of one of the fleet's secrets, known only at
// apply time and never printed. The cloud packages' SecretValueOf make one.
// It is usable only as an argument of Composed: it is not an Output, so it
// cannot reach a plain field, an Env or Format.
type SecretValue struct {
	of       spec.Address
	problems []string
}

func (s *SecretValue) setSecret(of spec.Address, problems []string) { s.of, s.problems = of, problems }

func (s SecretValue) secretArg() (spec.Value, []string) {
	if s.of.IsZero() {
		if len(s.problems) == 0 {
			return nil, []string{"an unset fleet.SecretValue"}
		}
		return nil, s.problems
	}
	return spec.SecretValue{Of: s.of}, s.problems
}

// Format prints "(sensitive)": a secret's value is never shown.
func (s SecretValue) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(spec.Redacted)) }
