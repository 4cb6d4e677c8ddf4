package wire

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestGoldenStatusCodes checks that every code of error_codes.json has a
// MixedCaps constant Status<Name> with its value (Go initialisms applied),
// and that String and Message return the Iggy name and message format.
func TestGoldenStatusCodes(t *testing.T) {
	var vectors []statusVector
	loadJSON(t, "error_codes.json", &vectors)
	if len(vectors) != goldenStatusCount {
		t.Fatalf("error_codes.json has %d codes, want %d", len(vectors), goldenStatusCount)
	}
	constants := statusConstants(t)
	checked := 0
	for _, vector := range vectors {
		name := "Status" + goInitialisms(vector.Name)
		value, ok := constants[name]
		if !ok {
			t.Errorf("no constant %s for code %d", name, vector.Code)
			continue
		}
		status := Status(vector.Code)
		if value != uint64(vector.Code) || status.String() != vector.Name ||
			status.Message() != vector.MessageFormat || !status.Known() {
			t.Errorf("%s = %d %q %q, want %d %q %q", name, value, status.String(), status.Message(),
				vector.Code, vector.Name, vector.MessageFormat)
			continue
		}
		if !errors.Is(error(status), status) || StatusOf(status) != status {
			t.Errorf("%s does not round-trip as an error", name)
			continue
		}
		checked++
	}
	if checked != goldenStatusCount || len(constants) != goldenStatusCount+1 { // + StatusOK
		t.Fatalf("checked %d codes of %d; %d constants", checked, goldenStatusCount, len(constants))
	}
	if Status(65000).Known() || Status(65000).String() != "Status(65000)" {
		t.Fatal("an unknown status is reported as known")
	}
}

var initialism = regexp.MustCompile(`(Id|Tcp|Http|Ip|Api|Url|Tls|Jwt|Jwks|Json|Utf8|Quic)([A-Z]|$)`)

func goInitialisms(name string) string {
	for {
		replaced := initialism.ReplaceAllStringFunc(name, func(match string) string {
			word := strings.TrimRight(match, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
			return strings.ToUpper(word) + match[len(word):]
		})
		if replaced == name {
			return name
		}
		name = replaced
	}
}

// statusConstants parses status_table.go and returns its Status constants.
func statusConstants(t *testing.T) map[string]uint64 {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "status_table.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	constants := map[string]uint64{}
	for _, decl := range file.Decls {
		general, ok := decl.(*ast.GenDecl)
		if !ok || general.Tok != token.CONST {
			continue
		}
		for _, spec := range general.Specs {
			value := spec.(*ast.ValueSpec)
			literal := value.Values[0].(*ast.BasicLit)
			number, err := strconv.ParseUint(literal.Value, 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			constants[value.Names[0].Name] = number
		}
	}
	return constants
}
