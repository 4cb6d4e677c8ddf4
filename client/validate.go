package client

import "github.com/whippetio/whippet/wire"

// validate refuses a request body that the wire encoders cannot represent
// (a name or identifier outside 1..255 bytes, a key too long), so user
// input is answered with an error instead of tripping an encoder
// assertion. The server still applies its own, tighter rules.
func validate(body wire.Body) wire.Status {
	var names []string
	var ids []wire.Identifier
	switch request := body.(type) {
	case *wire.StreamTarget:
		ids = []wire.Identifier{request.Stream}
	case *wire.TopicTarget:
		ids = []wire.Identifier{request.Stream, request.Topic}
	case *wire.GroupTarget:
		ids = []wire.Identifier{request.Stream, request.Topic, request.Group}
	case *wire.UserTarget:
		ids = []wire.Identifier{request.User}
	case *wire.CreateStream:
		names = []string{request.Name}
	case *wire.UpdateStream:
		names, ids = []string{request.Name}, []wire.Identifier{request.Stream}
	case *wire.CreateTopic:
		names, ids = []string{request.Name}, []wire.Identifier{request.Stream}
	case *wire.UpdateTopic:
		names, ids = []string{request.Name}, []wire.Identifier{request.Stream, request.Topic}
	case *wire.CreateConsumerGroup:
		names, ids = []string{request.Name}, []wire.Identifier{request.Stream, request.Topic}
	default:
		return validateMore(body)
	}
	return checkAll(names, ids)
}

func validateMore(body wire.Body) wire.Status {
	var names []string
	var ids []wire.Identifier
	switch request := body.(type) {
	case *wire.PartitionsChange:
		ids = []wire.Identifier{request.Stream, request.Topic}
	case *wire.DeleteSegments:
		ids = []wire.Identifier{request.Stream, request.Topic}
	case *wire.FlushUnsavedBuffer:
		ids = []wire.Identifier{request.Stream, request.Topic}
	case *wire.PollMessages:
		ids = []wire.Identifier{request.Consumer.ID, request.Stream, request.Topic}
	case *wire.OutgoingMessages:
		ids = []wire.Identifier{request.Stream, request.Topic}
		if request.Partitioning.Kind == wire.PartitioningMessagesKey && len(request.Partitioning.Key) > wire.NameBytesMax {
			return wire.StatusInvalidKeyValueLength
		}
	case *wire.GetConsumerOffset:
		ids = []wire.Identifier{request.Consumer.ID, request.Stream, request.Topic}
	case *wire.StoreConsumerOffset:
		ids = []wire.Identifier{request.Consumer.ID, request.Stream, request.Topic}
	case *wire.DeleteConsumerOffset:
		ids = []wire.Identifier{request.Consumer.ID, request.Stream, request.Topic}
	case *wire.CreateUser:
		names = []string{request.Username, request.Password}
	case *wire.UpdateUser:
		names, ids = []string{request.Username}, []wire.Identifier{request.User}
	case *wire.UpdatePermissions:
		ids = []wire.Identifier{request.User}
	case *wire.ChangePassword:
		names, ids = []string{request.CurrentPassword, request.NewPassword}, []wire.Identifier{request.User}
	case *wire.CreatePersonalAccessToken:
		names = []string{request.Name}
	case *wire.DeletePersonalAccessToken:
		names = []string{request.Name}
	case *wire.GetSnapshot:
		if len(request.Types) > wire.NameBytesMax {
			return wire.StatusInvalidFormat
		}
	}
	return checkAll(names, ids)
}

func checkAll(names []string, ids []wire.Identifier) wire.Status {
	for _, name := range names {
		if len(name) > wire.NameBytesMax {
			return wire.StatusInvalidFormat
		}
	}
	for _, id := range ids {
		if id.Valid() != "" {
			return wire.StatusInvalidIdentifier
		}
	}
	return wire.StatusOK
}
