package wire

// NewRequestBody returns a fresh empty request body of the command's
// type, for generic decoding (tests, tools). A server front decodes into a
// reused RequestSet instead.
func NewRequestBody(code Code) (Decoder, bool) {
	value := new(RequestSet).member(code)
	return value, value != nil
}

// NewReplyPayload returns an empty success payload of the command's reply
// type (after the result section). Several replies may also be empty to
// mean "not found" (§4.4); callers check for an empty payload first.
func NewReplyPayload(code Code) (Decoder, bool) {
	switch code {
	case CodeGetStats:
		return &Stats{}, true
	case CodeGetSnapshot:
		return &Raw{}, true
	case CodeGetClusterMetadata:
		return &ClusterMetadata{}, true
	case CodeDescribeOptions:
		return &OptionSpecs{}, true
	case CodeGetMe, CodeGetClient:
		return &ClientDetails{}, true
	case CodeGetClients:
		return &ClientList{}, true
	case CodeGetUser, CodeCreateUser:
		return &UserDetails{}, true
	case CodeGetUsers:
		return &UserList{}, true
	case CodeLoginRegister, CodeLoginRegisterWithPAT:
		return &LoginReply{}, true
	case CodeGetPersonalAccessTokens:
		return &TokenList{}, true
	case CodeCreatePersonalAccessToken:
		return &RawToken{}, true
	}
	return newDataReplyPayload(code)
}

func newDataReplyPayload(code Code) (Decoder, bool) {
	switch code {
	case CodeGetStream:
		return &StreamDetails{}, true
	case CodeGetStreams:
		return &StreamList{}, true
	case CodeCreateStream:
		return &StreamInfo{}, true
	case CodeGetTopic, CodeCreateTopic:
		return &TopicDetails{}, true
	case CodeGetTopics:
		return &TopicList{}, true
	case CodeSendMessages:
		return &SendConfirmations{}, true
	case CodePollMessages:
		return &PolledMessages{}, true
	case CodeGetConsumerOffset:
		return &ConsumerOffsetInfo{}, true
	case CodeGetConsumerGroup:
		return &ConsumerGroupDetails{}, true
	case CodeGetConsumerGroups:
		return &ConsumerGroupList{}, true
	case CodeCreateConsumerGroup:
		return &ConsumerGroupInfo{}, true
	case CodeSyncConsumerGroup:
		return &GroupAssignment{}, true
	}
	if code.Known() {
		return &Empty{}, true
	}
	return nil, false
}
