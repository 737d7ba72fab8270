package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A pipeline names its sampling methods by their packages' constants
// (gibbs.Name, gwg.MultiName, …), never by string literals, so that a
// renamed or misspelt method is a compile error rather than an "unknown
// method" at run time, and `grep Name` finds every use. The check is
// syntactic: a string literal given to a function's parameter named
// "method" (sampler.Single, sampler.RegisterDevice, helpers alike), or to
// a struct field named Method or method (sampler.Stage, the experiments'
// method tables), in any non-test file of the module.
func TestMethodsNamedByConstant(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		for _, name := range strings.Fields(f[2]) {
			file, err := parser.ParseFile(fset, filepath.Join(f[1], name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			pkgs[f[0]] = append(pkgs[f[0]], file)
		}
	}
	for _, at := range literalMethodNames(fset, pkgs) {
		t.Errorf("%s: a method named by a string literal; use its package's constant (gibbs.Name, …)", at)
	}
}

// The check finds what it looks for: a call, a keyed and a positional
// field, each through a package import and within the package.
func TestMethodsNamedByConstantFinds(t *testing.T) {
	const sampler = `package sampler
type Stage struct { Method string; Iters int }
func Single(method string, iters int) Stage { return Stage{Method: method, Iters: iters} }`
	const user = `package exp
import "example/sampler"
type row struct { label, method string }
func helper(label, method string) {}
var (
	a = sampler.Single("gibbs", 1)
	b = sampler.Stage{Method: "pt", Iters: 2}
	c = row{"label", "gwg"}
	d = sampler.Single(name, 1)
	e = row{label: "gibbs", method: name}
)
const name = "dmala"
func f() { helper("a label", "sw") }`
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	for path, src := range map[string]string{"example/sampler": sampler, "example/exp": user} {
		file, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[path] = []*ast.File{file}
	}
	got := literalMethodNames(fset, pkgs)
	want := []string{`"gibbs"`, `"pt"`, `"gwg"`, `"sw"`}
	if len(got) != len(want) {
		t.Fatalf("found %d literals, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("finding %d is %s, want the literal %s", i, got[i], w)
		}
	}
}

// literalMethodNames lists "file:line: literal" for every string literal
// given to a parameter named method or a field named Method or method.
func literalMethodNames(fset *token.FileSet, pkgs map[string][]*ast.File) []string {
	params := map[string]map[string][]string{} // package → function → parameter names
	fields := map[string]map[string][]string{} // package → struct type → field names
	for path, files := range pkgs {
		params[path], fields[path] = map[string][]string{}, map[string][]string{}
		for _, file := range files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						params[path][d.Name.Name] = names(d.Type.Params)
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						if ts, ok := spec.(*ast.TypeSpec); ok {
							if st, ok := ts.Type.(*ast.StructType); ok {
								fields[path][ts.Name.Name] = names(st.Fields)
							}
						}
					}
				}
			}
		}
	}
	var found []string
	report := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
		}
	}
	isMethod := func(name string) bool { return name == "method" || name == "Method" }
	for path, files := range pkgs {
		for _, file := range files {
			imports := map[string]string{}
			for _, imp := range file.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				name := p[strings.LastIndex(p, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				imports[name] = p
			}
			// resolve gives the package and name an identifier or a
			// package-qualified selector refers to.
			resolve := func(e ast.Expr) (string, string) {
				switch x := e.(type) {
				case *ast.Ident:
					return path, x.Name
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && imports[id.Name] != "" {
						return imports[id.Name], x.Sel.Name
					}
				}
				return "", ""
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					p, name := resolve(x.Fun)
					ps := params[p][name]
					for i, arg := range x.Args {
						if i < len(ps) && isMethod(ps[i]) {
							report(arg)
						}
					}
				case *ast.CompositeLit:
					p, name := resolve(x.Type)
					fs := fields[p][name]
					for i, el := range x.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if key, ok := kv.Key.(*ast.Ident); ok && isMethod(key.Name) {
								report(kv.Value)
							}
						} else if i < len(fs) && isMethod(fs[i]) {
							report(el)
						}
					}
				}
				return true
			})
		}
	}
	sortPositions(found)
	return found
}

// names flattens a field list's names (one "_" for an unnamed field).
func names(fl *ast.FieldList) []string {
	var out []string
	if fl == nil {
		return nil
	}
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			out = append(out, "_")
		}
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
	}
	return out
}

// sortPositions orders "file:line:col: …" findings by file, then line.
func sortPositions(s []string) {
	key := func(x string) (string, int) {
		parts := strings.SplitN(x, ":", 3)
		line, _ := strconv.Atoi(parts[1])
		return parts[0], line
	}
	sort.Slice(s, func(i, j int) bool {
		fi, li := key(s[i])
		fj, lj := key(s[j])
		return fi < fj || fi == fj && li < lj
	})
}
