package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Messages: POST sends base64 payloads, GET polls (Iggy's query names).

// outgoingJSON is one message of a send body.
type outgoingJSON struct {
	ID      json.Number `json:"id"`
	Payload string      `json:"payload"`
	// UserHeaders is Iggy's field (http_headers.go); headers is an alias.
	UserHeaders json.RawMessage `json:"user_headers"`
	Headers     json.RawMessage `json:"headers"`
}

func (g *gateway) messageRoutes(mux *http.ServeMux) {
	const messages = "/streams/{stream_id}/topics/{topic_id}/messages"
	g.handle(mux, "POST "+messages, g.sendMessages)
	g.handle(mux, "GET "+messages, g.pollMessages)
}

func (g *gateway) sendMessages(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Partitioning struct {
			Kind  string `json:"kind"`
			Value string `json:"value"`
		} `json:"partitioning"`
		Messages []outgoingJSON `json:"messages"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	partitioning, reason := parsePartitioning(body.Partitioning.Kind, body.Partitioning.Value)
	if reason != "" {
		badRequest(w, reason)
		return nil, errReplied
	}
	outgoing := make([]wire.OutgoingMessage, 0, len(body.Messages))
	for i, message := range body.Messages {
		decoded, reason := parseOutgoing(message)
		if reason != "" {
			badRequest(w, "messages["+strconv.Itoa(i)+"]: "+reason)
			return nil, errReplied
		}
		outgoing = append(outgoing, decoded)
	}
	stream, topic := streamTopic(r)
	if _, err := c.SendMessages(ctx, stream, topic, partitioning, outgoing); err != nil {
		return nil, err
	}
	if g.durability != nil {
		if reached, ok := g.durability(stream, topic); ok {
			w.Header().Set(durabilityHeader, reached)
		}
	}
	return nil, nil
}

// durabilityHeader answers a send with what its acknowledgement reached
// (shard.Server.AckDurability): memory, written or persisted on a single
// node, replicated or persisted in a cluster. Iggy's HTTP API names the
// header; the TCP reply has no field for it.
const durabilityHeader = "Iggy-Durability"

// parsePartitioning reads Iggy's partitioning: balanced, partition_id
// (value the little-endian u32, base64) or messages_key (value base64).
func parsePartitioning(kind, value string) (wire.Partitioning, string) {
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return wire.Partitioning{}, "partitioning.value is not base64"
	}
	switch kind {
	case "", "balanced":
		return wire.Partitioning{Kind: wire.PartitioningBalanced}, ""
	case "partition_id":
		if len(raw) != 4 {
			return wire.Partitioning{}, "partitioning.value must be a 4-byte little-endian partition id"
		}
		return wire.Partitioning{Kind: wire.PartitioningPartitionID, PartitionID: binary.LittleEndian.Uint32(raw)}, ""
	case "messages_key":
		if len(raw) == 0 {
			return wire.Partitioning{}, "partitioning.value must hold a key"
		}
		return wire.Partitioning{Kind: wire.PartitioningMessagesKey, Key: raw}, ""
	}
	return wire.Partitioning{}, "partitioning.kind must be balanced, partition_id or messages_key"
}

func parseOutgoing(message outgoingJSON) (wire.OutgoingMessage, string) {
	var out wire.OutgoingMessage
	if message.ID != "" {
		id, ok := parseUint128(string(message.ID))
		if !ok {
			return out, "id must be an unsigned 128-bit number"
		}
		out.ID = id
	}
	payload, err := base64.StdEncoding.DecodeString(message.Payload)
	if err != nil {
		return out, "payload is not base64"
	}
	out.Payload = payload
	raw := message.UserHeaders
	if len(raw) == 0 || string(raw) == "null" {
		raw = message.Headers
	}
	headers, reason := parseHeadersJSON(raw)
	if reason != "" {
		return out, reason
	}
	out.UserHeaders = headers
	return out, ""
}

// parseUint128 reads a decimal number up to 2^128-1.
func parseUint128(text string) (wire.Uint128, bool) {
	value, ok := new(big.Int).SetString(text, 10)
	if !ok || value.Sign() < 0 || value.BitLen() > 128 {
		return wire.Uint128{}, false
	}
	mask := new(big.Int).SetUint64(^uint64(0))
	return wire.Uint128{Lo: new(big.Int).And(value, mask).Uint64(), Hi: new(big.Int).Rsh(value, 64).Uint64()}, true
}

func (g *gateway) pollMessages(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	request, reason := parsePoll(r)
	if reason != "" {
		badRequest(w, reason)
		return nil, errReplied
	}
	polled, err := c.PollMessages(ctx, request)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, polled.MessagesCount)
	iterator := polled.Messages()
	for {
		message, ok := iterator.Next()
		if !ok {
			break
		}
		out = append(out, map[string]any{"header": map[string]any{"checksum": message.Header.Checksum,
			"id": uint128String(message.Header.ID), "offset": message.Offset, "timestamp": message.Timestamp,
			"origin_timestamp": message.OriginTimestamp, "user_headers_length": message.Header.UserHeadersLength,
			"payload_length": message.Header.PayloadLength},
			"payload":      base64.StdEncoding.EncodeToString(message.Payload),
			"user_headers": headersJSON(message.UserHeaders)})
	}
	return map[string]any{"partition_id": polled.PartitionID, "current_offset": polled.CurrentOffset,
		"count": len(out), "messages": out}, nil
}

// parsePoll reads consumer_id, kind (consumer|consumer_group),
// partition_id, strategy kind and value, count and auto_commit.
func parsePoll(r *http.Request) (*wire.PollMessages, string) {
	query := r.URL.Query()
	consumer, reason := parseConsumer(query.Get("consumer_kind"), query.Get("consumer_id"))
	if reason != "" {
		return nil, reason
	}
	stream, topic := streamTopic(r)
	request := &wire.PollMessages{Consumer: consumer, Stream: stream, Topic: topic, Count: 10}
	if text := query.Get("partition_id"); text != "" {
		id, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return nil, "partition_id must be a number"
		}
		request.Partition = wire.PartitionOf(uint32(id))
	}
	kinds := map[string]wire.StrategyKind{"offset": wire.StrategyOffset, "timestamp": wire.StrategyTimestamp,
		"first": wire.StrategyFirst, "last": wire.StrategyLast, "next": wire.StrategyNext, "": wire.StrategyOffset}
	kind, ok := kinds[query.Get("kind")]
	if !ok {
		return nil, "kind must be offset, timestamp, first, last or next"
	}
	request.Strategy.Kind = kind
	if text := query.Get("value"); text != "" {
		value, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return nil, "value must be a number"
		}
		request.Strategy.Value = value
	}
	if text := query.Get("count"); text != "" {
		count, err := strconv.ParseUint(text, 10, 32)
		if err != nil || count == 0 || count > httpPollCountMax {
			return nil, "count must be a number from 1 to " + strconv.Itoa(httpPollCountMax)
		}
		request.Count = uint32(count)
	}
	request.AutoCommit = query.Get("auto_commit") == "true"
	return request, ""
}

// parseConsumer reads a consumer: kind consumer (default) or
// consumer_group, id a number or a name (default 0... the anonymous 1).
func parseConsumer(kind, id string) (wire.Consumer, string) {
	consumer := wire.Consumer{Kind: wire.ConsumerSingle, ID: wire.NumericID(1)}
	switch kind {
	case "", "consumer":
	case "consumer_group":
		consumer.Kind = wire.ConsumerGroup
	default:
		return consumer, "consumer_kind must be consumer or consumer_group"
	}
	if id != "" {
		consumer.ID = identifier(id)
	}
	return consumer, ""
}

func uint128String(value wire.Uint128) string {
	out := new(big.Int).SetUint64(value.Hi)
	out.Lsh(out, 64)
	out.Or(out, new(big.Int).SetUint64(value.Lo))
	return out.String()
}
