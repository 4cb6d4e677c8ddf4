package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContexts: contexts.toml supplies settings below flags and the
// environment; context use switches the active context, context list
// marks it, and an unknown context is a usage error that context use can
// still repair.
func TestContexts(t *testing.T) {
	s := startServer(t)
	home := t.TempDir()
	file := "[contexts.local]\ntcp_server_address = \"" + s.address + "\"\nusername = \"iggy\"\npassword = \"iggy\"\n\n" +
		"[contexts.broken]\ntcp-server-address = \"127.0.0.1:1\"\nusername = \"iggy\"\npassword = \"iggy\"\n"
	if err := os.WriteFile(filepath.Join(home, contextsFileName), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"WHIPPET_HOME=" + home}
	run := func(args ...string) result { return runCLI(t, env, "", args...) }

	if r := run("--context", "local", "stream", "create", "via-context"); r.code != exitOK {
		t.Fatalf("--context local\n%s", r)
	}
	wantExit(t, run("--context", "broken", "stream", "list"), exitConnection)
	if r := runCLI(t, append(env, "WHIPPET_CONTEXT=broken", "WHIPPET_TCP_SERVER_ADDRESS="+s.address), "",
		"stream", "list"); r.code != exitOK {
		t.Fatalf("the environment wins over the context\n%s", r)
	}
	if r := run("context", "use", "local"); r.code != exitOK {
		t.Fatalf("context use\n%s", r)
	}
	wantStrings(t, "active context", column(t, run("stream", "list"), "NAME"), "via-context")
	listed := run("context", "list")
	for _, row := range rows(t, listed) {
		if (row["ACTIVE"] == "*") != (row["NAME"] == "local") {
			t.Fatalf("context list marks the wrong context\n%s", listed)
		}
	}
	wantStrings(t, "contexts", column(t, listed, "NAME"), "broken", "default", "local")
	shown := decode[[]contextView](t, run("-o", "json", "context", "show"))
	for _, setting := range shown {
		if setting.Setting == "username" && setting.Source != "context local" {
			t.Fatalf("username source: %+v", setting)
		}
	}

	if err := os.WriteFile(filepath.Join(home, activeFileName), []byte("gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantExit(t, run("stream", "list"), exitUsage, `unknown context "gone"`)
	if r := run("context", "use", "default"); r.code != exitOK {
		t.Fatalf("context use repairs a dangling context\n%s", r)
	}
	wantExit(t, run("context", "use", "nowhere"), exitUsage, "unknown context")
	if err := os.WriteFile(filepath.Join(home, contextsFileName), []byte("[contexts.x]\nfly = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantExit(t, run("--context", "x", "stream", "list"), exitUsage, `unknown setting "fly"`)
}

// TestLoginLogout: whippet login stores a token that later commands use
// without credentials; a second login replaces it; logout revokes it on
// the server and forgets it.
func TestLoginLogout(t *testing.T) {
	s := startServer(t)
	home := t.TempDir()
	address := "WHIPPET_TCP_SERVER_ADDRESS=" + s.address
	anonymous := []string{"WHIPPET_HOME=" + home, address}
	withPassword := append(s.env("iggy", "iggy"), "WHIPPET_HOME="+home)

	wantExit(t, runCLI(t, anonymous, "", "stream", "list"), exitUsage, "no credentials")
	wantExit(t, runCLI(t, anonymous, "", "logout"), exitUsage, "not logged in")
	login := runCLI(t, withPassword, "", "-o", "json", "login", "1day")
	if login.code != exitOK {
		t.Fatalf("login\n%s", login)
	}
	stored := decode[loginView](t, login)
	info, err := os.Stat(stored.StoredAt)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("stored token %s: %v, mode %v", stored.StoredAt, err, info)
	}
	if r := runCLI(t, anonymous, "", "stream", "create", "after-login"); r.code != exitOK {
		t.Fatalf("the stored token logs in\n%s", r)
	}
	if r := runCLI(t, withPassword, "", "login"); r.code != exitOK {
		t.Fatalf("second login\n%s", r)
	}
	tokens := column(t, s.ok(t, "pat", "list"), "NAME")
	if len(tokens) != 1 || !strings.HasPrefix(tokens[0], "whippet-cli-") {
		t.Fatalf("tokens after two logins: %q", tokens)
	}
	if r := runCLI(t, anonymous, "", "logout"); r.code != exitOK {
		t.Fatalf("logout\n%s", r)
	}
	wantStrings(t, "tokens after logout", column(t, s.ok(t, "pat", "list"), "NAME"))
	wantExit(t, runCLI(t, anonymous, "", "stream", "list"), exitUsage, "no credentials")
	wantExit(t, runCLI(t, anonymous, "", "login"), exitUsage, "--username and --password")
}
