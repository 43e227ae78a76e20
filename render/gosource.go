package render

import (
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/infra-iac/infra/internal/sdkshape"
	"github.com/infra-iac/infra/spec"
)

// GoImport is what `infra import` hands the Go writer.
type GoImport struct {
	Fleet     string                   // the fleet's name (fleet.New)
	Accounts  map[spec.Provider]string // each cloud's account (aws.Use / scaleway.Use)
	Placement map[spec.Provider]string // each cloud's default region; a resource whose Region differs gets cloud.In(...)
	// Resources are as in a document: Address "provider/kind/name", Region
	// ("" = placement), Spec = JSON trees as spec.DecodeDocument gives them.
	Resources []spec.Resource
	Adopt     []string            // addresses to write fleet.Adopt calls for
	Notes     map[string][]string // address -> comment lines, written above that resource's declaration
	Main      bool                // also write main.go
}

// GoSource returns the Go files (file name -> gofmt'ed source) of package main
// declaring in's resources: imported.go always; main.go when in.Main.
//
// imported.go holds func imported(f *fleet.Fleet), which calls each cloud's
// Use and then one function per kind and cloud, in dependency order; a
// function returns its handles, by name, only when another resource refers
// to one. Every field present in a Spec is written with its typed SDK
// field; absent ones are left out. The program synthesizes in's resources
// and adopt list, with three spellings the SDK normalises: a Region equal
// to the placement comes out as "" (the same place), the adopt list and
// resources come out in declaration order, and an instance type the table
// does not know is written with aws.InstanceTypeRaw, so it comes out as
// "raw:TYPE" (the SDK has no other spelling for it, and check wants it).
// A region the table does not know is written as a plain Region("code").
func GoSource(in GoImport) (map[string][]byte, error) {
	w, err := newGoWriter(in)
	if err != nil {
		return nil, err
	}
	src, err := w.importedFile()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"imported.go": src}
	if in.Main {
		main := "package main\n\nimport \"github.com/infra-iac/infra/fleet\"\n\n" +
			"func main() {\n\tf := fleet.New(" + strconv.Quote(in.Fleet) + ")\n\timported(f)\n\tfleet.Main(f)\n}\n"
		if files["main.go"], err = gofmt("main.go", main); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func gofmt(name, src string) ([]byte, error) {
	out, err := format.Source([]byte(src))
	if err != nil {
		// Every value is quoted and every name comes from spec's tables,
		// so this is the writer's bug, never the input's.
		return nil, fmt.Errorf("go source: %s does not format: %v\n%s", name, err, src)
	}
	return out, nil
}

// kindKey is one kind on one cloud: one function of imported.go.
type kindKey struct {
	p spec.Provider
	k spec.Kind
}

// kindGroup is the imported resources of one kind on one cloud.
type kindGroup struct {
	kindKey
	info       *spec.KindInfo
	resources  []spec.Resource
	names      []string
	needs      []kindKey // the groups its resources refer to, in first-use order
	referenced bool      // another resource refers to one of these
}

type goWriter struct {
	in     GoImport
	groups map[kindKey]*kindGroup
	of     map[string]kindKey // address -> its group
	adopt  map[string]bool
}

func newGoWriter(in GoImport) (*goWriter, error) {
	w := &goWriter{in: in, groups: map[kindKey]*kindGroup{}, of: map[string]kindKey{}, adopt: map[string]bool{}}
	for _, r := range in.Resources {
		if err := w.add(r); err != nil {
			return nil, err
		}
	}
	for _, r := range in.Resources {
		if err := w.link(r); err != nil {
			return nil, err
		}
	}
	for _, a := range in.Adopt {
		if _, ok := w.of[a]; !ok {
			return nil, fmt.Errorf("go source: adopt %s: no such imported resource", a)
		}
		if w.adopt[a] {
			return nil, fmt.Errorf("go source: adopt %s: listed twice", a)
		}
		w.adopt[a] = true
	}
	for a := range in.Notes {
		if _, ok := w.of[a]; !ok {
			return nil, fmt.Errorf("go source: notes for %s: no such imported resource", a)
		}
	}
	return w, nil
}

// add files r under its kind's group.
func (w *goWriter) add(r spec.Resource) error {
	a, err := spec.ParseAddress(r.Address)
	if err != nil {
		return fmt.Errorf("go source: %v", err)
	}
	if !a.Provider.Known() {
		return fmt.Errorf("go source: %s: unknown provider %q", r.Address, a.Provider)
	}
	info, ok := spec.Lookup(a.Kind)
	if !ok || !info.OfferedBy(a.Provider) {
		return fmt.Errorf("go source: %s: %s offers no kind %q", r.Address, a.Provider, a.Kind)
	}
	if _, dup := w.of[r.Address]; dup {
		return fmt.Errorf("go source: %s: imported twice", r.Address)
	}
	key := kindKey{a.Provider, a.Kind}
	g := w.groups[key]
	if g == nil {
		g = &kindGroup{kindKey: key, info: info}
		w.groups[key] = g
	}
	g.resources = append(g.resources, r)
	g.names = append(g.names, a.Name)
	w.of[r.Address] = key
	return nil
}

// link records which groups r's references need, refusing a reference to
// a resource that is not imported: the program would have no handle for it.
func (w *goWriter) link(r spec.Resource) error {
	g := w.groups[w.of[r.Address]]
	for _, f := range g.info.Fields {
		raw, ok := r.Spec[f.Name]
		if !ok || !f.IsRef() {
			continue
		}
		v, err := spec.Decode(f, raw)
		if err != nil {
			return fmt.Errorf("go source: %s: field %s: %v", r.Address, f.Name, err)
		}
		for _, to := range spec.Deps(v) {
			key, ok := w.of[to.String()]
			if !ok {
				return fmt.Errorf("go source: %s: field %s refers to %s, which is not among the imported resources", r.Address, f.Name, to)
			}
			if !slices.Contains(g.needs, key) && key != g.kindKey {
				g.needs = append(g.needs, key)
			}
			w.groups[key].referenced = true
		}
	}
	return nil
}

// order is the groups with every group after those it refers to; ties go
// by spec's order of clouds and kinds, so the output is stable.
func (w *goWriter) order() ([]*kindGroup, error) {
	var out []*kindGroup
	state := map[kindKey]int{} // 1 visiting, 2 done
	var visit func(k kindKey) error
	visit = func(k kindKey) error {
		switch state[k] {
		case 1:
			return fmt.Errorf("go source: the references among %s/%s resources form a cycle", k.p, k.k)
		case 2:
			return nil
		}
		state[k] = 1
		for _, n := range w.groups[k].needs {
			if err := visit(n); err != nil {
				return err
			}
		}
		state[k] = 2
		out = append(out, w.groups[k])
		return nil
	}
	for _, p := range spec.Providers {
		for _, info := range spec.KindsOf(p) {
			if k := (kindKey{p, info.Kind}); w.groups[k] != nil {
				if err := visit(k); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// cloudVar is the variable of imported() holding provider p's *Cloud.
func cloudVar(p spec.Provider) string { return string(p) + "Cloud" }

// refsVar names the handles of a group, in imported() and as a parameter.
func refsVar(k kindKey) string { return string(k.p) + sdkshape.KindType(k.p, k.k) }

// funcName is the function that declares a group.
func funcName(k kindKey) string {
	return "import" + sdkshape.ProviderName(k.p) + sdkshape.KindType(k.p, k.k)
}

// kindRef is the Go type naming a group's kind, such as aws.Queues.
func kindRef(k kindKey) string { return string(k.p) + "." + sdkshape.KindType(k.p, k.k) }

func (w *goWriter) importedFile() ([]byte, error) {
	groups, err := w.order()
	if err != nil {
		return nil, err
	}
	var body strings.Builder
	clouds := w.providers()
	for _, g := range groups {
		if err := w.writeGroup(&body, g); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"github.com/infra-iac/infra/fleet\"\n")
	for _, p := range clouds {
		b.WriteString("\t\"github.com/infra-iac/infra/fleet/" + string(p) + "\"\n")
	}
	b.WriteString(")\n\n")
	b.WriteString("// imported declares the resources `infra import` found, and adopts those\n" +
		"// it was asked to. Calling a cloud's Use again with the same account and\n" +
		"// region is harmless, so a fleet program that has its own may call it too.\n")
	b.WriteString("func imported(f *fleet.Fleet) {\n")
	for _, p := range clouds {
		call := string(p) + ".Use(f, " + strconv.Quote(w.in.Accounts[p]) + ", " + regionExpr(p, w.in.Placement[p]) + ")"
		if w.uses(p) {
			call = cloudVar(p) + " := " + call
		}
		b.WriteString(call + "\n")
	}
	for _, g := range groups {
		call := funcName(g.kindKey) + "(f, " + cloudVar(g.p)
		for _, n := range g.needs {
			call += ", " + refsVar(n)
		}
		call += ")"
		if g.referenced {
			call = refsVar(g.kindKey) + " := " + call
		}
		b.WriteString(call + "\n")
	}
	b.WriteString("}\n")
	b.WriteString(body.String())
	return gofmt("imported.go", b.String())
}

// providers are the clouds imported.go uses: those with an account, a
// placement or a resource, in spec's order.
func (w *goWriter) providers() []spec.Provider {
	var out []spec.Provider
	for _, p := range spec.Providers {
		_, acct := w.in.Accounts[p]
		_, place := w.in.Placement[p]
		if acct || place || w.uses(p) {
			out = append(out, p)
		}
	}
	return out
}

// uses reports whether some group is on provider p.
func (w *goWriter) uses(p spec.Provider) bool {
	for k := range w.groups {
		if k.p == p {
			return true
		}
	}
	return false
}

func (w *goWriter) writeGroup(b *strings.Builder, g *kindGroup) error {
	refs := "map[string]fleet.Ref[" + kindRef(g.kindKey) + "]"
	b.WriteString("\n" + sdkshape.Comment("", fmt.Sprintf("%s declares the imported %s resources on %s.", funcName(g.kindKey), g.k, sdkshape.ProviderName(g.p))))
	fmt.Fprintf(b, "func %s(f *fleet.Fleet, cloud *%s.Cloud", funcName(g.kindKey), g.p)
	for _, n := range g.needs {
		fmt.Fprintf(b, ", %s map[string]fleet.Ref[%s]", refsVar(n), kindRef(n))
	}
	b.WriteString(")")
	if g.referenced {
		b.WriteString(" " + refs + " {\nrefs := " + refs + "{}\n")
	} else {
		b.WriteString(" {\n")
	}
	for i, r := range g.resources {
		call, err := w.declaration(g, r, g.names[i])
		if err != nil {
			return err
		}
		for _, line := range w.in.Notes[r.Address] {
			b.WriteString(noteComment(line))
		}
		if g.referenced {
			call = "refs[" + strconv.Quote(g.names[i]) + "] = " + call
		}
		b.WriteString(call + "\n")
		if w.adopt[r.Address] {
			fmt.Fprintf(b, "fleet.Adopt[%s](f, %s)\n", kindRef(g.kindKey), strconv.Quote(g.names[i]))
		}
	}
	if g.referenced {
		b.WriteString("return refs\n")
	}
	b.WriteString("}\n")
	return nil
}

// noteComment is one note line as // comment lines. A note comes from the
// cloud (a tag, a description), so each character that could end the
// comment, hide text (bidirectional controls) or make the file invalid
// (NUL, a byte order mark, bytes that are not UTF-8) is written escaped.
func noteComment(line string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(line, "\uFFFD") {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || r == '\uFEFF' {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	out := sdkshape.Comment("", b.String())
	if out == "" {
		return "//\n" // a blank line of a note keeps its paragraphs apart
	}
	return out
}
