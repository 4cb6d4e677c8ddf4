package tidy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	module           = "github.com/whippetio/whippet"
	fileLinesMax     = 1000
	functionLinesMax = 70
)

// allowedImports is the house table: a room may import only these rooms of
// ours (internal/ always, and its own subpackages).
var allowedImports = map[string][]string{
	"ring":     {},
	"wire":     {},
	"vsr":      {},
	"engine":   {"wire"},
	"shard":    {"ring", "wire", "engine", "vsr"},
	"client":   {"wire"},
	"configs":  {"engine", "shard", "vsr"},
	"bench":    {"client", "wire"},
	"cmd":      {"*"},
	"internal": {},
}

type goFile struct {
	path string // relative to the module root, slash-separated
	fset *token.FileSet
	ast  *ast.File
	text []byte
}

func loadFiles(t *testing.T) []goFile {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "local_data") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		parsed, err := parser.ParseFile(fset, path, text, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, goFile{filepath.ToSlash(rel), fset, parsed, text})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files found under the module root")
	}
	return files
}

func generated(f goFile) bool {
	return ast.IsGenerated(f.ast) || strings.Contains(f.path, "/fbs/")
}

func room(path string) string {
	first, _, _ := strings.Cut(path, "/")
	return first
}

func TestTidy(t *testing.T) {
	for _, f := range loadFiles(t) {
		if generated(f) {
			continue
		}
		if lines := strings.Count(string(f.text), "\n"); lines > fileLinesMax {
			t.Errorf("%s: %d lines, more than %d: split it by concern", f.path, lines, fileLinesMax)
		}
		if strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		checkFunctions(t, f)
		checkBannedCalls(t, f)
	}
}

func checkFunctions(t *testing.T, f goFile) {
	for _, decl := range f.ast.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start := f.fset.Position(fn.Pos()).Line
		end := f.fset.Position(fn.End()).Line
		if lines := end - start + 1; lines > functionLinesMax {
			t.Errorf("%s:%d: func %s has %d lines, more than %d", f.path, start, fn.Name.Name, lines, functionLinesMax)
		}
	}
}

func checkBannedCalls(t *testing.T, f goFile) {
	inCmd := room(f.path) == "cmd"
	inVSR := strings.HasPrefix(f.path, "vsr/") && !strings.HasPrefix(f.path, "vsr/sim/")
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch node := n.(type) {
		case *ast.GoStmt:
			if inVSR {
				t.Errorf("%s:%d: goroutine in vsr/", f.path, f.fset.Position(node.Pos()).Line)
			}
		case *ast.CallExpr:
			checkCall(t, f, node, inCmd, inVSR)
		}
		return true
	})
}

func checkCall(t *testing.T, f goFile, call *ast.CallExpr, inCmd, inVSR bool) {
	line := f.fset.Position(call.Pos()).Line
	if ident, ok := call.Fun.(*ast.Ident); ok && ident.Name == "recover" && !inCmd {
		t.Errorf("%s:%d: recover() outside cmd/: a broken shard must stop the process", f.path, line)
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return
	}
	name := pkg.Name + "." + sel.Sel.Name
	if !inCmd && pkg.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print") {
		t.Errorf("%s:%d: %s outside cmd/: log through log/slog", f.path, line, name)
	}
	if inVSR && (name == "time.Now" || name == "time.Sleep" || pkg.Name == "rand") {
		t.Errorf("%s:%d: %s in vsr/: time is Tick(), randomness is injected", f.path, line, name)
	}
}

func TestImports(t *testing.T) {
	var problems []string
	for _, f := range loadFiles(t) {
		if strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		from := room(f.path)
		allowed, known := allowedImports[from]
		if !known {
			problems = append(problems, f.path+": folder is not a room of the house table")
			continue
		}
		for _, spec := range f.ast.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			if !strings.HasPrefix(path, module+"/") {
				continue
			}
			to := room(strings.TrimPrefix(path, module+"/"))
			if !importAllowed(from, to, allowed) {
				problems = append(problems, f.path+" imports "+path)
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Errorf("import table broken: %s", p)
	}
}

func importAllowed(from, to string, allowed []string) bool {
	if to == from || to == "internal" {
		return true
	}
	for _, a := range allowed {
		if a == "*" || a == to {
			return true
		}
	}
	return false
}

// TestImportAllowedRejects guards the checker itself: a leaf importing a
// room above it must be reported.
func TestImportAllowedRejects(t *testing.T) {
	if importAllowed("wire", "engine", allowedImports["wire"]) {
		t.Fatal("wire may not import engine")
	}
	if importAllowed("engine", "shard", allowedImports["engine"]) {
		t.Fatal("engine may not import shard")
	}
	if !importAllowed("shard", "ring", allowedImports["shard"]) {
		t.Fatal("shard may import ring")
	}
}
