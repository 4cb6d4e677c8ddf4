package configs

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// applyEnv sets every key named by a WHIPPET_<PATH> variable. Slices of
// tables are addressed by index (WHIPPET_CLUSTER_NODES_0_ADDRESS); index
// len(slice) appends a node.
func applyEnv(config *Config, environ []string) (warnings []string, err error) {
	names := make([]string, 0, len(environ))
	values := make(map[string]string, len(environ))
	for _, entry := range environ {
		key, value, ok := strings.Cut(entry, "=")
		if !ok || !strings.HasPrefix(key, envPrefix) {
			continue
		}
		if key == EnvConfigPath || key == EnvRootUsername || key == EnvRootPassword {
			continue
		}
		names = append(names, key)
		values[key] = value
	}
	sort.Strings(names) // Index order: WHIPPET_CLUSTER_NODES_0_* before _1_*.
	for _, name := range names {
		path := strings.TrimPrefix(name, envPrefix)
		found, err := setPath(reflect.ValueOf(config).Elem(), path, values[name])
		if err != nil {
			return warnings, fmt.Errorf("%w: %s: %v", ErrInvalid, name, err)
		}
		if !found {
			warnings = append(warnings, "unknown environment variable "+name+" ignored")
		}
	}
	return warnings, nil
}

// setPath walks struct fields whose upper-cased TOML key prefixes path.
func setPath(value reflect.Value, path, text string) (bool, error) {
	switch value.Kind() {
	case reflect.Struct:
		return setField(value, path, text)
	case reflect.Slice:
		return setIndex(value, path, text)
	}
	if path != "" {
		return false, nil
	}
	return true, setScalar(value, text)
}

func setField(value reflect.Value, path, text string) (bool, error) {
	kind := value.Type()
	for i := range kind.NumField() {
		key := strings.ToUpper(kind.Field(i).Tag.Get("toml"))
		rest, ok := strings.CutPrefix(path, key)
		if key == "" || !ok || (rest != "" && rest[0] != '_') {
			continue
		}
		field := value.Field(i)
		table := field.Kind() == reflect.Struct || field.Kind() == reflect.Slice
		if rest == "" {
			if table {
				continue
			}
			return true, setScalar(field, text)
		}
		found, err := setPath(field, rest[1:], text)
		if found || err != nil {
			return found, err
		}
	}
	return false, nil
}

func setIndex(value reflect.Value, path, text string) (bool, error) {
	digits, rest, ok := strings.Cut(path, "_")
	index, err := strconv.Atoi(digits)
	if !ok || err != nil || index < 0 {
		return false, nil
	}
	if index > value.Len() {
		return true, fmt.Errorf("index %d skips entries (have %d)", index, value.Len())
	}
	if index == value.Len() {
		value.Set(reflect.Append(value, reflect.New(value.Type().Elem()).Elem()))
	}
	return setPath(value.Index(index), rest, text)
}

func setScalar(value reflect.Value, text string) error {
	if unmarshaler, ok := value.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return unmarshaler.UnmarshalText([]byte(text))
	}
	switch value.Kind() {
	case reflect.String:
		value.SetString(text)
	case reflect.Bool:
		parsed, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		value.SetBool(parsed)
	case reflect.Int, reflect.Int64:
		parsed, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		value.SetInt(parsed)
	case reflect.Uint32, reflect.Uint64:
		parsed, err := strconv.ParseUint(text, 10, value.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer", text)
		}
		value.SetUint(parsed)
	default:
		return fmt.Errorf("key of kind %s cannot be set from the environment", value.Kind())
	}
	return nil
}
