package shard

import (
	"encoding/binary"

	"github.com/whippetio/whippet/wire"
	"github.com/whippetio/whippet/wire/classic"
)

// classicTranslateMore covers the system, stream and topic updates and
// partition commands not in classicTranslate.
func classicTranslateMore(request classic.DecodableRequest) (wire.Code, wire.Body, classic.Status) {
	switch r := request.(type) {
	case *classic.GetStats:
		return wire.CodeGetStats, &wire.GetStats{}, classic.StatusOK
	case *classic.GetSnapshot:
		return wire.CodeGetSnapshot, &wire.GetSnapshot{Compression: r.Compression, Types: r.Types}, classic.StatusOK
	case *classic.GetClusterMetadata:
		return wire.CodeGetClusterMetadata, &wire.GetClusterMetadata{}, classic.StatusOK
	case *classic.GetMe:
		return wire.CodeGetMe, &wire.GetMe{}, classic.StatusOK
	case *classic.GetClient:
		return wire.CodeGetClient, &wire.GetClient{ClientID: r.ClientID}, classic.StatusOK
	case *classic.GetClients:
		return wire.CodeGetClients, &wire.GetClients{}, classic.StatusOK
	case *classic.UpdateStream:
		return wire.CodeUpdateStream, &wire.UpdateStream{Stream: wireIdentifier(r.Stream), Name: string(r.Name)},
			classic.StatusOK
	case *classic.PurgeStream:
		return wire.CodePurgeStream, &wire.PurgeStream{Stream: wireIdentifier(r.Stream)}, classic.StatusOK
	case *classic.UpdateTopic:
		return wire.CodeUpdateTopic, classicUpdateTopic(r), classic.StatusOK
	case *classic.PurgeTopic:
		return wire.CodePurgeTopic, &wire.PurgeTopic{Stream: wireIdentifier(r.Stream), Topic: wireIdentifier(r.Topic)},
			classic.StatusOK
	case *classic.CreatePartitions:
		return wire.CodeCreatePartitions, &wire.CreatePartitions{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic), PartitionsCount: r.PartitionsCount}, classic.StatusOK
	case *classic.DeletePartitions:
		return wire.CodeDeletePartitions, &wire.DeletePartitions{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic), PartitionsCount: r.PartitionsCount}, classic.StatusOK
	case *classic.DeleteSegments:
		return wire.CodeDeleteSegments, &wire.DeleteSegments{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic), PartitionID: r.PartitionID, SegmentsCount: r.SegmentsCount}, classic.StatusOK
	case *classic.FlushUnsavedBuffer:
		return wire.CodeFlushUnsavedBuffer, &wire.FlushUnsavedBuffer{Stream: wireIdentifier(r.Stream),
			Topic: wireIdentifier(r.Topic), PartitionID: r.PartitionID, Fsync: r.Fsync}, classic.StatusOK
	}
	return classicTranslateUsers(request)
}

// classicUpdateTopic: a 0.8 update replaces every setting, so all three
// travel as options (0 is the server default, as at create).
func classicUpdateTopic(r *classic.UpdateTopic) *wire.UpdateTopic {
	compression := wire.CompressionNone.String()
	if r.Settings.Compression == classic.CompressionGzip {
		compression = wire.CompressionGzip.String()
	}
	return &wire.UpdateTopic{Stream: wireIdentifier(r.Stream), Topic: wireIdentifier(r.Topic), Name: string(r.Name),
		Options: wire.Headers{
			classicOption(wire.OptionCompressionAlgorithm, wire.HeaderValue{Kind: wire.HeaderString,
				Value: []byte(compression)}),
			classicOption(wire.OptionMessageExpiry, wire.HeaderValue{Kind: wire.HeaderUint64,
				Value: binary.LittleEndian.AppendUint64(nil, r.Settings.MessageExpiry)}),
			classicOption(wire.OptionMaxTopicSize, wire.HeaderValue{Kind: wire.HeaderUint64,
				Value: binary.LittleEndian.AppendUint64(nil, r.Settings.MaxTopicSize)}),
		}}
}

func classicOption(key string, value wire.HeaderValue) wire.HeaderEntry {
	return wire.HeaderEntry{Key: wire.HeaderValue{Kind: wire.HeaderString, Value: []byte(key)}, Value: value}
}

// classicPassthrough reports replies whose bytes are the same in both
// generations (PROTOCOL-0.8.md §12.2): cluster metadata, client entries
// and the snapshot archive.
func classicPassthrough(code classic.Code) bool {
	switch code {
	case classic.CodeGetSnapshot, classic.CodeGetClusterMetadata, classic.CodeGetMe, classic.CodeGetClient, classic.CodeGetClients:
		return true
	}
	return false
}

// classicStats copies the stats; only the semver differs (0.8 writes
// major‖minor(3)‖patch(3) in decimal, 0.9 packs 10-bit fields).
func classicStats(s *wire.Stats) *classic.Stats {
	semver := s.ServerSemver
	stats := &classic.Stats{ProcessID: s.ProcessID, CPUUsage: s.CPUUsage, TotalCPUUsage: s.TotalCPUUsage,
		MemoryUsage: s.MemoryUsage, TotalMemory: s.TotalMemory, AvailableMemory: s.AvailableMemory, RunTime: s.RunTime,
		StartTime: s.StartTime, ReadBytes: s.ReadBytes, WrittenBytes: s.WrittenBytes,
		MessagesSizeBytes: s.MessagesSizeBytes, StreamsCount: s.StreamsCount, TopicsCount: s.TopicsCount,
		PartitionsCount: s.PartitionsCount, SegmentsCount: s.SegmentsCount, MessagesCount: s.MessagesCount,
		ClientsCount: s.ClientsCount, ConsumerGroupsCount: s.ConsumerGroupsCount, Hostname: s.Hostname,
		OSName: s.OSName, OSVersion: s.OSVersion, KernelVersion: s.KernelVersion, ServerVersion: s.ServerVersion,
		ServerSemver: classic.SemverDecimal(semver>>20&0x3FF, semver>>10&0x3FF, semver&0x3FF),
		ThreadsCount: s.ThreadsCount, FreeDiskSpace: s.FreeDiskSpace, TotalDiskSpace: s.TotalDiskSpace}
	for _, metric := range s.CacheMetrics {
		stats.CacheMetrics = append(stats.CacheMetrics, classic.CacheMetric(metric))
	}
	return stats
}

// classicTranslateUsers covers users and personal access tokens; the
// permissions layout is the same in both generations, so it is carried
// over through its bytes.
func classicTranslateUsers(request classic.DecodableRequest) (wire.Code, wire.Body, classic.Status) {
	switch r := request.(type) {
	case *classic.GetUser:
		return wire.CodeGetUser, &wire.GetUser{User: wireIdentifier(r.User)}, classic.StatusOK
	case *classic.GetUsers:
		return wire.CodeGetUsers, &wire.GetUsers{}, classic.StatusOK
	case *classic.DeleteUser:
		return wire.CodeDeleteUser, &wire.DeleteUser{User: wireIdentifier(r.User)}, classic.StatusOK
	case *classic.CreateUser:
		permissions, ok := wirePermissions(r.HasPermissions, &r.Permissions)
		if !ok {
			return 0, nil, classic.StatusInvalidFormat
		}
		return wire.CodeCreateUser, &wire.CreateUser{Username: string(r.Username), Password: string(r.Password),
			Status: wire.UserStatus(r.Status), Permissions: permissions}, classic.StatusOK
	case *classic.UpdateUser:
		return wire.CodeUpdateUser, &wire.UpdateUser{User: wireIdentifier(r.User), HasUsername: r.Username != nil,
			Username: string(r.Username), HasStatus: r.Status != 0, Status: wire.UserStatus(r.Status)}, classic.StatusOK
	case *classic.UpdatePermissions:
		permissions, ok := wirePermissions(r.HasPermissions, &r.Permissions)
		if !ok {
			return 0, nil, classic.StatusInvalidFormat
		}
		return wire.CodeUpdatePermissions, &wire.UpdatePermissions{User: wireIdentifier(r.User),
			Permissions: permissions}, classic.StatusOK
	case *classic.ChangePassword:
		return wire.CodeChangePassword, &wire.ChangePassword{User: wireIdentifier(r.User),
			CurrentPassword: string(r.CurrentPassword), NewPassword: string(r.NewPassword)}, classic.StatusOK
	case *classic.GetPersonalAccessTokens:
		return wire.CodeGetPersonalAccessTokens, &wire.GetPersonalAccessTokens{}, classic.StatusOK
	case *classic.CreatePersonalAccessToken:
		return wire.CodeCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: string(r.Name),
			Expiry: r.Expiry}, classic.StatusOK
	case *classic.DeletePersonalAccessToken:
		return wire.CodeDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: string(r.Name)},
			classic.StatusOK
	}
	return 0, nil, classic.StatusInvalidCommand
}

// wirePermissions re-reads classic permissions with the 0.9 codec.
func wirePermissions(present bool, permissions *classic.Permissions) (*wire.Permissions, bool) {
	if !present {
		return nil, true
	}
	out := &wire.Permissions{}
	raw := classic.AppendPermissions(nil, permissions)
	n, err := out.Decode(raw)
	return out, err == nil && n == len(raw)
}

// classicPermissions is wirePermissions' inverse.
func classicPermissions(permissions *wire.Permissions) (classic.Permissions, bool) {
	raw := make([]byte, permissions.EncodedSize())
	permissions.Encode(raw)
	out, err := classic.DecodePermissions(raw)
	return out, err == nil
}

// classicUserBody converts user and token replies.
func classicUserBody(payload wire.Decoder) (classic.Reply, bool) {
	switch p := payload.(type) {
	case *wire.UserDetails:
		details := &classic.UserDetails{User: classicUser(&p.UserInfo)}
		if p.Permissions != nil {
			permissions, ok := classicPermissions(p.Permissions)
			if !ok {
				return nil, false
			}
			details.HasPermissions, details.Permissions = true, permissions
		}
		return details, true
	case *wire.UserList:
		list := &classic.UserList{}
		for i := range *p {
			list.Users = append(list.Users, classicUser(&(*p)[i]))
		}
		return list, true
	case *wire.TokenList:
		list := &classic.TokenList{}
		for _, token := range *p {
			list.Tokens = append(list.Tokens, classic.TokenEntry{Name: token.Name, ExpiryAt: token.ExpiryAt})
		}
		return list, true
	case *wire.RawToken:
		return &classic.RawToken{Token: p.Token}, true
	case *wire.Stats:
		return classicStats(p), true
	}
	return classic.EmptyReply{}, true
}

func classicUser(u *wire.UserInfo) classic.UserEntry {
	return classic.UserEntry{ID: u.ID, CreatedAt: u.CreatedAt, Status: classic.UserStatus(u.Status), Username: u.Username}
}
