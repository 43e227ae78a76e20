package fleet_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportedIdentifierIsDocumented holds the SDK to its promise of
// godoc on every exported identifier, generated code included.
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	for _, dir := range []string{".", "aws", "scaleway"} {
		fset := token.NewFileSet()
		packageDoc := false
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				packageDoc = true
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && d.Doc == nil && exportedReceiver(d) {
						t.Errorf("%s: %s has no doc comment", fset.Position(d.Pos()), d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
								t.Errorf("%s: type %s has no doc comment", fset.Position(s.Pos()), s.Name.Name)
							}
							if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
								for _, field := range st.Fields.List {
									for _, n := range field.Names {
										if n.IsExported() && field.Doc == nil && field.Comment == nil {
											t.Errorf("%s: field %s.%s has no doc comment", fset.Position(n.Pos()), s.Name.Name, n.Name)
										}
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
									t.Errorf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name)
								}
							}
						}
					}
				}
			}
		}
		if !packageDoc {
			t.Errorf("%s: the package has no doc comment", dir)
		}
	}
}

func exportedReceiver(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
