package wire

// Disposition is what a server does with a request before decoding its
// body (§3 classification rules, §5.3, §15).
type Disposition uint8

// Dispositions.
const (
	// DispositionDrop: the header is invalid; no reply (§2.2).
	DispositionDrop Disposition = iota
	// DispositionDispatch: decode the body as Code and run it.
	DispositionDispatch
	// DispositionLogin: a Register request; run the handshake (§5.2).
	DispositionLogin
	// DispositionLogout: end the session, reply empty OK (§5.5).
	DispositionLogout
	// DispositionStatus: reply with Status and an empty body.
	DispositionStatus
	// DispositionEvict: send an Eviction with Reason and close.
	DispositionEvict
)

// Classification is the outcome of Classify.
type Classification struct {
	Disposition Disposition
	Code        Code
	Status      Status         // for DispositionStatus
	Reason      EvictionReason // for DispositionEvict
	Why         string         // for DispositionDrop
}

// Classify applies the server's classification rules to a request on a
// connection whose bound session is session (0 before login). It reads
// the header and, for a non-zero request_checksum, the body.
func Classify(request *Request, session uint64) Classification {
	header := &request.Header
	if why := header.Invalid(); why != "" {
		return Classification{Disposition: DispositionDrop, Why: why}
	}
	code := header.CommandCode()
	loggedIn := session != 0
	switch {
	case header.Operation.Internal():
		return evict(code, EvictionInvalidRequestOperation) // §15 #5
	case header.Operation == OperationNonReplicated && (code == CodeLoginUser || code == CodeLoginWithPersonalAccessToken):
		return evict(code, EvictionMalformedLogin)
	case header.Operation == OperationRegister:
		return Classification{Disposition: DispositionLogin, Code: code}
	case header.Operation == OperationLogout:
		return Classification{Disposition: DispositionLogout, Code: code}
	case loggedIn && header.Session != session:
		return evict(code, EvictionSessionTooLow) // §15 #6
	}
	if err := VerifyRequestChecksum(request); err != nil {
		return status(code, StatusInvalidFormat)
	}
	if header.Operation != OperationNonReplicated {
		if !loggedIn {
			return evict(code, EvictionNoSession)
		}
		return Classification{Disposition: DispositionDispatch, Code: code}
	}
	switch {
	case !loggedIn && code != CodePing:
		return status(code, StatusUnauthenticated)
	case !code.Known():
		return status(code, StatusInvalidCommand)
	case code.Replicated():
		return status(code, StatusFeatureUnavailable)
	}
	return Classification{Disposition: DispositionDispatch, Code: code}
}

func evict(code Code, reason EvictionReason) Classification {
	return Classification{Disposition: DispositionEvict, Code: code, Reason: reason}
}

func status(code Code, status Status) Classification {
	return Classification{Disposition: DispositionStatus, Code: code, Status: status}
}
