package classic

import "strconv"

// Code is the u32 command code of a classic request. The 47 codes are stable
// from 0.6.0 to 0.8.x; any other code is answered with StatusInvalidCommand.
type Code uint32

// The 47 classic command codes.
const (
	CodePing                         Code = 1
	CodeGetStats                     Code = 10
	CodeGetSnapshot                  Code = 11
	CodeGetClusterMetadata           Code = 12
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
	CodeGetPersonalAccessTokens      Code = 41
	CodeCreatePersonalAccessToken    Code = 42
	CodeDeletePersonalAccessToken    Code = 43
	CodeLoginWithPersonalAccessToken Code = 44
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
)

// CodeCount is the number of classic command codes.
const CodeCount = 47

// codeInfo describes one command for dispatch and detection. bodyBytesMin is
// the smallest body a real client can send (PROTOCOL-0.8.md §11.2, generous on
// purpose); emptyBody marks the nine commands whose body is always empty.
type codeInfo struct {
	code         Code
	name         string
	bodyBytesMin int
	emptyBody    bool
	beforeLogin  bool
}

// codeTable lists every code in ascending order.
var codeTable = [CodeCount]codeInfo{
	{CodePing, "Ping", 0, true, true},
	{CodeGetStats, "GetStats", 0, true, false},
	{CodeGetSnapshot, "GetSnapshot", 2, false, false},
	{CodeGetClusterMetadata, "GetClusterMetadata", 0, true, false},
	{CodeGetMe, "GetMe", 0, true, false},
	{CodeGetClient, "GetClient", 4, false, false},
	{CodeGetClients, "GetClients", 0, true, false},
	{CodeGetUser, "GetUser", 3, false, false},
	{CodeGetUsers, "GetUsers", 0, true, false},
	{CodeCreateUser, "CreateUser", 6, false, false},
	{CodeDeleteUser, "DeleteUser", 3, false, false},
	{CodeUpdateUser, "UpdateUser", 5, false, false},
	{CodeUpdatePermissions, "UpdatePermissions", 4, false, false},
	{CodeChangePassword, "ChangePassword", 5, false, false},
	{CodeLoginUser, "LoginUser", 11, false, true},
	{CodeLogoutUser, "LogoutUser", 0, true, false},
	{CodeGetPersonalAccessTokens, "GetPersonalAccessTokens", 0, true, false},
	{CodeCreatePersonalAccessToken, "CreatePersonalAccessToken", 10, false, false},
	{CodeDeletePersonalAccessToken, "DeletePersonalAccessToken", 2, false, false},
	{CodeLoginWithPersonalAccessToken, "LoginWithPersonalAccessToken", 2, false, true},
	{CodePollMessages, "PollMessages", 29, false, false},
	{CodeSendMessages, "SendMessages", 16, false, false},
	{CodeFlushUnsavedBuffer, "FlushUnsavedBuffer", 11, false, false},
	{CodeGetConsumerOffset, "GetConsumerOffset", 15, false, false},
	{CodeStoreConsumerOffset, "StoreConsumerOffset", 23, false, false},
	{CodeDeleteConsumerOffset, "DeleteConsumerOffset", 15, false, false},
	{CodeGetStream, "GetStream", 3, false, false},
	{CodeGetStreams, "GetStreams", 0, true, false},
	{CodeCreateStream, "CreateStream", 2, false, false},
	{CodeDeleteStream, "DeleteStream", 3, false, false},
	{CodeUpdateStream, "UpdateStream", 5, false, false},
	{CodePurgeStream, "PurgeStream", 3, false, false},
	{CodeGetTopic, "GetTopic", 6, false, false},
	{CodeGetTopics, "GetTopics", 3, false, false},
	{CodeCreateTopic, "CreateTopic", 27, false, false},
	{CodeDeleteTopic, "DeleteTopic", 6, false, false},
	{CodeUpdateTopic, "UpdateTopic", 26, false, false},
	{CodePurgeTopic, "PurgeTopic", 6, false, false},
	{CodeCreatePartitions, "CreatePartitions", 10, false, false},
	{CodeDeletePartitions, "DeletePartitions", 10, false, false},
	{CodeDeleteSegments, "DeleteSegments", 14, false, false},
	{CodeGetConsumerGroup, "GetConsumerGroup", 9, false, false},
	{CodeGetConsumerGroups, "GetConsumerGroups", 6, false, false},
	{CodeCreateConsumerGroup, "CreateConsumerGroup", 8, false, false},
	{CodeDeleteConsumerGroup, "DeleteConsumerGroup", 9, false, false},
	{CodeJoinConsumerGroup, "JoinConsumerGroup", 9, false, false},
	{CodeLeaveConsumerGroup, "LeaveConsumerGroup", 9, false, false},
}

func lookupCode(code Code) (codeInfo, bool) {
	low, high := 0, len(codeTable)
	for low < high {
		middle := (low + high) / 2
		if codeTable[middle].code < code {
			low = middle + 1
		} else {
			high = middle
		}
	}
	if low < len(codeTable) && codeTable[low].code == code {
		return codeTable[low], true
	}
	return codeInfo{}, false
}

// Known reports whether code is one of the 47 classic commands.
func (code Code) Known() bool {
	_, ok := lookupCode(code)
	return ok
}

// String returns the command name, or "Code(n)" for an unknown code.
func (code Code) String() string {
	if info, ok := lookupCode(code); ok {
		return info.name
	}
	return "Code(" + strconv.FormatUint(uint64(code), 10) + ")"
}

// AllowedBeforeLogin reports whether a connection that has not logged in may
// send code: Ping and the two logins. Everything else gets StatusUnauthenticated.
func (code Code) AllowedBeforeLogin() bool {
	info, ok := lookupCode(code)
	return ok && info.beforeLogin
}

// BodyBytesMax is the largest body the server reads for code.
func (code Code) BodyBytesMax() int {
	if code == CodeSendMessages {
		return SendMessagesBodyBytesMax
	}
	return ControlBodyBytesMax
}

// Codes returns every classic code in ascending order.
func Codes() []Code {
	codes := make([]Code, 0, CodeCount)
	for _, info := range codeTable {
		codes = append(codes, info.code)
	}
	return codes
}
