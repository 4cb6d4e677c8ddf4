package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExitCodes checks what scripts see: usage errors, help, examples, a
// missing server binary and an unreachable server each have their code.
func TestExitCodes(t *testing.T) {
	rows := []struct {
		args []string
		want int
	}{
		{[]string{"examples"}, exitOK},
		{[]string{"help"}, exitOK},
		{[]string{"no-such-kind"}, exitUsage},
		{[]string{"-b", "1", "-T", "1GB", "pp"}, exitUsage},
		{[]string{"--server-binary", filepath.Join(t.TempDir(), "absent"), "pp"}, exitMissing},
		{[]string{"-b", "1", "pp", "tcp", "--server-address", "127.0.0.1:1"}, exitFailed},
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = devNull, devNull
	defer func() { os.Stdout, os.Stderr = stdout, stderr }()
	for _, row := range rows {
		if got := run(row.args); got != row.want {
			t.Errorf("whippet-bench %v exited %d, want %d", row.args, got, row.want)
		}
	}
}
