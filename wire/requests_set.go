package wire

// RequestSet holds one reusable value of every request body type, so a
// connection can decode any command without allocating a body value: the
// server front keeps one RequestSet per connection and calls Decode.
// Decoded slices still point into the frame; strings of the rarer
// commands (names, passwords) are allocated by their decoders.
type RequestSet struct {
	Empty                     Empty
	GetSnapshot               GetSnapshot
	DescribeOptions           DescribeOptions
	GetClient                 GetClient
	User                      UserTarget
	CreateUser                CreateUser
	UpdateUser                UpdateUser
	UpdatePermissions         UpdatePermissions
	ChangePassword            ChangePassword
	LoginRegister             LoginRegister
	CreatePersonalAccessToken CreatePersonalAccessToken
	DeletePersonalAccessToken DeletePersonalAccessToken
	Stream                    StreamTarget
	CreateStream              CreateStream
	UpdateStream              UpdateStream
	Topic                     TopicTarget
	CreateTopic               CreateTopic
	UpdateTopic               UpdateTopic
	PartitionsChange          PartitionsChange
	DeleteSegments            DeleteSegments
	SendMessages              SendMessages
	PollMessages              PollMessages
	FlushUnsavedBuffer        FlushUnsavedBuffer
	GetConsumerOffset         GetConsumerOffset
	StoreConsumerOffset       StoreConsumerOffset
	DeleteConsumerOffset      DeleteConsumerOffset
	Group                     GroupTarget
	CreateConsumerGroup       CreateConsumerGroup
}

// Decode decodes body as the request of code into the set's member for
// that type and returns it. ok is false for an unknown code (answer
// StatusInvalidCommand); err is a *DecodeError (answer its status).
func (s *RequestSet) Decode(code Code, body []byte) (value Decoder, ok bool, err error) {
	value = s.member(code)
	if value == nil {
		return nil, false, nil
	}
	return value, true, DecodeAll(value, body)
}

func (s *RequestSet) member(code Code) Decoder {
	switch code {
	case CodePing, CodeGetStats, CodeGetClusterMetadata, CodeGetMe, CodeGetClients, CodeGetUsers,
		CodeLogoutUser, CodeGetPersonalAccessTokens, CodeGetStreams:
		return &s.Empty
	case CodeGetSnapshot:
		return &s.GetSnapshot
	case CodeDescribeOptions:
		return &s.DescribeOptions
	case CodeGetClient:
		return &s.GetClient
	case CodeGetUser, CodeDeleteUser:
		return &s.User
	case CodeCreateUser:
		return &s.CreateUser
	case CodeUpdateUser:
		return &s.UpdateUser
	case CodeUpdatePermissions:
		return &s.UpdatePermissions
	case CodeChangePassword:
		return &s.ChangePassword
	case CodeLoginRegister, CodeLoginRegisterWithPAT:
		return &s.LoginRegister
	case CodeCreatePersonalAccessToken:
		return &s.CreatePersonalAccessToken
	case CodeDeletePersonalAccessToken:
		return &s.DeletePersonalAccessToken
	}
	return s.dataMember(code)
}

func (s *RequestSet) dataMember(code Code) Decoder {
	switch code {
	case CodeGetStream, CodeDeleteStream, CodePurgeStream, CodeGetTopics:
		return &s.Stream
	case CodeCreateStream:
		return &s.CreateStream
	case CodeUpdateStream:
		return &s.UpdateStream
	case CodeGetTopic, CodeDeleteTopic, CodePurgeTopic, CodeGetConsumerGroups:
		return &s.Topic
	case CodeCreateTopic:
		return &s.CreateTopic
	case CodeUpdateTopic:
		return &s.UpdateTopic
	case CodeCreatePartitions, CodeDeletePartitions:
		return &s.PartitionsChange
	case CodeDeleteSegments:
		return &s.DeleteSegments
	case CodeSendMessages:
		return &s.SendMessages
	case CodePollMessages:
		return &s.PollMessages
	case CodeFlushUnsavedBuffer:
		return &s.FlushUnsavedBuffer
	case CodeGetConsumerOffset:
		return &s.GetConsumerOffset
	case CodeStoreConsumerOffset:
		return &s.StoreConsumerOffset
	case CodeDeleteConsumerOffset:
		return &s.DeleteConsumerOffset
	case CodeGetConsumerGroup, CodeDeleteConsumerGroup, CodeJoinConsumerGroup, CodeLeaveConsumerGroup,
		CodeSyncConsumerGroup:
		return &s.Group
	case CodeCreateConsumerGroup:
		return &s.CreateConsumerGroup
	}
	return nil
}
