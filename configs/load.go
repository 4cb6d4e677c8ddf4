package configs

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed server.toml
var defaultTOML string

// DefaultTOML returns the embedded default configuration file.
func DefaultTOML() string { return defaultTOML }

// Names of the environment variables that are not config keys.
const (
	EnvConfigPath   = "WHIPPET_CONFIG_PATH"
	EnvRootUsername = "WHIPPET_ROOT_USERNAME"
	EnvRootPassword = "WHIPPET_ROOT_PASSWORD"
	envPrefix       = "WHIPPET_"
)

// ErrInvalid marks every configuration error; the message names the key.
var ErrInvalid = errors.New("configs: invalid configuration")

// Loaded is a validated configuration and what loading it noticed.
type Loaded struct {
	Config Config
	// Source is the file merged over the default, or "" for none.
	Source string
	// Warnings are harmless oddities worth one log line each, such as an
	// unknown WHIPPET_ variable.
	Warnings []string
}

// Load builds the configuration: the embedded default, then the file at
// path (or at WHIPPET_CONFIG_PATH when path is empty) merged over it, then
// WHIPPET_* variables from environ. The result is validated.
func Load(path string, environ []string) (Loaded, error) {
	var loaded Loaded
	if err := decode(defaultTOML, "embedded default", &loaded.Config); err != nil {
		return loaded, err
	}
	if path == "" {
		path = lookupEnv(environ, EnvConfigPath)
	}
	if path != "" {
		text, err := os.ReadFile(path)
		if err != nil {
			return loaded, fmt.Errorf("%w: read %s: %v", ErrInvalid, path, err)
		}
		if err := decode(string(text), path, &loaded.Config); err != nil {
			return loaded, err
		}
		loaded.Source = path
	}
	warnings, err := applyEnv(&loaded.Config, environ)
	loaded.Warnings = warnings
	if err != nil {
		return loaded, err
	}
	if err := loaded.Config.Validate(); err != nil {
		return loaded, err
	}
	return loaded, nil
}

// decode merges text over config: keys absent from text keep their values.
func decode(text, source string, config *Config) error {
	meta, err := toml.Decode(text, config)
	if err != nil {
		var parseErr toml.ParseError
		if errors.As(err, &parseErr) {
			key := ""
			if parseErr.LastKey != "" {
				key = " " + parseErr.LastKey + ":"
			}
			return fmt.Errorf("%w: %s: line %d:%s %s", ErrInvalid, source, parseErr.Position.Line, key, parseErr.Message)
		}
		return fmt.Errorf("%w: %s: %v", ErrInvalid, source, err)
	}
	if undecoded := meta.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, key := range undecoded {
			keys[i] = key.String()
		}
		sort.Strings(keys)
		return fmt.Errorf("%w: %s: unknown key %s", ErrInvalid, source, strings.Join(keys, ", "))
	}
	return nil
}

func lookupEnv(environ []string, name string) string {
	for _, entry := range environ {
		if key, value, ok := strings.Cut(entry, "="); ok && key == name {
			return value
		}
	}
	return ""
}
