package engine

// OpCode names the file operation an Op asks for.
type OpCode uint8

const (
	// OpOpen opens Path with Flags; Result is the new File.
	OpOpen OpCode = iota + 1
	// OpClose closes File.
	OpClose
	// OpRead reads into Buffer from File at Position; Result is the byte
	// count, short only at end of file.
	OpRead
	// OpWrite writes Buffer to File at Position; Result is the byte count.
	// A short write is reported as an error by the implementation.
	OpWrite
	// OpSync makes File's written data durable (fdatasync). A failure is
	// fatal to the caller: it is never retried.
	OpSync
	// OpSize reports File's size in bytes in Result.
	OpSize
	// OpTruncate sets File's size to Position bytes.
	OpTruncate
	// OpRemove unlinks Path, or removes it when it is an empty directory;
	// a missing path is not an error.
	OpRemove
	// OpMkdir creates Path and its parents; an existing directory is not
	// an error.
	OpMkdir
	// OpList appends the names in directory Path to Names (sorted).
	OpList
	// OpRename renames Path to Target, replacing Target atomically; the
	// change is durable after an OpSync of the directory.
	OpRename
	// OpAllocate allocates File's space up to Position bytes (fallocate,
	// mode 0): blocks never written read as zeros, written ones keep
	// their bytes, and a shorter file grows to Position. The change is
	// durable after an OpSync of the file. A file system that cannot
	// allocate fails it with EOPNOTSUPP.
	OpAllocate
)

// OpenFlags select how OpOpen opens a file.
type OpenFlags uint8

const (
	// OpenCreate creates the file when missing.
	OpenCreate OpenFlags = 1 << iota
	// OpenDirect bypasses the page cache (O_DIRECT): Buffer, Position and
	// the length of every read and write must be multiples of the
	// storage's BlockBytes.
	OpenDirect
	// OpenDirectory opens a directory, so that OpSync makes its entries
	// (created and removed files) durable.
	OpenDirectory
)

// File is a storage-specific handle returned by OpOpen.
type File int32

// Op is one file operation. The caller owns the Op and its Buffer until
// Callback runs: neither may be reused or moved before that, because the
// kernel may hold the buffer's address. An Op carries at most one
// operation in flight.
type Op struct {
	Code     OpCode
	Flags    OpenFlags
	File     File
	Path     string
	Target   string
	Buffer   []byte
	Position int64
	// InPlace marks an OpWrite whose Buffer lies outside the Go heap (the
	// cache's arena) and stays mapped and unchanged until the op
	// completes: a storage may hand it to the kernel without a copy.
	InPlace bool
	// Names receives OpList results; the caller provides its capacity.
	Names []string
	// Result is the opened File, the byte count, or the size.
	Result int64
	// Err is nil on success; errors.Is works with syscall errnos (ENOSPC).
	Err error
	// Callback runs once per Submit, from the storage's completion loop,
	// never from inside Submit.
	Callback func(*Op)
}

// Storage performs file operations and completes them asynchronously.
// Implementations: the shard's io_uring ring, DirectStorage (portable
// pread/pwrite), and enginetest's crashable and faulty storages.
// Completions of different ops may arrive in any order; ops on one file
// that must be ordered are issued by the engine one after the other.
type Storage interface {
	// Submit starts op. Its Callback runs later, exactly once.
	Submit(op *Op)
}

// Kicker is a Storage that holds submitted ops until its owner's loop
// turn ends (io_uring submits once per turn) and can hand them to the
// kernel earlier. A partition uses it to write the first piece of a large
// batch while it copies the rest, in the same turn.
type Kicker interface {
	// Kicks reports whether Kick starts ops before the turn ends; when it
	// does not (ops run inside Submit, or only at the turn's end), writing
	// a batch in pieces would only add a write.
	Kicks() bool
	// Kick hands every op submitted so far to the kernel now. Completions
	// still arrive in a later turn, never inside Kick.
	Kick()
}
