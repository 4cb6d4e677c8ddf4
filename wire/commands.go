package wire

import "strconv"

// Code is a command code (§3.2). Only NonReplicated requests carry it on
// the wire (@196); every other request is identified by its operation.
type Code uint32

// Command codes.
const (
	CodePing                         Code = 1
	CodeGetStats                     Code = 10
	CodeGetSnapshot                  Code = 11
	CodeGetClusterMetadata           Code = 12
	CodeDescribeOptions              Code = 13
	CodeGetMe                        Code = 20
	CodeGetClient                    Code = 21
	CodeGetClients                   Code = 22
	CodeGetUser                      Code = 31
	CodeGetUsers                     Code = 32
	CodeCreateUser                   Code = 33
	CodeDeleteUser                   Code = 34
	CodeUpdateUser                   Code = 35
	CodeUpdatePermissions            Code = 36
	CodeChangePassword               Code = 37
	CodeLoginUser                    Code = 38
	CodeLogoutUser                   Code = 39
	CodeLoginRegister                Code = 40
	CodeGetPersonalAccessTokens      Code = 41
	CodeCreatePersonalAccessToken    Code = 42
	CodeDeletePersonalAccessToken    Code = 43
	CodeLoginWithPersonalAccessToken Code = 44
	CodeLoginRegisterWithPAT         Code = 45
	CodePollMessages                 Code = 100
	CodeSendMessages                 Code = 101
	CodeFlushUnsavedBuffer           Code = 102
	CodeGetConsumerOffset            Code = 120
	CodeStoreConsumerOffset          Code = 121
	CodeDeleteConsumerOffset         Code = 122
	CodeGetStream                    Code = 200
	CodeGetStreams                   Code = 201
	CodeCreateStream                 Code = 202
	CodeDeleteStream                 Code = 203
	CodeUpdateStream                 Code = 204
	CodePurgeStream                  Code = 205
	CodeGetTopic                     Code = 300
	CodeGetTopics                    Code = 301
	CodeCreateTopic                  Code = 302
	CodeDeleteTopic                  Code = 303
	CodeUpdateTopic                  Code = 304
	CodePurgeTopic                   Code = 305
	CodeCreatePartitions             Code = 402
	CodeDeletePartitions             Code = 403
	CodeDeleteSegments               Code = 503
	CodeGetConsumerGroup             Code = 600
	CodeGetConsumerGroups            Code = 601
	CodeCreateConsumerGroup          Code = 602
	CodeDeleteConsumerGroup          Code = 603
	CodeJoinConsumerGroup            Code = 604
	CodeLeaveConsumerGroup           Code = 605
	CodeSyncConsumerGroup            Code = 606
)

// commandSpec is one row of §3.2 and §7.7: how a command travels and how
// the reference server answers it.
type commandSpec struct {
	code      Code
	name      string
	operation Operation // request operation; Reserved for the legacy logins
	reply     Operation // operation of the success reply
}

var commandTable = [...]commandSpec{
	{CodePing, "Ping", OperationNonReplicated, OperationNonReplicated},
	{CodeGetStats, "GetStats", OperationNonReplicated, OperationNonReplicated},
	{CodeGetSnapshot, "GetSnapshot", OperationNonReplicated, OperationNonReplicated},
	{CodeGetClusterMetadata, "GetClusterMetadata", OperationNonReplicated, OperationNonReplicated},
	{CodeDescribeOptions, "DescribeOptions", OperationNonReplicated, OperationNonReplicated},
	{CodeGetMe, "GetMe", OperationNonReplicated, OperationNonReplicated},
	{CodeGetClient, "GetClient", OperationNonReplicated, OperationNonReplicated},
	{CodeGetClients, "GetClients", OperationNonReplicated, OperationNonReplicated},
	{CodeGetUser, "GetUser", OperationNonReplicated, OperationNonReplicated},
	{CodeGetUsers, "GetUsers", OperationNonReplicated, OperationNonReplicated},
	{CodeCreateUser, "CreateUser", OperationCreateUser, OperationCreateUser},
	{CodeDeleteUser, "DeleteUser", OperationDeleteUser, OperationDeleteUser},
	{CodeUpdateUser, "UpdateUser", OperationUpdateUser, OperationUpdateUser},
	{CodeUpdatePermissions, "UpdatePermissions", OperationUpdatePermissions, OperationUpdatePermissions},
	{CodeChangePassword, "ChangePassword", OperationChangePassword, OperationChangePassword},
	{CodeLoginUser, "LoginUser", OperationReserved, OperationReserved},
	{CodeLogoutUser, "LogoutUser", OperationLogout, OperationLogout},
	{CodeLoginRegister, "LoginRegister", OperationRegister, OperationRegister},
	{CodeGetPersonalAccessTokens, "GetPersonalAccessTokens", OperationNonReplicated, OperationNonReplicated},
	{CodeCreatePersonalAccessToken, "CreatePersonalAccessToken", OperationCreatePersonalAccessToken, OperationCreatePersonalAccessToken},
	{CodeDeletePersonalAccessToken, "DeletePersonalAccessToken", OperationDeletePersonalAccessToken, OperationDeletePersonalAccessToken},
	{CodeLoginWithPersonalAccessToken, "LoginWithPersonalAccessToken", OperationReserved, OperationReserved},
	{CodeLoginRegisterWithPAT, "LoginRegisterWithPat", OperationRegister, OperationRegister},
	{CodePollMessages, "PollMessages", OperationNonReplicated, OperationNonReplicated},
	{CodeSendMessages, "SendMessages", OperationSendMessages, OperationSendMessages},
	{CodeFlushUnsavedBuffer, "FlushUnsavedBuffer", OperationNonReplicated, OperationNonReplicated},
	{CodeGetConsumerOffset, "GetConsumerOffset", OperationNonReplicated, OperationNonReplicated},
	{CodeStoreConsumerOffset, "StoreConsumerOffset", OperationStoreConsumerOffset, OperationStoreConsumerOffset},
	{CodeDeleteConsumerOffset, "DeleteConsumerOffset", OperationDeleteConsumerOffset, OperationDeleteConsumerOffset},
	{CodeGetStream, "GetStream", OperationNonReplicated, OperationNonReplicated},
	{CodeGetStreams, "GetStreams", OperationNonReplicated, OperationNonReplicated},
	{CodeCreateStream, "CreateStream", OperationCreateStream, OperationCreateStream},
	{CodeDeleteStream, "DeleteStream", OperationDeleteStream, OperationDeleteStream},
	{CodeUpdateStream, "UpdateStream", OperationUpdateStream, OperationUpdateStream},
	{CodePurgeStream, "PurgeStream", OperationPurgeStream, OperationPurgeStream},
	{CodeGetTopic, "GetTopic", OperationNonReplicated, OperationNonReplicated},
	{CodeGetTopics, "GetTopics", OperationNonReplicated, OperationNonReplicated},
	{CodeCreateTopic, "CreateTopic", OperationCreateTopic, OperationCreateTopicWithAssignments},
	{CodeDeleteTopic, "DeleteTopic", OperationDeleteTopic, OperationDeleteTopic},
	{CodeUpdateTopic, "UpdateTopic", OperationUpdateTopic, OperationUpdateTopic},
	{CodePurgeTopic, "PurgeTopic", OperationPurgeTopic, OperationPurgeTopic},
	{CodeCreatePartitions, "CreatePartitions", OperationCreatePartitions, OperationCreatePartitionsWithAssignments},
	{CodeDeletePartitions, "DeletePartitions", OperationDeletePartitions, OperationDeletePartitions},
	{CodeDeleteSegments, "DeleteSegments", OperationDeleteSegments, OperationTruncatePartition},
	{CodeGetConsumerGroup, "GetConsumerGroup", OperationNonReplicated, OperationNonReplicated},
	{CodeGetConsumerGroups, "GetConsumerGroups", OperationNonReplicated, OperationNonReplicated},
	{CodeCreateConsumerGroup, "CreateConsumerGroup", OperationCreateConsumerGroup, OperationCreateConsumerGroup},
	{CodeDeleteConsumerGroup, "DeleteConsumerGroup", OperationDeleteConsumerGroup, OperationDeleteConsumerGroup},
	{CodeJoinConsumerGroup, "JoinConsumerGroup", OperationJoinConsumerGroup, OperationJoinConsumerGroup},
	{CodeLeaveConsumerGroup, "LeaveConsumerGroup", OperationLeaveConsumerGroup, OperationLeaveConsumerGroup},
	{CodeSyncConsumerGroup, "SyncConsumerGroup", OperationNonReplicated, OperationNonReplicated},
}

func lookupCommand(code Code) (commandSpec, bool) {
	for _, spec := range commandTable {
		if spec.code == code {
			return spec, true
		}
	}
	return commandSpec{}, false
}

// Codes returns every known command code in table order.
func Codes() []Code {
	codes := make([]Code, len(commandTable))
	for i, spec := range commandTable {
		codes[i] = spec.code
	}
	return codes
}

// Known reports whether the code is one of §3.2.
func (c Code) Known() bool {
	_, ok := lookupCommand(c)
	return ok
}

// String returns the Iggy name of the command.
func (c Code) String() string {
	if spec, ok := lookupCommand(c); ok {
		return spec.name
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Operation returns the operation a request for this code travels under:
// NonReplicated for reads, the write's own operation otherwise, Reserved for
// unknown codes and the legacy logins (38, 44), which no longer travel.
// Unknown codes travel as NonReplicated so the server can answer status 3.
func (c Code) Operation() Operation {
	spec, ok := lookupCommand(c)
	if !ok {
		return OperationNonReplicated
	}
	return spec.operation
}

// ReplyOperation returns the operation of the reference server's success
// reply: the request's, except CreateTopic (64), CreatePartitions (65) and
// DeleteSegments (68) (§4.3).
func (c Code) ReplyOperation() Operation {
	spec, ok := lookupCommand(c)
	if !ok {
		return OperationNonReplicated
	}
	return spec.reply
}

// Replicated reports whether the command is a write (sent under its own
// operation, not as NonReplicated).
func (c Code) Replicated() bool { return c.Operation().Replicated() }

// CodeOf returns the command code of a request from its operation and the
// code field @196. A Register request maps to CodeLoginRegister: the body
// shape, not the header, tells a password login from a token login.
func CodeOf(operation Operation, code Code) Code {
	switch operation {
	case OperationNonReplicated:
		return code
	case OperationRegister:
		return CodeLoginRegister
	case OperationLogout:
		return CodeLogoutUser
	}
	for _, spec := range commandTable {
		if spec.operation == operation {
			return spec.code
		}
	}
	return 0
}

// AcceptsReplyOperation reports whether a reply operation answers a request
// for this code: the request operation, or the internal one (§4.3).
func (c Code) AcceptsReplyOperation(reply Operation) bool {
	spec, ok := lookupCommand(c)
	if !ok {
		return reply == OperationNonReplicated
	}
	return reply == spec.operation || reply == spec.reply
}
