package wire

import "testing"

// TestClassify walks the classification rules of §3, §5.3 and §15 one row
// at a time, before and after login.
func TestClassify(t *testing.T) {
	client := Uint128{Lo: 1}
	read := func(code Code, session uint64) RequestHeader {
		return RequestHeader{Client: client, Request: 1, Session: session, Operation: OperationNonReplicated, Code: code}
	}
	write := func(operation Operation, session uint64) RequestHeader {
		return RequestHeader{Client: client, Request: 1, Session: session, Operation: operation}
	}
	rows := []struct {
		name    string
		header  RequestHeader
		session uint64
		want    Classification
	}{
		{"ping before login", read(CodePing, 0), 0, Classification{Disposition: DispositionDispatch, Code: CodePing}},
		{"read before login", read(CodeGetStreams, 0), 0, Classification{DispositionStatus, CodeGetStreams, StatusUnauthenticated, 0, ""}},
		{"legacy login", read(CodeLoginUser, 0), 0, Classification{DispositionEvict, CodeLoginUser, 0, EvictionMalformedLogin, ""}},
		{"legacy token login", read(CodeLoginWithPersonalAccessToken, 5), 5, Classification{DispositionEvict, CodeLoginWithPersonalAccessToken, 0, EvictionMalformedLogin, ""}},
		{"register", RequestHeader{Client: client, Operation: OperationRegister}, 0, Classification{Disposition: DispositionLogin, Code: CodeLoginRegister}},
		{"logout before login", write(OperationLogout, 0), 0, Classification{Disposition: DispositionLogout, Code: CodeLogoutUser}},
		{"write before login", write(OperationCreateStream, 0), 0, Classification{DispositionEvict, CodeCreateStream, 0, EvictionNoSession, ""}},
		{"internal operation", write(OperationTruncatePartition, 5), 5, Classification{DispositionEvict, 0, 0, EvictionInvalidRequestOperation, ""}},
		{"stale session", write(OperationCreateStream, 4), 5, Classification{DispositionEvict, CodeCreateStream, 0, EvictionSessionTooLow, ""}},
		{"write", write(OperationSendMessages, 5), 5, Classification{Disposition: DispositionDispatch, Code: CodeSendMessages}},
		{"read", read(CodePollMessages, 5), 5, Classification{Disposition: DispositionDispatch, Code: CodePollMessages}},
		{"unknown code", read(60000, 5), 5, Classification{DispositionStatus, 60000, StatusInvalidCommand, 0, ""}},
		{"write code as a read", read(CodeCreateStream, 5), 5, Classification{DispositionStatus, CodeCreateStream, StatusFeatureUnavailable, 0, ""}},
		{"zero client", RequestHeader{Operation: OperationNonReplicated, Code: CodePing}, 0, Classification{Disposition: DispositionDrop, Why: "client id is zero"}},
	}
	for _, row := range rows {
		request := Request{Header: row.header}
		if got := Classify(&request, row.session); got != row.want {
			t.Errorf("%s: %+v, want %+v", row.name, got, row.want)
		}
	}
	body := []byte{1, 4, 1, 0, 0, 0}
	request := Request{Header: read(CodeGetStream, 5), Body: body}
	request.Header.RequestChecksum = Uint128{Lo: Checksum(body) + 1}
	if got := Classify(&request, 5); got.Disposition != DispositionStatus || got.Status != StatusInvalidFormat {
		t.Errorf("checksum mismatch: %+v", got)
	}
	request.Header.RequestChecksum = Uint128{Lo: Checksum(body)}
	if got := Classify(&request, 5); got.Disposition != DispositionDispatch {
		t.Errorf("matching checksum: %+v", got)
	}
}

// TestClassifyGolden: every golden request, on a connection bound to the
// session it carries, is classified as the reference server answered it.
func TestClassifyGolden(t *testing.T) {
	var vectors []requestVector
	loadJSON(t, "requests.json", &vectors)
	special := map[string]Classification{
		"GetClusterMetadata (before login)": {DispositionStatus, CodeGetClusterMetadata, StatusUnauthenticated, 0, ""},
		"Unknown command 60000":             {DispositionStatus, 60000, StatusInvalidCommand, 0, ""},
		"LoginRegister":                     {Disposition: DispositionLogin, Code: CodeLoginRegister},
		"LoginRegisterWithPat":              {Disposition: DispositionLogin, Code: CodeLoginRegister},
		"LogoutUser":                        {Disposition: DispositionLogout, Code: CodeLogoutUser},
	}
	for _, vector := range vectors {
		request, _, err := DecodeRequest(unhex(t, vector.Frame))
		if err != nil {
			t.Fatal(err)
		}
		want, ok := special[vector.Command]
		if !ok {
			want = Classification{Disposition: DispositionDispatch, Code: Code(vector.Code)}
		}
		if got := Classify(&request, request.Header.Session); got != want {
			t.Errorf("%s: %+v, want %+v", vector.Command, got, want)
		}
	}
}
