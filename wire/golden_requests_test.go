package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

const (
	goldenRequestCount = 55
	goldenReplyCount   = 63
	goldenStatusCount  = 237
)

// TestGoldenRequests decodes every golden request frame, compares header
// and typed body with the vector's fields, and encodes the expected value
// back into the identical frame. It fails if any vector goes unchecked.
func TestGoldenRequests(t *testing.T) {
	var vectors []requestVector
	loadJSON(t, "requests.json", &vectors)
	if len(vectors) != goldenRequestCount {
		t.Fatalf("requests.json has %d vectors, want %d", len(vectors), goldenRequestCount)
	}
	expected := expectedRequests()
	checked := 0
	for _, vector := range vectors {
		t.Run(vector.Command, func(t *testing.T) {
			checkGoldenRequest(t, vector, expected)
			checked++
		})
	}
	if checked != goldenRequestCount {
		t.Fatalf("checked %d request vectors, want %d", checked, goldenRequestCount)
	}
}

func checkGoldenRequest(t *testing.T, vector requestVector, expected map[string]Decoder) {
	frame := unhex(t, vector.Frame)
	payload := unhex(t, vector.Payload)
	request, consumed, err := DecodeRequest(frame)
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	if consumed != len(frame) || !bytes.Equal(request.Body, payload) {
		t.Fatalf("consumed %d of %d, body %x, want %x", consumed, len(frame), request.Body, payload)
	}
	checkGoldenRequestHeader(t, vector, &request.Header)
	code := request.Header.CommandCode()
	wantCode := Code(vector.Code)
	if wantCode == CodeLoginRegisterWithPAT {
		wantCode = CodeLoginRegister // the header cannot tell; the body shape does
	}
	if code != wantCode {
		t.Fatalf("CommandCode = %d, want %d", code, wantCode)
	}
	var body Decoder
	switch {
	case vector.Command == "SendMessages":
		body = expectedSendMessages(t)
	case !code.Known():
		if len(payload) != 0 {
			t.Fatalf("unknown command with a body")
		}
		if _, ok := NewRequestBody(code); ok {
			t.Fatalf("NewRequestBody(%d) ok for an unknown code", code)
		}
	default:
		body = expected[vector.Command]
		if body == nil {
			t.Fatalf("no expected value for %q", vector.Command)
		}
	}
	if body != nil {
		decoded, ok := NewRequestBody(Code(vector.Code))
		if !ok {
			t.Fatalf("NewRequestBody(%d) unknown", vector.Code)
		}
		if err := DecodeAll(decoded, payload); err != nil {
			t.Fatalf("decode body: %v", err)
		}
		if !reflect.DeepEqual(normalize(decoded), normalize(body)) {
			t.Fatalf("decoded body\n%#v\nwant\n%#v", decoded, body)
		}
	}
	encoded := make([]byte, RequestBytes(body))
	if EncodeRequest(encoded, request.Header, body) != len(frame) || !bytes.Equal(encoded, frame) {
		t.Fatalf("encoded frame\n%x\nwant\n%x", encoded, frame)
	}
}

func checkGoldenRequestHeader(t *testing.T, vector requestVector, header *RequestHeader) {
	var want requestVectorHeader
	if err := json.Unmarshal(vector.Header, &want); err != nil {
		t.Fatal(err)
	}
	if reason := header.Invalid(); reason != "" {
		t.Fatalf("golden header invalid: %s", reason)
	}
	if header.Client != parseClient(t, want.Client) {
		t.Fatalf("client %+v, want %s", header.Client, want.Client)
	}
	if header.Size != want.Size || header.Request != want.Request || header.Session != want.Session {
		t.Fatalf("size/request/session %d/%d/%d, want %d/%d/%d", header.Size, header.Request, header.Session,
			want.Size, want.Request, want.Session)
	}
	if uint64(header.Operation) != leadingNumber(t, want.Operation) {
		t.Fatalf("operation %d, want %s", header.Operation, want.Operation)
	}
	if uint64(header.Code) != leadingNumber(t, want.Code) {
		t.Fatalf("code @196 %d, want %s", header.Code, want.Code)
	}
	if header.Operation != Code(vector.Code).Operation() {
		t.Fatalf("operation %d, but code %d travels under %d", header.Operation, vector.Code,
			Code(vector.Code).Operation())
	}
}

// normalize maps nil and empty slices alike, so DeepEqual compares values,
// not how a decoder happened to allocate.
func normalize(value any) any {
	switch typed := value.(type) {
	case *SendMessages:
		copied := *typed
		return &copied
	case *CreateStream:
		copied := *typed
		if len(copied.Options) == 0 {
			copied.Options = nil
		}
		return &copied
	case *UpdateStream:
		copied := *typed
		if len(copied.Options) == 0 {
			copied.Options = nil
		}
		return &copied
	}
	return value
}
