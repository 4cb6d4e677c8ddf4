package wire_test

import (
	"fmt"

	"github.com/whippetio/whippet/wire"
)

// A server front: gather bytes into a frame, decode the header, decode the
// body into the command's type, answer with a reply in the connection's
// buffer.
func Example_serverFront() {
	request := make([]byte, wire.RequestBytes(&wire.CreateStream{Name: "prod"}))
	wire.EncodeRequest(request, wire.RequestHeader{Client: wire.Uint128{Lo: 1}, Request: 1, Session: 1,
		Operation: wire.OperationCreateStream}, &wire.CreateStream{Name: "prod"})

	var assembler wire.Assembler
	_, _ = assembler.Write(request[:100]) // a read returned part of the frame
	_, _ = assembler.Write(request[100:])
	frame, _ := assembler.Frame()

	decoded, _, err := wire.DecodeRequest(frame)
	if err != nil || decoded.Header.Invalid() != "" {
		return // drop the frame
	}
	code := decoded.Header.CommandCode()
	var body wire.CreateStream
	if err := wire.DecodeAll(&body, decoded.Body); err != nil {
		return // answer wire.StatusOf(err) with EncodeStatusReply
	}
	header := wire.ReplyTo(&decoded.Header, code.ReplyOperation())
	stream := &wire.StreamInfo{ID: 0, Name: body.Name}
	reply := make([]byte, wire.ReplyBytes(header.Operation, stream))
	size := wire.EncodeReply(reply, header, stream)
	fmt.Println(code, body.Name, size)
	// Output: CreateStream prod 301
}

// A client: encode a request, decode the reply and its payload.
func Example_client() {
	reply := make([]byte, wire.ResultReplyBytes)
	wire.EncodeResultReply(reply, wire.ReplyHeader{Request: 2, Operation: wire.OperationCreateStream},
		wire.StatusStreamNameAlreadyExists)

	decoded, _, err := wire.DecodeReply(reply)
	if err != nil {
		return // the stream is broken: close the connection
	}
	fmt.Println(decoded.Err())
	// Output: wire: status 1012 StreamNameAlreadyExists
}
