package spec

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rowIDRE is the shape of every row id.
var rowIDRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// rowConst is one Row… constant of rows.go, with the comment that is its
// line in docs/diagnostics.md.
type rowConst struct{ name, id, doc string }

// rowConsts reads rows.go: the ids are its constants, so the test knows
// them without a list kept by hand beside them.
func rowConsts(t *testing.T) []rowConst {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "rows.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []rowConst
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "RowID" || len(v.Names) != 1 || len(v.Values) != 1 {
				t.Fatalf("rows.go: every constant is one Row… of type RowID with its value: %s", v.Names[0].Name)
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Fatalf("rows.go: %s is not a string literal", v.Names[0].Name)
			}
			id, _ := strconv.Unquote(lit.Value)
			out = append(out, rowConst{name: v.Names[0].Name, id: id, doc: strings.TrimSpace(v.Doc.Text())})
		}
	}
	return out
}

func TestRowIDsAreKebabCaseUniqueAndDocumented(t *testing.T) {
	seen := map[string]string{}
	for _, c := range rowConsts(t) {
		if !strings.HasPrefix(c.name, "Row") {
			t.Errorf("%s: a row id's constant is named Row…", c.name)
		}
		if !rowIDRE.MatchString(c.id) || strings.HasSuffix(c.id, "-") || strings.Contains(c.id, "--") {
			t.Errorf("%s = %q is not kebab-case", c.name, c.id)
		}
		if other, dup := seen[c.id]; dup {
			t.Errorf("%s and %s share the id %q: different rules never share one", other, c.name, c.id)
		}
		seen[c.id] = c.name
		if c.doc == "" || strings.Contains(c.doc, "\n") {
			t.Errorf("%s: its comment is one line, its row in docs/diagnostics.md", c.name)
		}
	}
}

// checkRowIDs fails unless every row has an id of rows.go.
func checkRowIDs(t *testing.T, rows []Diagnostic) {
	t.Helper()
	known := map[RowID]bool{}
	for _, c := range rowConsts(t) {
		known[RowID(c.id)] = true
	}
	for _, r := range rows {
		if !rowIDRE.MatchString(string(r.ID)) || !known[r.ID] {
			t.Errorf("row without an id of rows.go: %#v", r)
		}
	}
}

// Every row the package gives for its test corpus — the fixtures, the
// fuzz corpus, the documented examples, and each document the validate
// tests build (validateJSON checks those) — has an id.
func TestEveryRowHasAnID(t *testing.T) {
	_, rows := Compile(nil)
	checkRowIDs(t, rows)
	docs := append([]string(nil), codecFixtures...)
	corpus, _ := filepath.Glob("testdata/fuzz/*/*")
	docs = append(docs, corpus...)
	n := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(data), "go test fuzz v1\n") {
			if data = fuzzBytes(t, path, string(data)); data == nil {
				continue
			}
		}
		if d, err := DecodeDocument(data); err == nil {
			rows := Validate(d)
			n += len(rows)
			checkRowIDs(t, rows)
		}
	}
	for _, ex := range checkExamples {
		rows := validateJSON(t, ex.doc)
		n += len(rows)
	}
	if n < len(checkExamples) {
		t.Fatalf("the corpus gave %d rows: too few to prove anything", n)
	}
}

// fuzzBytes is the []byte argument of a fuzz corpus file, nil for a file
// of other arguments.
func fuzzBytes(t *testing.T, path, text string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "[]byte(") {
		return nil
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// A row in JSON carries its v1 names beside the new ones, and a v1 row
// (address and hint only) still decodes.
func TestDiagnosticJSONKeepsTheV1Names(t *testing.T) {
	d := Errorf(RowWrongKindReference, "aws/aws-instance/web-3", "it accepts: security-group",
		"field %q refers to %s, which is of kind %s", "securityGroup", "aws/object-store/assets", "object-store").
		WithEvidence("aws/object-store/assets")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"severity":"error","id":"wrong-kind-reference","subject":"aws/aws-instance/web-3","address":"aws/aws-instance/web-3",` +
		`"message":"field \"securityGroup\" refers to aws/object-store/assets, which is of kind object-store",` +
		`"evidence":"aws/object-store/assets","resolution":"it accepts: security-group","hint":"it accepts: security-group"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back Diagnostic
	if err := json.Unmarshal(b, &back); err != nil || back != d {
		t.Errorf("round trip: %#v, %v", back, err)
	}
	var v1 Diagnostic
	if err := json.Unmarshal([]byte(`{"severity":"warning","address":"aws/queues/legacy","message":"m","hint":"h"}`), &v1); err != nil {
		t.Fatal(err)
	}
	if v1 != (Diagnostic{Severity: Warning, Subject: "aws/queues/legacy", Message: "m", Resolution: "h"}) {
		t.Errorf("v1 row: %#v", v1)
	}
	b, _ = json.Marshal(Warnf(RowFieldIgnored, "aws/queues/jobs", "", "m"))
	if !strings.Contains(string(b), `"address":"aws/queues/jobs"`) || strings.Contains(string(b), "hint") || strings.Contains(string(b), "evidence") {
		t.Errorf("an empty resolution or evidence is left out, the address never: %s", b)
	}
}

// The order is total over every field, so no two different rows tie.
func TestSortDiagnosticsIsTotal(t *testing.T) {
	base := Diagnostic{Severity: Error, ID: RowUnknownKey, Subject: "s", Message: "m", Resolution: "r", Evidence: "e"}
	vary := []func(*Diagnostic){
		func(d *Diagnostic) { d.Subject = "t" },
		func(d *Diagnostic) { d.Severity = Warning },
		func(d *Diagnostic) { d.ID = RowUnknownKind },
		func(d *Diagnostic) { d.Message = "n" },
		func(d *Diagnostic) { d.Resolution = "s" },
		func(d *Diagnostic) { d.Evidence = "f" },
	}
	for i, f := range vary {
		other := base
		f(&other)
		if !diagnosticLess(base, other) || diagnosticLess(other, base) {
			t.Errorf("variation %d: %v and %v are not strictly ordered", i, base, other)
		}
		if got := SortDiagnostics([]Diagnostic{other, base, other}); len(got) != 2 || got[0] != base {
			t.Errorf("variation %d: %v", i, got)
		}
	}
}

// docs/diagnostics.md lists exactly the ids of rows.go, one line each,
// rendered from the constants' comments. To rewrite it after a change:
//
//	INFRA_UPDATE_DOCS=1 go test ./spec -run TestDiagnosticsDoc
func TestDiagnosticsDoc(t *testing.T) {
	const path = "../docs/diagnostics.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| id | rule |\n|---|---|\n")
	for _, c := range rowConsts(t) {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.id, strings.ReplaceAll(c.doc, "|", `\|`))
	}
	text := string(data)
	begin, end := "<!-- generated:row-ids -->\n", "<!-- end:row-ids -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q block", path, begin, end)
	}
	if text[i+len(begin):j] == b.String() {
		return
	}
	if os.Getenv("INFRA_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(text[:i+len(begin)]+b.String()+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the row-ids table is not rows.go; run INFRA_UPDATE_DOCS=1 go test ./spec -run TestDiagnosticsDoc and review the diff", path)
}
