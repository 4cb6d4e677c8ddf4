package shard

import (
	"time"

	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// classicRelease answers a classic request whose 0.9 form finished: the
// 0.9 reply becomes the classic one (release calls it for classic
// sessions, in order). The replies of preludes are only checked for a
// refusal. A session evicted meanwhile (its user logged out under it)
// drops what is still queued and answers 40 at once. The next queued
// classic frame starts on a later turn, since this runs inside finish.
func (f *front) classicRelease(s *session, done *pendingReply) {
	f.shard.Release(done.frame)
	cc := s.classic
	cc.pending--
	invariant.Assert(cc.pending >= 0, "front: a classic session releases only the requests it queued")
	reply := done.reply
	switch {
	case s.closed || cc.answered:
		cc.answered = cc.answered && cc.pending > 0
	case s.evicted:
		for i, frame := range s.order.queue {
			f.shard.Release(frame) // never delivered: no in-flight slot to free
			s.order.queue[i] = nil
			cc.pending--
		}
		s.order.queue = s.order.queue[:0]
		cc.answered = cc.pending > 0
		f.classicReplied(s, f.classicBuffer(classic.AppendErrorReply(nil, classic.StatusUnauthenticated)))
	case cc.pending > 0: // a prelude
		if status := preludeStatus(reply); cc.swallowed == classic.StatusOK {
			cc.swallowed = status
		}
	case reply == nil:
		f.classicReplied(s, f.classicBuffer(classic.AppendErrorReply(nil, classic.StatusInvalidCommand)))
	case cc.swallowed != classic.StatusOK:
		f.classicReplied(s, f.classicBuffer(classicError(cc.code, cc.swallowed)))
	default:
		f.classicReplied(s, f.classicBuffer(classicReply(cc, reply)))
	}
	if reply != nil {
		f.shard.Release(reply)
	}
}

// classicReplied sends the reply to the running classic request from
// within finish, and schedules the next queued one.
func (f *front) classicReplied(s *session, reply []byte) {
	cc := s.classic
	cc.swallowed = classic.StatusOK
	cc.running = false
	_ = s.conn.Reply(reply) // a closed connection drops it; OnClose cleans up
	if len(cc.queue) > 0 && !s.evicted {
		_, err := f.shard.After(0, func(time.Time) { f.runClassic(s) })
		if err != nil {
			s.conn.Close() // no timer left to run the pipelined request: the peer reconnects
		}
	}
}

// preludeStatus is the refusal a prelude's reply carries, StatusOK for
// none (a sync answers "not a member" with an empty success).
func preludeStatus(buf []byte) classic.Status {
	if buf == nil {
		return classic.StatusInvalidCommand
	}
	reply, _, err := wire.DecodeReply(buf)
	switch {
	case err != nil || reply.Command != wire.CommandReply:
		return classic.StatusError
	case reply.Header.Status != wire.StatusOK:
		return classic.Status(reply.Header.Status)
	}
	return classic.Status(reply.Result)
}

// classicReply rewrites a 0.9 reply to the running classic request.
func classicReply(cc *classicConn, buf []byte) []byte {
	reply, _, err := wire.DecodeReply(buf)
	if err != nil || reply.Command != wire.CommandReply {
		return classic.AppendErrorReply(nil, classic.StatusError)
	}
	status := reply.Header.Status
	if status == wire.StatusOK {
		status = reply.Result
	}
	if status != wire.StatusOK {
		return classicError(cc.code, classic.Status(status))
	}
	if len(reply.Payload) == 0 {
		return classic.AppendReply(nil, classic.EmptyReply{})
	}
	if classicPassthrough(cc.code) {
		out, start := classic.BeginReply(nil)
		return classic.FinishReply(append(out, reply.Payload...), start)
	}
	payload, ok := wire.NewReplyPayload(wire.Code(cc.code))
	if !ok || cc.code == classic.CodeSendMessages {
		return classic.AppendReply(nil, classic.EmptyReply{}) // 0.8 answers a send with an empty body
	}
	if _, err := payload.Decode(reply.Payload); err != nil {
		return classic.AppendErrorReply(nil, classic.StatusError)
	}
	body := classicBody(cc, payload)
	if body == nil {
		return classic.AppendErrorReply(nil, classic.StatusError)
	}
	return classic.AppendReply(nil, body)
}

// classicError maps a 0.9 refusal: the 0.8 "not found" conventions answer
// an empty success (PROTOCOL-0.8.md §6.3), and a code 0.8 does not have
// becomes 1 Error.
func classicError(code classic.Code, status classic.Status) []byte {
	notFound := status == classic.StatusStreamIdNotFound || status == classic.StatusTopicIdNotFound ||
		status == classic.StatusResourceNotFound || status == classic.StatusConsumerGroupIdNotFound ||
		status == classic.StatusPartitionNotFound || status == classic.StatusClientNotFound
	switch {
	case notFound && classic.EmptyMeansNotFound(code):
		return classic.AppendReply(nil, classic.EmptyReply{})
	case notFound && (code == classic.CodeGetTopics || code == classic.CodeGetConsumerGroups):
		return classic.AppendReply(nil, classic.EmptyReply{})
	case !status.Known():
		status = classic.StatusError
	}
	return classic.AppendErrorReply(nil, status)
}

// classicBody converts a decoded 0.9 success payload into its 0.8 body.
func classicBody(cc *classicConn, payload wire.Decoder) classic.Reply {
	switch p := payload.(type) {
	case *wire.StreamInfo:
		entry := classicStream(p)
		return &entry
	case *wire.StreamDetails:
		details := &classic.StreamDetails{Stream: classicStream(&p.StreamInfo)}
		for i := range p.Topics {
			details.Topics = append(details.Topics, classicTopic(&p.Topics[i]))
		}
		return details
	case *wire.StreamList:
		list := &classic.StreamList{}
		for i := range *p {
			list.Streams = append(list.Streams, classicStream(&(*p)[i]))
		}
		return list
	case *wire.TopicDetails:
		details := &classic.TopicDetails{Topic: classicTopic(&p.TopicInfo)}
		for _, partition := range p.Partitions {
			details.Partitions = append(details.Partitions, classic.PartitionEntry{ID: partition.ID,
				CreatedAt: partition.CreatedAt, SegmentsCount: partition.SegmentsCount,
				CurrentOffset: partition.CurrentOffset, SizeBytes: partition.SizeBytes,
				MessagesCount: partition.MessagesCount})
		}
		return details
	case *wire.TopicList:
		list := &classic.TopicList{}
		for i := range *p {
			list.Topics = append(list.Topics, classicTopic(&(*p)[i]))
		}
		return list
	case *wire.PolledMessages:
		return classicPolled(p)
	case *wire.ConsumerOffsetInfo:
		return classic.ConsumerOffsetReply{PartitionID: p.PartitionID, CurrentOffset: p.CurrentOffset,
			StoredOffset: p.StoredOffset}
	}
	return classicGroupBody(cc, payload)
}

func classicGroupBody(cc *classicConn, payload wire.Decoder) classic.Reply {
	switch p := payload.(type) {
	case *wire.ConsumerGroupInfo:
		entry := classicGroup(p)
		return &entry
	case *wire.ConsumerGroupDetails:
		if cc.code == classic.CodeCreateConsumerGroup {
			entry := classicGroup(&p.ConsumerGroupInfo)
			return &entry
		}
		details := &classic.GroupDetails{Group: classicGroup(&p.ConsumerGroupInfo)}
		for _, member := range p.Members {
			details.Members = append(details.Members, classic.GroupMember{ID: member.ID, Partitions: member.Partitions})
		}
		return details
	case *wire.ConsumerGroupList:
		list := &classic.GroupList{}
		for i := range *p {
			list.Groups = append(list.Groups, classicGroup(&(*p)[i]))
		}
		return list
	}
	body, ok := classicUserBody(payload)
	if !ok {
		return nil
	}
	return body
}

func classicStream(s *wire.StreamInfo) classic.StreamEntry {
	return classic.StreamEntry{ID: s.ID, CreatedAt: s.CreatedAt, TopicsCount: s.TopicsCount, SizeBytes: s.SizeBytes,
		MessagesCount: s.MessagesCount, Name: s.Name}
}

// classicTopic maps a topic entry; 0.9 has no replication factor, so it
// reports 1 (one copy per partition log as far as a 0.8 client can tell).
func classicTopic(t *wire.TopicInfo) classic.TopicEntry {
	return classic.TopicEntry{ID: t.ID, CreatedAt: t.CreatedAt, PartitionsCount: t.PartitionsCount,
		MessageExpiry: t.MessageExpiry, Compression: classic.Compression(t.Compression), MaxTopicSize: t.MaxTopicSize,
		ReplicationFactor: 1, SizeBytes: t.SizeBytes, MessagesCount: t.MessagesCount, Name: t.Name}
}

func classicGroup(g *wire.ConsumerGroupInfo) classic.GroupEntry {
	return classic.GroupEntry{ID: g.ID, PartitionsCount: g.PartitionsCount, MembersCount: g.MembersCount, Name: g.Name}
}

// classicPolled rebuilds 64-byte-header messages from the polled batch
// records (PROTOCOL-0.8.md §12.3); each gets a fresh classic checksum.
func classicPolled(p *wire.PolledMessages) classic.Reply {
	polled := &classic.PollReply{PartitionID: p.PartitionID, CurrentOffset: p.CurrentOffset}
	if p.PartitionID == pollNoPartition {
		polled.PartitionID, polled.CurrentOffset = 0, 0 // the 0.8 empty group poll
	}
	messages := p.Messages()
	for {
		message, ok := messages.Next()
		if !ok {
			break
		}
		fields := classic.MessageFields{ID: classicMessageID(message.Header.ID), Offset: message.Offset,
			Timestamp: message.Timestamp, OriginTimestamp: message.OriginTimestamp, Payload: message.Payload,
			UserHeaders: message.UserHeaders}
		polled.Data = classic.AppendMessage(polled.Data, &fields)
		polled.Count++
	}
	return polled
}
