package classic

import (
	"sort"
	"strconv"
)

// Status is the u32 status word of a reply: 0 on success, else an error code
// of the 0.8 server's list (status_codes.go).
type Status uint32

type statusInfo struct {
	status          Status
	name            string
	knownToLegacyGo bool
}

// String returns the 0.8 name of the status, or "Status(n)" when unknown.
func (s Status) String() string {
	if s == StatusOK {
		return "OK"
	}
	if info, ok := lookupStatus(s); ok {
		return info.name
	}
	return "Status(" + strconv.FormatUint(uint64(s), 10) + ")"
}

// Known reports whether s is StatusOK or one of the 0.8 server's codes.
func (s Status) Known() bool {
	_, ok := lookupStatus(s)
	return s == StatusOK || ok
}

// KnownToLegacyGoSDK reports whether the classic Go SDK names this code. It
// maps every other non-zero code to 1 (Error), so a server that can choose
// between two codes should prefer one the SDK knows.
func (s Status) KnownToLegacyGoSDK() bool {
	info, ok := lookupStatus(s)
	return s == StatusOK || (ok && info.knownToLegacyGo)
}

func lookupStatus(s Status) (statusInfo, bool) {
	i := sort.Search(len(statusTable), func(i int) bool { return statusTable[i].status >= s })
	if i < len(statusTable) && statusTable[i].status == s {
		return statusTable[i], true
	}
	return statusInfo{}, false
}
