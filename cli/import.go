package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infra-iac/infra/operations"
	"github.com/infra-iac/infra/render"
	"github.com/infra-iac/infra/spec"
)

type importOptions struct {
	kinds   []string
	regions []string
	prefix  string
	out     string
	format  string
	json    bool
}

func newImport(g *globals) *cobra.Command {
	opts := &importOptions{}
	c := &cobra.Command{
		Use:   "import",
		Short: "List what exists that no fleet owns, and write its declarations (changes nothing in the cloud)",
		Long: `import lists the resources in the fleet's accounts that carry no ownership mark and that
the fleet does not declare, and writes their declarations with every field the cloud
reports: Go code (one function per kind) for a Go fleet, entries of the document for a
.json one, each in the fleet's adopt list. It changes nothing in the cloud; the next plan
shows them as adopt, and apply tags them and records them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runImport(c, g, opts) },
	}
	f := c.Flags()
	f.StringArrayVar(&opts.kinds, "kind", nil, "only this kind (repeatable), such as queues or object-store")
	f.StringArrayVar(&opts.regions, "region", nil, "only this region (repeatable); default: the regions the fleet is in")
	f.StringVar(&opts.prefix, "name-prefix", "", "only names starting with this")
	f.StringVar(&opts.out, "out", "", "write the declarations: a directory for Go (imported.go, and main.go when it holds no Go file), a .json file for a document (merged into it when it exists)")
	f.StringVar(&opts.format, "format", "", "go or document; default: go for a Go fleet program, document for a .json one")
	f.BoolVar(&opts.json, "json", false, "print what was found as JSON")
	return c
}

func runImport(c *cobra.Command, g *globals, opts *importOptions) error {
	format, err := g.importFormat(opts.format)
	if err != nil {
		return err
	}
	kinds, err := parseKinds(opts.kinds)
	if err != nil {
		return err
	}
	ops, doc, err := g.operations(c.Context())
	if err != nil {
		return err
	}
	res, err := ops.Import(c.Context(), operations.ImportRequest{Document: doc,
		Options: operations.ImportOptions{Kinds: kinds, Regions: opts.regions, NamePrefix: opts.prefix}})
	if err != nil {
		return g.remedy(err)
	}
	if format == "go" {
		goExpressible(res)
	}
	if opts.json {
		if err := render.JSON(g.io().Out, res); err != nil {
			return err
		}
	} else {
		renderImport(g, res)
	}
	return writeImport(g, format, opts.out, doc, res.Declarations, opts.json)
}

// writeImport writes the declarations to out as format says (go or
// document), and says what it wrote unless the output is JSON; without
// out it says how to write them. infra import and infra executor invoke
// --operation import share it.
func writeImport(g *globals, format, out string, doc *spec.Document, decls []operations.Declaration, asJSON bool) error {
	if out == "" {
		if len(decls) > 0 && !asJSON {
			fmt.Fprintln(g.io().ErrOut, "Nothing written: run with --out to write the declarations.")
		}
		return nil
	}
	if len(decls) == 0 {
		return nil
	}
	var wrote []string
	var err error
	if format == "go" {
		wrote, err = writeGoImport(out, doc, decls)
	} else {
		wrote, err = writeDocumentImport(out, doc, decls)
	}
	if err != nil {
		return fmt.Errorf("--out %s: %w", spec.PrintableText(out), err)
	}
	if !asJSON {
		fmt.Fprintf(printableWriter{g.io().Out}, "Wrote %s. Next: infra plan shows each as adopt; apply tags it %s=%s and records it.\n",
			strings.Join(wrote, ", "), spec.OwnershipTagKey, doc.Fleet)
	}
	return nil
}

// parseKinds reads --kind: each a kind infra knows.
func parseKinds(names []string) ([]spec.Kind, error) {
	var kinds []spec.Kind
	for _, k := range names {
		if _, ok := spec.Lookup(spec.Kind(k)); !ok {
			return nil, fmt.Errorf("--kind %s: infra knows no such kind; it knows %s", spec.PrintableText(k), kindNames())
		}
		kinds = append(kinds, spec.Kind(k))
	}
	return kinds, nil
}

// kindNames lists the kinds infra knows, for an error.
func kindNames() string {
	var ks []string
	for _, info := range spec.Kinds() {
		ks = append(ks, string(info.Kind))
	}
	return strings.Join(ks, ", ")
}

// importFormat is go or document: as asked, else by what the fleet is.
func (g *globals) importFormat(asked string) (string, error) {
	switch asked {
	case "go", "document":
		return asked, nil
	case "":
	default:
		return "", fmt.Errorf("--format %s: give go or document", spec.PrintableText(asked))
	}
	if g.doc != nil {
		return "go", nil // run by a fleet program: the fleet is Go
	}
	path := g.fleet
	if path == "" {
		path = operations.DefaultFleetPath()
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "go", nil
	}
	return "document", nil
}

// goExpressible keeps the declarations whose references point at what the
// generated code declares too: a Go fleet refers to a resource through
// the handle its declaration returned, and the generated file holds only
// the imported ones. What refers elsewhere is left out, saying so.
func goExpressible(res *operations.ImportResult) {
	decls := res.Declarations
	for changed := true; changed; {
		// Leaving one out may strand another that refers to it.
		changed = false
		in := map[string]bool{}
		for _, d := range decls {
			in[d.Resource.Address] = true
		}
		var kept []operations.Declaration
		for _, d := range decls {
			if to := outsideRef(d.Resource.Spec, in); to != "" {
				res.LeftOut = append(res.LeftOut, operations.LeftOut{Address: d.Resource.Address, Region: d.Resource.Region,
					Why: "it refers to " + to + ", which the generated code does not declare: write its declaration by hand, with that resource's handle"})
				changed = true
				continue
			}
			kept = append(kept, d)
		}
		decls = kept
	}
	res.Declarations = decls
}

// outsideRef is the first address v refers to that in does not hold.
func outsideRef(v any, in map[string]bool) string {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["ref"].(string); ok && len(x) == 1 {
			if !in[ref] {
				return ref
			}
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if to := outsideRef(x[k], in); to != "" {
				return to
			}
		}
	case []any:
		for _, e := range x {
			if to := outsideRef(e, in); to != "" {
				return to
			}
		}
	}
	return ""
}

func renderImport(g *globals, res *operations.ImportResult) {
	// Names, regions and tag values come from the cloud.
	out := printableWriter{g.io().Out}
	for _, a := range res.Accounts {
		fmt.Fprintf(out, "%s: %s in %s ok\n", a.Provider, a.Account, joinList(a.Regions))
	}
	for _, d := range res.Declarations {
		verb := "+ adopt "
		if !d.Adopt {
			verb = "+ create"
		}
		fmt.Fprintf(out, "  %s %s", verb, d.Resource.Address)
		if d.Resource.Region != "" {
			fmt.Fprintf(out, " (%s)", d.Resource.Region)
		}
		fmt.Fprintln(out)
		for _, n := range d.Notes {
			fmt.Fprintf(out, "      note: %s\n", n)
		}
	}
	for _, l := range res.LeftOut {
		fmt.Fprintf(out, "  ! %s left out: %s\n", l.Address, l.Why)
	}
	adopt := res.Adopts()
	fmt.Fprintf(out, "Import: %d to adopt that no fleet owns, %d new, %d left out; passed over %d owned by fleets and %d this fleet knows.\n",
		adopt, len(res.Declarations)-adopt, len(res.LeftOut), res.Owned, res.Known)
}

// writeGoImport writes imported.go into dir, and main.go when dir holds
// no Go file yet, so that a new directory is a fleet program on its own.
func writeGoImport(dir string, doc *spec.Document, decls []operations.Declaration) ([]string, error) {
	in := render.GoImport{Fleet: doc.Fleet, Accounts: doc.Accounts, Placement: doc.Placement, Notes: map[string][]string{}}
	for _, d := range decls {
		in.Resources = append(in.Resources, d.Resource)
		if d.Adopt {
			in.Adopt = append(in.Adopt, d.Resource.Address)
		}
		if len(d.Notes) > 0 {
			in.Notes[d.Resource.Address] = d.Notes
		}
	}
	goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	in.Main = len(goFiles) == 0
	files, err := render.GoSource(in)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var wrote []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(dir, name)
		// O_EXCL: never overwrite what a person may have edited.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return wrote, fmt.Errorf("%s exists already; move it aside, or choose another --out", path)
		}
		if err != nil {
			return wrote, err
		}
		_, werr := f.Write(files[name])
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return wrote, werr
		}
		wrote = append(wrote, path)
	}
	return wrote, nil
}

// writeDocumentImport merges the declarations into the document at path
// when one is there, or writes a new one for the fleet: its header and the
// declarations.
func writeDocumentImport(path string, doc *spec.Document, decls []operations.Declaration) ([]string, error) {
	base := &spec.Document{APIVersion: spec.APIVersion, Fleet: doc.Fleet, Accounts: doc.Accounts, Placement: doc.Placement, Resources: []spec.Resource{}}
	if data, err := os.ReadFile(path); err == nil {
		if base, err = spec.DecodeDocument(data); err != nil {
			return nil, fmt.Errorf("cannot merge into it: %w", err)
		}
		if base.Fleet != doc.Fleet {
			return nil, fmt.Errorf("it is fleet %s's document, not %s's", spec.PrintableText(base.Fleet), doc.Fleet)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	merged, err := operations.MergeImport(base, decls)
	if err != nil {
		return nil, err
	}
	data, err := spec.EncodeDocument(merged)
	if err != nil {
		return nil, err
	}
	// A temporary file beside it, renamed over it: a crash leaves the old
	// document or the new one, and the document keeps its mode. A
	// symlinked document is written where the link points.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".infra-import-*.json")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), mode)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, werr
	}
	return []string{path}, nil
}
