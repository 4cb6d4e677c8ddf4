package classic

// DecodableRequest is a request that can read itself from a body. Decode
// returns how many bytes it consumed; the rest of the body is ignored, as the
// 0.8 server does (the classic Go SDK's UpdateUser relies on it).
type DecodableRequest interface {
	Request
	Decode(body []byte) (int, error)
}

// NewRequest returns an empty request of code, or false for an unknown code.
// Servers on the hot path decode into a value they own instead.
func NewRequest(code Code) (DecodableRequest, bool) {
	if code < CodePollMessages {
		return newAccountRequest(code)
	}
	if code < CodeGetTopic {
		return newDataRequest(code)
	}
	return newTopicRequest(code)
}

// DecodeRequest decodes body as a request of code. It allocates the request;
// an unknown code is a DecodeError with StatusInvalidCommand.
func DecodeRequest(code Code, body []byte) (DecodableRequest, int, error) {
	req, ok := NewRequest(code)
	if !ok {
		return nil, 0, &DecodeError{What: "command code", Value: uint64(code), Status: StatusInvalidCommand}
	}
	consumed, err := req.Decode(body)
	return req, consumed, err
}

func newAccountRequest(code Code) (DecodableRequest, bool) {
	switch code {
	case CodePing:
		return &Ping{}, true
	case CodeGetStats:
		return &GetStats{}, true
	case CodeGetSnapshot:
		return &GetSnapshot{}, true
	case CodeGetClusterMetadata:
		return &GetClusterMetadata{}, true
	case CodeGetMe:
		return &GetMe{}, true
	case CodeGetClient:
		return &GetClient{}, true
	case CodeGetClients:
		return &GetClients{}, true
	case CodeGetUser:
		return &GetUser{}, true
	case CodeGetUsers:
		return &GetUsers{}, true
	case CodeCreateUser:
		return &CreateUser{}, true
	case CodeDeleteUser:
		return &DeleteUser{}, true
	case CodeUpdateUser:
		return &UpdateUser{}, true
	case CodeUpdatePermissions:
		return &UpdatePermissions{}, true
	case CodeChangePassword:
		return &ChangePassword{}, true
	case CodeLoginUser:
		return &LoginUser{}, true
	case CodeLogoutUser:
		return &LogoutUser{}, true
	case CodeGetPersonalAccessTokens:
		return &GetPersonalAccessTokens{}, true
	case CodeCreatePersonalAccessToken:
		return &CreatePersonalAccessToken{}, true
	case CodeDeletePersonalAccessToken:
		return &DeletePersonalAccessToken{}, true
	case CodeLoginWithPersonalAccessToken:
		return &LoginWithPersonalAccessToken{}, true
	}
	return nil, false
}

func newDataRequest(code Code) (DecodableRequest, bool) {
	switch code {
	case CodePollMessages:
		return &PollMessages{}, true
	case CodeSendMessages:
		return &SendMessages{}, true
	case CodeFlushUnsavedBuffer:
		return &FlushUnsavedBuffer{}, true
	case CodeGetConsumerOffset:
		return &GetConsumerOffset{}, true
	case CodeStoreConsumerOffset:
		return &StoreConsumerOffset{}, true
	case CodeDeleteConsumerOffset:
		return &DeleteConsumerOffset{}, true
	case CodeGetStream:
		return &GetStream{}, true
	case CodeGetStreams:
		return &GetStreams{}, true
	case CodeCreateStream:
		return &CreateStream{}, true
	case CodeDeleteStream:
		return &DeleteStream{}, true
	case CodeUpdateStream:
		return &UpdateStream{}, true
	case CodePurgeStream:
		return &PurgeStream{}, true
	}
	return nil, false
}

func newTopicRequest(code Code) (DecodableRequest, bool) {
	switch code {
	case CodeGetTopic:
		return &GetTopic{}, true
	case CodeGetTopics:
		return &GetTopics{}, true
	case CodeCreateTopic:
		return &CreateTopic{}, true
	case CodeDeleteTopic:
		return &DeleteTopic{}, true
	case CodeUpdateTopic:
		return &UpdateTopic{}, true
	case CodePurgeTopic:
		return &PurgeTopic{}, true
	case CodeCreatePartitions:
		return &CreatePartitions{}, true
	case CodeDeletePartitions:
		return &DeletePartitions{}, true
	case CodeDeleteSegments:
		return &DeleteSegments{}, true
	case CodeGetConsumerGroup:
		return &GetConsumerGroup{}, true
	case CodeGetConsumerGroups:
		return &GetConsumerGroups{}, true
	case CodeCreateConsumerGroup:
		return &CreateConsumerGroup{}, true
	case CodeDeleteConsumerGroup:
		return &DeleteConsumerGroup{}, true
	case CodeJoinConsumerGroup:
		return &JoinConsumerGroup{}, true
	case CodeLeaveConsumerGroup:
		return &LeaveConsumerGroup{}, true
	}
	return nil, false
}

// DecodableReply is a success reply body that can read itself. Replies are
// built by a server, so Decode requires the body to be consumed exactly.
type DecodableReply interface {
	Reply
	Decode(body []byte) error
}

// NewReply returns an empty success reply of the layout code answers with,
// or false for an unknown code. Commands that answer "not found" with an
// empty body (GetStream, GetTopic, GetUser, GetClient, GetConsumerGroup,
// GetConsumerOffset) need the caller to test for an empty body first.
func NewReply(code Code) (DecodableReply, bool) {
	switch code {
	case CodeGetStats:
		return &Stats{}, true
	case CodeGetSnapshot:
		return &SnapshotReply{}, true
	case CodeGetClusterMetadata:
		return &ClusterMetadata{}, true
	case CodeGetMe, CodeGetClient:
		return &ClientDetails{}, true
	case CodeGetClients:
		return &ClientList{}, true
	case CodeGetUser, CodeCreateUser:
		return &UserDetails{}, true
	case CodeGetUsers:
		return &UserList{}, true
	case CodeLoginUser, CodeLoginWithPersonalAccessToken:
		return &LoginReply{}, true
	case CodeGetPersonalAccessTokens:
		return &TokenList{}, true
	case CodeCreatePersonalAccessToken:
		return &RawToken{}, true
	}
	return newDataReply(code)
}

func newDataReply(code Code) (DecodableReply, bool) {
	switch code {
	case CodePollMessages:
		return &PollReply{}, true
	case CodeGetConsumerOffset:
		return &ConsumerOffsetReply{}, true
	case CodeGetStream:
		return &StreamDetails{}, true
	case CodeGetStreams:
		return &StreamList{}, true
	case CodeCreateStream:
		return &StreamEntry{}, true
	case CodeGetTopic, CodeCreateTopic:
		return &TopicDetails{}, true
	case CodeGetTopics:
		return &TopicList{}, true
	case CodeGetConsumerGroup:
		return &GroupDetails{}, true
	case CodeGetConsumerGroups:
		return &GroupList{}, true
	case CodeCreateConsumerGroup:
		return &GroupEntry{}, true
	}
	if code.Known() {
		return EmptyReply{}, true
	}
	return nil, false
}

// EmptyMeansNotFound reports whether an empty success body from code means
// "no such entity" rather than an empty layout (§6.3): GetStream, GetTopic,
// GetUser, GetClient, GetConsumerGroup, and GetConsumerOffset with nothing
// stored. List replies read an empty body as an empty list instead.
func EmptyMeansNotFound(code Code) bool {
	switch code {
	case CodeGetStream, CodeGetTopic, CodeGetUser, CodeGetClient, CodeGetConsumerGroup, CodeGetConsumerOffset:
		return true
	}
	return false
}
