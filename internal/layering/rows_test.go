package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rowsFile holds every diagnostic row id, one constant each.
var rowsFile = filepath.Join("spec", "rows.go")

// rowIDs are the constants of spec/rows.go: name to id.
func rowIDs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rowsFile), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Values) == 1 {
			if lit, ok := v.Values[0].(*ast.BasicLit); ok {
				ids[v.Names[0].Name], _ = strconv.Unquote(lit.Value)
			}
		}
		return true
	})
	if len(ids) == 0 {
		t.Fatalf("%s holds no row ids", rowsFile)
	}
	return ids
}

// isDiagnostic reports whether a type expression is spec's Diagnostic, as
// spec writes it or as its importers do.
func isDiagnostic(inSpec bool, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return inSpec && e.Name == "Diagnostic"
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		return ok && x.Name == "spec" && e.Sel.Name == "Diagnostic"
	}
	return false
}

// specName is the name a spec identifier is used by, from spec itself or
// an importer; "" for any other expression.
func specName(inSpec bool, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		if inSpec {
			return e.Name
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "spec" {
			return e.Sel.Name
		}
	}
	return ""
}

// No row of product code is built without an id from spec/rows.go: every
// Diagnostic literal names its ID, no id is a string written in place (the
// compiler takes an untyped string for a RowID; this test does not), no
// RowID is made by conversion, and every constant of rows.go is used.
func TestEveryRowIsBuiltWithAnID(t *testing.T) {
	ids := rowIDs(t)
	values := map[string]bool{}
	for _, id := range ids {
		values[id] = true
	}
	used := map[string]bool{}
	eachSource(t, nil, func(rel string, fset *token.FileSet, f *ast.File) {
		if rel == rowsFile {
			return
		}
		inSpec := filepath.Dir(rel) == "spec"
		at := func(n ast.Node) string { return rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line) }
		literal := func(e ast.Expr) bool { _, ok := e.(*ast.BasicLit); return ok }
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident, *ast.SelectorExpr:
				if name := specName(inSpec, n.(ast.Expr)); strings.HasPrefix(name, "Row") {
					used[name] = true
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && values[s] {
					t.Errorf("%s: the row id %q is written as a string; use its constant of %s", at(n), s, rowsFile)
				}
			case *ast.CallExpr:
				switch name := specName(inSpec, n.Fun); {
				case name == "RowID":
					t.Errorf("%s: a RowID made by conversion; add a constant to %s", at(n), rowsFile)
				case (name == "Errorf" || name == "Warnf") && len(n.Args) > 0 && literal(n.Args[0]):
					t.Errorf("%s: %s's id is a literal; use a constant of %s", at(n), name, rowsFile)
				}
			case *ast.CompositeLit:
				checkDiagnosticLiterals(t, inSpec, n, at, literal)
			}
			return true
		})
	})
	for name := range ids {
		if !used[name] {
			t.Errorf("spec.%s is in %s but no product code gives that row: remove it, or the table in docs/diagnostics.md lists a rule that is not", name, rowsFile)
		}
	}
}

// checkDiagnosticLiterals checks a Diagnostic literal, or the elements of
// a slice, array or map literal of Diagnostics (whose own type is elided).
func checkDiagnosticLiterals(t *testing.T, inSpec bool, n *ast.CompositeLit, at func(ast.Node) string, literal func(ast.Expr) bool) {
	t.Helper()
	var rows []*ast.CompositeLit
	switch typ := n.Type.(type) {
	case *ast.ArrayType:
		if isDiagnostic(inSpec, typ.Elt) {
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					e = kv.Value
				}
				if c, ok := e.(*ast.CompositeLit); ok && c.Type == nil {
					rows = append(rows, c)
				}
			}
		}
	case *ast.MapType:
		if isDiagnostic(inSpec, typ.Value) {
			for _, e := range n.Elts {
				if c, ok := e.(*ast.KeyValueExpr).Value.(*ast.CompositeLit); ok && c.Type == nil {
					rows = append(rows, c)
				}
			}
		}
	default:
		if isDiagnostic(inSpec, n.Type) {
			rows = append(rows, n)
		}
	}
	for _, row := range rows {
		var id ast.Expr
		for _, e := range row.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "ID" {
					id = kv.Value
				}
			}
		}
		switch {
		case id == nil:
			t.Errorf("%s: a Diagnostic without an ID", at(row))
		case literal(id):
			t.Errorf("%s: a Diagnostic whose ID is a literal; use a constant of %s", at(row), rowsFile)
		}
	}
}
