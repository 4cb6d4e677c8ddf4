package shard

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/whippetio/whippet/wire"
)

// Snapshot entry types (PROTOCOL.md §6.1).
const (
	snapshotFilesystem = 1
	snapshotProcesses  = 2
	snapshotResources  = 3
	snapshotTest       = 4
	snapshotLogs       = 5
	snapshotConfig     = 6
)

// snapshotFilesMax bounds the data files one filesystem overview lists.
const snapshotFilesMax = 100_000

// getSnapshot builds the diagnostic ZIP archive: stored or deflated (the
// other compressions fall back to deflate, which every unzip reads), one
// text file per requested type. An archive larger than a frame is status
// 9000 (§7.7).
func getSnapshot(f *front, c *call, view *frontView) {
	if !view.access(c.userID).readServers() {
		c.status = wire.StatusUnauthorized
		return
	}
	request := c.body.(*wire.GetSnapshot)
	method := zip.Deflate
	if request.Compression == wire.SnapshotStored {
		method = zip.Store
	}
	types := request.Types
	if len(types) == 0 || slices.Contains(types, wire.SnapshotTypeAll) {
		types = []uint8{snapshotFilesystem, snapshotProcesses, snapshotResources, snapshotTest, snapshotLogs, snapshotConfig}
	}
	var archive bytes.Buffer
	writer := zip.NewWriter(&archive)
	for _, kind := range types {
		name, text := f.snapshotEntry(kind)
		if name == "" {
			c.status = wire.StatusInvalidCommand
			return
		}
		entry, err := writer.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err == nil {
			_, err = entry.Write([]byte(text))
		}
		if err != nil {
			c.status = wire.StatusError
			return
		}
	}
	if writer.Close() != nil || archive.Len() > frameBytesMax-wire.HeaderBytes {
		c.status = wire.StatusSnapshotFileCompletionFailed
		return
	}
	raw := wire.Raw(archive.Bytes())
	c.payload = &raw
}

// snapshotEntry returns one archive file; an empty name is an unknown type.
func (f *front) snapshotEntry(kind uint8) (string, string) {
	switch kind {
	case snapshotFilesystem:
		return "filesystem_overview.txt", filesystemOverview(f.server.options.DataPath)
	case snapshotProcesses:
		return "process_list.txt", processList()
	case snapshotResources:
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return "resource_usage.txt", err.Error()
		}
		return "resource_usage.txt", string(status)
	case snapshotTest:
		return "test.txt", "test\n"
	case snapshotLogs:
		return "server_logs.txt", "whippet-server writes its log to stderr; collect it from the service manager\n"
	case snapshotConfig:
		return "server_config.txt", f.server.options.ConfigText
	}
	return "", ""
}

// filesystemOverview lists the data directory: path and size per file.
func filesystemOverview(root string) string {
	var out strings.Builder
	count := 0
	_ = filepath.WalkDir(root, func(path string, entry fs.DirEntry, err error) error {
		if err != nil || count >= snapshotFilesMax {
			return nil // an unreadable entry is left out of an overview
		}
		count++
		info, infoErr := entry.Info()
		if infoErr != nil {
			return nil
		}
		fmt.Fprintf(&out, "%12d %s %s\n", info.Size(), info.Mode(), path)
		return nil
	})
	return out.String()
}

// processList lists the host's processes: pid and command name.
func processList() string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	for _, entry := range entries {
		name := entry.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		command, readErr := os.ReadFile(filepath.Join("/proc", name, "comm"))
		if readErr != nil {
			continue // the process ended while we listed
		}
		fmt.Fprintf(&out, "%8s %s", name, command)
	}
	return out.String()
}
