package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// OutputDirDefault is iggy-bench's results directory.
const OutputDirDefault = "performance_results"

// Run directory file names besides the charts.
const (
	ReportFile    = "report.json"
	ServerLogFile = "server.log"
)

// WriteRun writes a run directory under parent (OutputDirDefault when
// empty): report.json, the three charts, and the local server's log when
// there is one. An existing directory of the same name is kept and the new
// one gets a numeric suffix. It returns the directory.
func WriteRun(report *Report, parent string, serverLog []byte) (string, error) {
	if parent == "" {
		parent = OutputDirDefault
	}
	hardware := report.Hardware
	config := report.Config.Config
	directory, err := freshDirectory(filepath.Join(parent, RunName(&config, &hardware)))
	if err != nil {
		return "", err
	}
	encoded, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return directory, fmt.Errorf("bench: encode report: %w", err)
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{ReportFile, func(w io.Writer) error { _, err := w.Write(append(encoded, '\n')); return err }},
		{ThroughputChartFile, func(w io.Writer) error { return WriteThroughputChart(w, report) }},
		{LatencyChartFile, func(w io.Writer) error { return WriteLatencyChart(w, report) }},
		{DistributionChartFile, func(w io.Writer) error { return WriteDistributionChart(w, report) }},
	}
	if len(serverLog) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{ServerLogFile, func(w io.Writer) error { _, err := w.Write(serverLog); return err }})
	}
	for _, file := range files {
		var buffer bytes.Buffer
		if err := file.write(&buffer); err != nil {
			return directory, fmt.Errorf("bench: render %s: %w", file.name, err)
		}
		if err := os.WriteFile(filepath.Join(directory, file.name), buffer.Bytes(), 0o644); err != nil {
			return directory, fmt.Errorf("bench: write %s: %w", file.name, err)
		}
	}
	return directory, nil
}

// freshDirectory creates path, or path_2, path_3… when it exists.
func freshDirectory(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("bench: output dir: %w", err)
	}
	candidate := path
	for suffix := 2; ; suffix++ {
		err := os.Mkdir(candidate, 0o755)
		if err == nil {
			return candidate, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("bench: run dir: %w", err)
		}
		candidate = path + "_" + strconv.Itoa(suffix)
	}
}

// ReadReport loads a report.json.
func ReadReport(path string) (*Report, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: read report: %w", err)
	}
	var report Report
	if err := json.Unmarshal(text, &report); err != nil {
		return nil, fmt.Errorf("bench: decode %s: %w", path, err)
	}
	return &report, nil
}
