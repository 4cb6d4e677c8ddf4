package engine

import (
	"errors"
	"os"
	"sort"

	"github.com/whippetio/whippet/internal/invariant"
	"golang.org/x/sys/unix"
)

// DirectStorage is the portable Storage: each op runs as one blocking
// system call (pread, pwrite, fdatasync) at Submit, and its completion is
// delivered by Poll, so callers see the same asynchronous contract as on
// io_uring. It serves tests and the fallback backend. Files opened with
// OpenDirect use O_DIRECT when the file system supports it and fall back to
// buffered I/O when it refuses (tmpfs on older kernels).
type DirectStorage struct {
	completed []*Op
	delivered []*Op
}

// NewDirectStorage returns a DirectStorage with no ops in flight.
func NewDirectStorage() *DirectStorage {
	return &DirectStorage{completed: make([]*Op, 0, 64), delivered: make([]*Op, 0, 64)}
}

// Submit runs op now and queues its completion for Poll.
func (s *DirectStorage) Submit(op *Op) {
	invariant.Assert(op.Callback != nil, "op has a callback")
	op.Result, op.Err = 0, nil
	switch op.Code {
	case OpOpen:
		op.Result, op.Err = directOpen(op.Path, op.Flags)
	case OpClose:
		op.Err = unix.Close(int(op.File))
	case OpRead:
		op.Result, op.Err = directRead(int(op.File), op.Buffer, op.Position)
	case OpWrite:
		op.Result, op.Err = directWrite(int(op.File), op.Buffer, op.Position)
	case OpSync:
		op.Err = directSync(int(op.File), op.Flags)
	case OpSize:
		var stat unix.Stat_t
		op.Err = unix.Fstat(int(op.File), &stat)
		op.Result = stat.Size
	case OpTruncate:
		op.Err = unix.Ftruncate(int(op.File), op.Position)
	case OpAllocate:
		op.Err = directAllocate(int(op.File), op.Position)
	case OpRemove:
		op.Err = directRemove(op.Path)
	case OpMkdir:
		op.Err = os.MkdirAll(op.Path, 0o755)
	case OpList:
		op.Names, op.Err = directList(op.Path, op.Names)
	case OpRename:
		if err := unix.Rename(op.Path, op.Target); err != nil {
			op.Err = &os.PathError{Op: "rename", Path: op.Path, Err: err}
		}
	default:
		invariant.Assert(false, "known op code")
	}
	s.completed = append(s.completed, op)
}

// Pending is the number of completions not yet delivered.
func (s *DirectStorage) Pending() int { return len(s.completed) }

// Poll delivers the queued completions, including those of ops their
// callbacks submit, up to countMax of them, and returns how many ran.
func (s *DirectStorage) Poll(countMax int) int {
	delivered := 0
	for delivered < countMax && len(s.completed) > 0 {
		s.delivered = append(s.delivered[:0], s.completed...)
		s.completed = s.completed[:0]
		for index, op := range s.delivered {
			if delivered == countMax {
				s.completed = append(s.completed, s.delivered[index:]...)
				break
			}
			delivered++
			op.Callback(op)
		}
	}
	return delivered
}

func directOpen(path string, flags OpenFlags) (int64, error) {
	mode := unix.O_RDWR | unix.O_CLOEXEC
	if flags&OpenDirectory != 0 {
		mode = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	}
	if flags&OpenCreate != 0 {
		mode |= unix.O_CREAT
	}
	if flags&OpenDirect != 0 {
		fd, err := unix.Open(path, mode|unix.O_DIRECT, 0o644)
		if err == nil {
			return int64(fd), nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return 0, &os.PathError{Op: "open", Path: path, Err: err}
		}
	}
	fd, err := unix.Open(path, mode, 0o644)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return int64(fd), nil
}

// directAllocate allocates fd's space up to size (OpAllocate). Mode 0
// walks the range from 0: blocks already allocated cost one extent
// lookup each, and the file's size grows to size when shorter.
func directAllocate(fd int, size int64) error {
	for {
		err := unix.Fallocate(fd, 0, 0, size)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func directRead(fd int, buffer []byte, position int64) (int64, error) {
	done := 0
	for done < len(buffer) {
		count, err := unix.Pread(fd, buffer[done:], position+int64(done))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return int64(done), err
		}
		if count == 0 {
			break
		}
		done += count
	}
	return int64(done), nil
}

func directWrite(fd int, buffer []byte, position int64) (int64, error) {
	done := 0
	for done < len(buffer) {
		count, err := unix.Pwrite(fd, buffer[done:], position+int64(done))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return int64(done), err
		}
		if count == 0 {
			return int64(done), unix.EIO
		}
		done += count
	}
	return int64(done), nil
}

func directSync(fd int, flags OpenFlags) error {
	for {
		err := unix.Fdatasync(fd)
		if flags&OpenDirectory != 0 && errors.Is(err, unix.EINVAL) {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func directRemove(path string) error {
	err := unix.Unlink(path)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		err = unix.Rmdir(path)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

func directList(path string, names []string) ([]string, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return names, err
	}
	for _, entry := range entries {
		names = append(names, entry.Name())
	}
	sort.Strings(names)
	return names, nil
}
