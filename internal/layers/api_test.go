package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// No exported function, method, type, field, variable or constant of a
// package outside internal/ names a type of an internal package: Go
// forbids other modules to import internal packages, so such a parameter
// could not be written by a library user (exact.PairsFor once took an
// internal/memlimit.Budget). The exceptions below can be used from
// another module, or serve only the command layer, as each says.
func TestExportedAPIAvoidsInternalTypes(t *testing.T) {
	allowed := map[string]string{
		"internal/parallel.Task": "an interface of one method, Do(lo, hi int): any value with that method can be passed",
		"internal/safeio.Batch":  "files written together by the command layer; a library writes one figure or page with report.Figure.Save and report.WritePage",
		"internal/safeio.Lock":   "the lock of an experiment's journal, which the experiment runner takes",
	}
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "internal/") || strings.Contains(f, "/internal/") || strings.HasPrefix(f, "docs/") {
			continue
		}
		file, err := parser.ParseFile(fset, "../../"+f, nil, parser.SkipObjectResolution)
		if err != nil {
			continue // listed but not in this checkout, or not Go this build reads
		}
		if file.Name.Name == "main" {
			continue
		}
		internal := map[string]string{}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(path, "/internal/") && !strings.HasPrefix(path, "internal/") {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = path
		}
		if len(internal) == 0 {
			continue
		}
		check := func(what string, expr ast.Node) {
			if expr == nil {
				return
			}
			ast.Inspect(expr, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok {
					if path, ok := internal[id.Name]; ok && allowed[strings.TrimPrefix(path, module)+"."+sel.Sel.Name] == "" {
						t.Errorf("%s: exported %s names %s.%s of %s, which other modules cannot import", fset.Position(sel.Pos()), what, id.Name, sel.Sel.Name, path)
					}
				}
				return true
			})
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedReceiver(d.Recv)) {
					continue
				}
				check(d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							checkExportedType(s.Name.Name, s.Type, check)
						}
					case *ast.ValueSpec:
						for k, n := range s.Names {
							if n.IsExported() {
								check(n.Name, s.Type)
								if s.Type == nil && k < len(s.Values) {
									// The type comes from the value: an
									// internal name there may be it.
									check(n.Name, s.Values[k])
								}
							}
						}
					}
				}
			}
		}
	}
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	typ := recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// checkExportedType checks an exported type's exported fields and methods
// (struct and interface), or its whole definition otherwise.
func checkExportedType(name string, typ ast.Expr, check func(string, ast.Node)) {
	var fields *ast.FieldList
	switch x := typ.(type) {
	case *ast.StructType:
		fields = x.Fields
	case *ast.InterfaceType:
		fields = x.Methods
	default:
		check(name, typ)
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			check(name+" (embedded)", f.Type)
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				check(name+"."+n.Name, f.Type)
			}
		}
	}
}

// Every package of the module has a package comment (go doc shows it).
func TestEveryPackageHasDoc(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Doc}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, doc, _ := strings.Cut(line, "\t")
		if strings.TrimSpace(doc) == "" {
			t.Errorf("package %s has no package comment", path)
		}
	}
}
