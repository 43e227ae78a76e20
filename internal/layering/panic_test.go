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

// planning are the packages a plan goes through, from the document to the
// rendered rows. They return rows and errors: a panic, a log.Fatal or an
// os.Exit there would turn one bad input into a crash with no row.
var planning = []string{"spec", "engine", "ownership", "operations", "state", "render", "internal/walk"}

func TestPlanningNeverPanicsOrExits(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range planning {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasSuffix(d.Name(), "test") {
				return filepath.SkipDir // spec/spectest builds documents for tests
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if f.Name.Name == "main" {
				return nil // a command beside the package (a benchmark's driver) may exit
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if name := callee(call); name == "panic" || name == "log.Fatal" || name == "log.Fatalf" || name == "log.Fatalln" || name == "os.Exit" {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d: %s in a planning package; return a row or an error", rel, fset.Position(call.Pos()).Line, name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
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
