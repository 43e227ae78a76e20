package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's directory, from this package's.
var root = filepath.Join("..", "..")

// eachSource parses every product Go file under dirs (relative to the
// module; the whole module when empty): not tests, not testdata, not
// hidden or harness directories (ending in "test"), not generated files.
func eachSource(t *testing.T, dirs []string, fn func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		start := filepath.Join(root, dir)
		err := filepath.WalkDir(start, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != start && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), "test")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if !ast.IsGenerated(f) {
				rel, _ := filepath.Rel(root, path)
				fn(rel, fset, f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// maxFunctionLines bounds a function of product code: past it, a function
// does several things, and each wants a name.
const maxFunctionLines = 80

func TestFunctionsAreShort(t *testing.T) {
	eachSource(t, nil, func(rel string, fset *token.FileSet, f *ast.File) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFunctionLines {
				t.Errorf("%s: %s is %d lines; split it (at most %d)", rel, fn.Name.Name, lines, maxFunctionLines)
			}
		}
	})
}

// planning are the packages a plan goes through, from the document to the
// rendered rows. They return rows and errors: a panic, a log.Fatal or an
// os.Exit there would turn one bad input into a crash with no row.
var planning = []string{"spec", "engine", "ownership", "operations", "state", "render", "internal/walk"}

func TestPlanningNeverPanicsOrExits(t *testing.T) {
	eachSource(t, planning, func(rel string, fset *token.FileSet, f *ast.File) {
		if f.Name.Name == "main" {
			return // a command beside the package (a benchmark's driver) may exit
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch name := callee(call); name {
			case "panic", "log.Fatal", "log.Fatalf", "log.Fatalln", "os.Exit":
				t.Errorf("%s:%d: %s in a planning package; return a row or an error", rel, fset.Position(call.Pos()).Line, name)
			}
			return true
		})
	})
}

// callee names what a call calls: panic, or pkg.Func.
func callee(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok {
			return x.Name + "." + fn.Sel.Name
		}
	}
	return ""
}
