package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The CLI keeps its state in one directory (WHIPPET_HOME, else
// ~/.whippet): contexts.toml names connection settings, .active_context
// picks one, and tokens/<context>.json holds the token of whippet login.
const (
	contextDefault    = "default"
	contextsFileName  = "contexts.toml"
	activeFileName    = ".active_context"
	tokensDirName     = "tokens"
	homeEnv           = "WHIPPET_HOME"
	homeDirName       = ".whippet"
	privateFileMode   = 0o600
	privateFolderMode = 0o700
)

// contextsFile is contexts.toml: one table per context, keyed by flag
// name (tcp-server-address or tcp_server_address).
type contextsFile struct {
	Contexts map[string]map[string]any `toml:"contexts"`
}

// storedLogin is what whippet login keeps for a context.
type storedLogin struct {
	Address  string `json:"address"`
	Username string `json:"username"`
	Name     string `json:"token_name"`
	Token    string `json:"token"`
}

func (a *app) home() (string, error) {
	if dir, found := a.lookupEnv(homeEnv); found && dir != "" {
		return dir, nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory (set %s): %w", homeEnv, err)
	}
	return filepath.Join(dir, homeDirName), nil
}

// loadContexts reads contexts.toml; a missing file means no contexts.
func (a *app) loadContexts() (map[string]map[string]string, error) {
	home, err := a.home()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(home, contextsFileName)
	var file contextsFile
	if _, err := toml.DecodeFile(path, &file); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]map[string]string{}, nil
		}
		return nil, usagef("%s: %v", path, err)
	}
	contexts := make(map[string]map[string]string, len(file.Contexts))
	for name, settings := range file.Contexts {
		contexts[name] = make(map[string]string, len(settings))
		for key, value := range settings {
			contexts[name][strings.ReplaceAll(key, "_", "-")] = fmt.Sprint(value)
		}
	}
	return contexts, nil
}

// activeContext reads .active_context, or returns the default.
func (a *app) activeContext() (string, error) {
	home, err := a.home()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(home, activeFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return contextDefault, nil
	}
	if err != nil {
		return "", err
	}
	if name := strings.TrimSpace(string(data)); name != "" {
		return name, nil
	}
	return contextDefault, nil
}

// selectContext settles --context (flag, environment, .active_context)
// and returns the settings of that context.
func (a *app) selectContext(flags *pflag.FlagSet) (map[string]string, error) {
	flag := flags.Lookup("context")
	switch {
	case flag.Changed:
		a.sources["context"] = "flag --context"
	default:
		if name, value, found := a.env("context"); found {
			a.contextName, a.sources["context"] = value, "environment "+name
			break
		}
		active, err := a.activeContext()
		if err != nil {
			return nil, usagef("active context: %v", err)
		}
		a.contextName, a.sources["context"] = active, activeFileName
	}
	contexts, err := a.loadContexts()
	if err != nil {
		return nil, err
	}
	settings, found := contexts[a.contextName]
	if !found && a.contextName != contextDefault {
		return nil, &usageError{err: &unknownContextError{name: a.contextName}}
	}
	for key := range settings {
		if known := flags.Lookup(key); known == nil || key == "context" {
			return nil, usagef("context %q: unknown setting %q", a.contextName, key)
		}
	}
	return settings, nil
}

// unknownContextError names a context that contexts.toml lacks.
type unknownContextError struct{ name string }

func (e *unknownContextError) Error() string {
	return fmt.Sprintf("unknown context %q (see whippet context list)", e.name)
}

func (a *app) tokenPath() (string, error) {
	home, err := a.home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, tokensDirName, a.contextName+".json"), nil
}

// loadLogin returns the stored login of the context, or nil.
func (a *app) loadLogin() (*storedLogin, error) {
	path, err := a.tokenPath()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var login storedLogin
	if err := json.Unmarshal(data, &login); err != nil || login.Token == "" {
		return nil, fmt.Errorf("%s: not a stored login (remove it): %v", path, err)
	}
	return &login, nil
}

func (a *app) saveLogin(login *storedLogin) (string, error) {
	path, err := a.tokenPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), privateFolderMode); err != nil {
		return "", err
	}
	data, err := json.Marshal(login)
	if err != nil {
		return "", err
	}
	temporary := path + ".tmp"
	if err := os.WriteFile(temporary, data, privateFileMode); err != nil {
		return "", err
	}
	return path, os.Rename(temporary, path)
}

type contextRow struct {
	Name     string `json:"name"`
	Active   bool   `json:"active"`
	Address  string `json:"tcp_server_address"`
	Username string `json:"username"`
}

func (a *app) contextList(*cobra.Command, []string) error {
	contexts, err := a.loadContexts()
	if err != nil {
		return err
	}
	if _, found := contexts[contextDefault]; !found {
		contexts[contextDefault] = map[string]string{}
	}
	names := make([]string, 0, len(contexts))
	for name := range contexts {
		names = append(names, name)
	}
	sort.Strings(names)
	views := make([]contextRow, len(names))
	t := table{headers: []string{"NAME", "ACTIVE", "TCP_SERVER_ADDRESS", "USERNAME"}}
	for i, name := range names {
		views[i] = contextRow{Name: name, Active: name == a.contextName, Address: contexts[name]["tcp-server-address"],
			Username: contexts[name]["username"]}
		active := ""
		if views[i].Active {
			active = "*"
		}
		t.rows = append(t.rows, []string{name, active, dash(views[i].Address), dash(views[i].Username)})
	}
	t.value = views
	return a.emit(t)
}

func (a *app) contextUse(_ *cobra.Command, args []string) error {
	contexts, err := a.loadContexts()
	if err != nil {
		return err
	}
	if _, found := contexts[args[0]]; !found && args[0] != contextDefault {
		return usagef("unknown context %q (see whippet context list)", args[0])
	}
	home, err := a.home()
	if err != nil {
		return &runError{err: err}
	}
	if err := os.MkdirAll(home, privateFolderMode); err != nil {
		return &runError{err: err}
	}
	if err := os.WriteFile(filepath.Join(home, activeFileName), []byte(args[0]+"\n"), privateFileMode); err != nil {
		return &runError{err: err}
	}
	a.done("active context: %s", args[0])
	return nil
}

func dash(text string) string {
	if text == "" {
		return "-"
	}
	return text
}
