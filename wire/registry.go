package wire

// NewRequestBody returns an empty request body of the command's type, for
// generic decoding (tests, tools, the slow path of a server front). The hot
// commands are better decoded into a reused value of their own type.
func NewRequestBody(code Code) (Decoder, bool) {
	switch code {
	case CodePing, CodeGetStats, CodeGetClusterMetadata, CodeGetMe, CodeGetClients, CodeGetUsers,
		CodeLogoutUser, CodeGetPersonalAccessTokens, CodeGetStreams:
		return &Empty{}, true
	case CodeGetSnapshot:
		return &GetSnapshot{}, true
	case CodeDescribeOptions:
		return &DescribeOptions{}, true
	case CodeGetClient:
		return &GetClient{}, true
	case CodeGetUser, CodeDeleteUser:
		return &UserTarget{}, true
	case CodeCreateUser:
		return &CreateUser{}, true
	case CodeUpdateUser:
		return &UpdateUser{}, true
	case CodeUpdatePermissions:
		return &UpdatePermissions{}, true
	case CodeChangePassword:
		return &ChangePassword{}, true
	case CodeLoginRegister, CodeLoginRegisterWithPAT:
		return &LoginRegister{}, true
	case CodeCreatePersonalAccessToken:
		return &CreatePersonalAccessToken{}, true
	case CodeDeletePersonalAccessToken:
		return &DeletePersonalAccessToken{}, true
	}
	return newDataRequestBody(code)
}

func newDataRequestBody(code Code) (Decoder, bool) {
	switch code {
	case CodeGetStream, CodeDeleteStream, CodePurgeStream, CodeGetTopics:
		return &StreamTarget{}, true
	case CodeCreateStream:
		return &CreateStream{}, true
	case CodeUpdateStream:
		return &UpdateStream{}, true
	case CodeGetTopic, CodeDeleteTopic, CodePurgeTopic, CodeGetConsumerGroups:
		return &TopicTarget{}, true
	case CodeCreateTopic:
		return &CreateTopic{}, true
	case CodeUpdateTopic:
		return &UpdateTopic{}, true
	case CodeCreatePartitions, CodeDeletePartitions:
		return &PartitionsChange{}, true
	case CodeDeleteSegments:
		return &DeleteSegments{}, true
	case CodeSendMessages:
		return &SendMessages{}, true
	case CodePollMessages:
		return &PollMessages{}, true
	case CodeFlushUnsavedBuffer:
		return &FlushUnsavedBuffer{}, true
	case CodeGetConsumerOffset:
		return &GetConsumerOffset{}, true
	case CodeStoreConsumerOffset:
		return &StoreConsumerOffset{}, true
	case CodeDeleteConsumerOffset:
		return &DeleteConsumerOffset{}, true
	case CodeGetConsumerGroup, CodeDeleteConsumerGroup, CodeJoinConsumerGroup, CodeLeaveConsumerGroup,
		CodeSyncConsumerGroup:
		return &GroupTarget{}, true
	case CodeCreateConsumerGroup:
		return &CreateConsumerGroup{}, true
	}
	return nil, false
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
