package classic

import "testing"

// Goal: the named status constants are exactly the 0.8 server's 222 codes,
// with its names and its "known to the classic Go SDK" flags.
func TestStatusCodes(t *testing.T) {
	codes := loadVectors[errorCodeVector](t, "error_codes.json", 222)
	if len(statusTable) != len(codes) {
		t.Fatalf("statusTable has %d codes, want %d", len(statusTable), len(codes))
	}
	for _, code := range codes {
		status := Status(code.Code)
		if status.String() != code.Name || !status.Known() || status.KnownToLegacyGoSDK() != code.Known {
			t.Errorf("status %d: name %q known %v legacy %v; want %q legacy %v", code.Code, status.String(),
				status.Known(), status.KnownToLegacyGoSDK(), code.Name, code.Known)
		}
	}
	for i := 1; i < len(statusTable); i++ {
		if statusTable[i-1].status >= statusTable[i].status {
			t.Fatalf("statusTable not sorted at %d", i)
		}
	}
	if Status(37).Known() || Status(37).String() != "Status(37)" {
		t.Fatal("37 is a 0.9-only code and must be unknown to the classic table")
	}
	if StatusInvalidCommand != 3 || StatusUnauthenticated != 40 || StatusPartitionNotFound != 3007 {
		t.Fatal("well-known status constants moved")
	}
}

// Goal: the code table holds the 47 classic codes in ascending order, and
// codes that exist only in newer protocols are unknown.
func TestCodeTable(t *testing.T) {
	codes := Codes()
	if len(codes) != CodeCount {
		t.Fatalf("%d codes, want %d", len(codes), CodeCount)
	}
	for i, code := range codes {
		if i > 0 && codes[i-1] >= code {
			t.Fatalf("codes not ascending at %d", i)
		}
		if !code.Known() || code.String() == "" {
			t.Fatalf("code %d unknown to its own table", code)
		}
		req, ok := NewRequest(code)
		if !ok || req.Code() != code {
			t.Fatalf("NewRequest(%v) = %v, %v", code, req, ok)
		}
	}
	for _, code := range []Code{0, 13, 40, 45, 123, 124, 606, 999, 60000} {
		if code.Known() {
			t.Errorf("code %d must be unknown to the classic table", code)
		}
		if _, ok := NewRequest(code); ok {
			t.Errorf("NewRequest(%d) succeeded", code)
		}
	}
	allowed := 0
	for _, code := range codes {
		if code.AllowedBeforeLogin() {
			allowed++
		}
	}
	if allowed != 3 || !CodePing.AllowedBeforeLogin() || !CodeLoginUser.AllowedBeforeLogin() ||
		!CodeLoginWithPersonalAccessToken.AllowedBeforeLogin() {
		t.Fatal("only Ping and the two logins are allowed before login")
	}
}
