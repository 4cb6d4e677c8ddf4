package bench

import (
	"strconv"
	"syscall"
	"unsafe"
)

// sysIOURingSetup is io_uring_setup's number in the generic syscall table
// (x86-64 and arm64 alike, since Linux 5.1).
const sysIOURingSetup = 425

// ioURingParams mirrors struct io_uring_params (120 bytes): the kernel
// fills features on a successful setup.
type ioURingParams struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	reserved     [3]uint32
	offsets      [20]uint32 // sq_off and cq_off, unread here
}

// ioURingFeatureNames names the IORING_FEAT_* bits by position.
var ioURingFeatureNames = [...]string{
	"SINGLE_MMAP", "NODROP", "SUBMIT_STABLE", "RW_CUR_POS", "CUR_PERSONALITY", "FAST_POLL", "POLL_32BITS",
	"SQPOLL_NONFIXED", "EXT_ARG", "NATIVE_WORKERS", "RSRC_TAGS", "CQE_SKIP", "LINKED_FILE", "REG_REG_RING",
	"RECVSEND_BUNDLE", "MIN_TIMEOUT", "RW_ATTR", "NO_IOWAIT",
}

// probeIOURing sets up (and at once closes) a two-entry ring to read the
// kernel's feature bits; errno says why it could not (EPERM: disabled or
// filtered, ENOSYS: no io_uring).
func probeIOURing() (features uint32, errno syscall.Errno) {
	var params ioURingParams
	fd, _, errno := syscall.Syscall(sysIOURingSetup, 2, uintptr(unsafe.Pointer(&params)), 0)
	if errno != 0 {
		return 0, errno
	}
	_ = syscall.Close(int(fd)) // a probe ring holds nothing
	return params.features, 0
}

// featureNames lists the names of the set bits (unknown bits as BIT<n>).
func featureNames(features uint32) []string {
	var names []string
	for bit := range 32 {
		if features&(1<<bit) == 0 {
			continue
		}
		if bit < len(ioURingFeatureNames) {
			names = append(names, ioURingFeatureNames[bit])
		} else {
			names = append(names, "BIT"+strconv.Itoa(bit))
		}
	}
	return names
}
