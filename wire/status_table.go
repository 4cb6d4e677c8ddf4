package wire

// This table mirrors ../shared/protocol/vectors/error_codes.json entry for
// entry; TestGoldenStatusCodes fails when the two disagree.

// Status values: the one u32 error space shared by the reply status word,
// result-section entries and the SDKs' typed errors. 0 means success.
const (
	StatusOK                                         Status = 0
	StatusError                                      Status = 1
	StatusInvalidConfiguration                       Status = 2
	StatusInvalidCommand                             Status = 3
	StatusInvalidFormat                              Status = 4
	StatusFeatureUnavailable                         Status = 5
	StatusInvalidIdentifier                          Status = 6
	StatusInvalidVersion                             Status = 7
	StatusDisconnected                               Status = 8
	StatusCannotEstablishConnection                  Status = 9
	StatusCannotCreateBaseDirectory                  Status = 10
	StatusCannotCreateRuntimeDirectory               Status = 11
	StatusCannotRemoveRuntimeDirectory               Status = 12
	StatusCannotCreateStateDirectory                 Status = 13
	StatusStateFileNotFound                          Status = 14
	StatusStateFileCorrupted                         Status = 15
	StatusInvalidStateEntryChecksum                  Status = 16
	StatusCannotOpenDatabase                         Status = 19
	StatusResourceNotFound                           Status = 20
	StatusCannotCloseWebSocketConnection             Status = 21
	StatusStaleClient                                Status = 30
	StatusTCPError                                   Status = 31
	StatusQUICError                                  Status = 32
	StatusInvalidServerAddress                       Status = 33
	StatusInvalidClientAddress                       Status = 34
	StatusInvalidIPAddress                           Status = 35
	StatusHTTPError                                  Status = 36
	StatusInvalidAPIURL                              Status = 37
	StatusUnauthenticated                            Status = 40
	StatusUnauthorized                               Status = 41
	StatusInvalidCredentials                         Status = 42
	StatusInvalidUsername                            Status = 43
	StatusInvalidPassword                            Status = 44
	StatusInvalidUserStatus                          Status = 45
	StatusUserAlreadyExists                          Status = 46
	StatusUserInactive                               Status = 47
	StatusCannotDeleteUser                           Status = 48
	StatusCannotChangePermissions                    Status = 49
	StatusInvalidPersonalAccessTokenName             Status = 50
	StatusPersonalAccessTokenAlreadyExists           Status = 51
	StatusPersonalAccessTokensLimitReached           Status = 52
	StatusInvalidPersonalAccessToken                 Status = 53
	StatusPersonalAccessTokenExpired                 Status = 54
	StatusUsersLimitReached                          Status = 55
	StatusInvalidPersonalAccessTokenExpiry           Status = 56
	StatusTransientNotCommitted                      Status = 57
	StatusTransientNotAccepted                       Status = 58
	StatusRequestAlreadyApplied                      Status = 59
	StatusNotConnected                               Status = 61
	StatusClientShutdown                             Status = 63
	StatusInvalidTLSDomain                           Status = 64
	StatusInvalidTLSCertificatePath                  Status = 65
	StatusInvalidTLSCertificate                      Status = 66
	StatusFailedToAddCertificate                     Status = 67
	StatusInvalidEncryptionKey                       Status = 70
	StatusCannotEncryptData                          Status = 71
	StatusCannotDecryptData                          Status = 72
	StatusInvalidJWTAlgorithm                        Status = 73
	StatusInvalidJWTSecret                           Status = 74
	StatusJWTMissing                                 Status = 75
	StatusCannotGenerateJWT                          Status = 76
	StatusAccessTokenMissing                         Status = 77
	StatusInvalidAccessToken                         Status = 78
	StatusCannotFetchJWKS                            Status = 79
	StatusInvalidSizeBytes                           Status = 80
	StatusInvalidUTF8                                Status = 81
	StatusInvalidNumberEncoding                      Status = 82
	StatusInvalidBooleanValue                        Status = 83
	StatusInvalidNumberValue                         Status = 84
	StatusClientNotFound                             Status = 100
	StatusInvalidClientID                            Status = 101
	StatusConnectionClosed                           Status = 206
	StatusCannotParseHeaderKind                      Status = 209
	StatusHTTPResponseError                          Status = 300
	StatusInvalidHTTPRequest                         Status = 301
	StatusInvalidJSONResponse                        Status = 302
	StatusInvalidBytesResponse                       Status = 303
	StatusEmptyResponse                              Status = 304
	StatusCannotCreateEndpoint                       Status = 305
	StatusCannotParseURL                             Status = 306
	StatusWebSocketError                             Status = 400
	StatusWebSocketConnectionError                   Status = 401
	StatusWebSocketCloseError                        Status = 402
	StatusWebSocketReceiveError                      Status = 403
	StatusWebSocketSendError                         Status = 404
	StatusCannotCreateStreamsDirectory               Status = 1000
	StatusCannotCreateStreamDirectory                Status = 1001
	StatusCannotCreateStreamInfo                     Status = 1002
	StatusCannotUpdateStreamInfo                     Status = 1003
	StatusCannotOpenStreamInfo                       Status = 1004
	StatusCannotReadStreamInfo                       Status = 1005
	StatusCannotCreateStream                         Status = 1006
	StatusCannotDeleteStream                         Status = 1007
	StatusCannotDeleteStreamDirectory                Status = 1008
	StatusStreamIDNotFound                           Status = 1009
	StatusStreamNameNotFound                         Status = 1010
	StatusStreamDirectoryNotFound                    Status = 1011
	StatusStreamNameAlreadyExists                    Status = 1012
	StatusInvalidStreamName                          Status = 1013
	StatusInvalidStreamID                            Status = 1014
	StatusCannotReadStreams                          Status = 1015
	StatusInvalidTopicSize                           Status = 1019
	StatusTooManyStreams                             Status = 1020
	StatusCannotCreateTopicsDirectory                Status = 2000
	StatusCannotCreateTopicDirectory                 Status = 2001
	StatusCannotCreateTopicInfo                      Status = 2002
	StatusCannotUpdateTopicInfo                      Status = 2003
	StatusCannotOpenTopicInfo                        Status = 2004
	StatusCannotReadTopicInfo                        Status = 2005
	StatusCannotCreateTopic                          Status = 2006
	StatusCannotDeleteTopic                          Status = 2007
	StatusCannotDeleteTopicDirectory                 Status = 2008
	StatusCannotPollTopic                            Status = 2009
	StatusTopicIDNotFound                            Status = 2010
	StatusTopicNameNotFound                          Status = 2011
	StatusTopicNameAlreadyExists                     Status = 2013
	StatusInvalidTopicName                           Status = 2014
	StatusTooManyPartitions                          Status = 2015
	StatusInvalidTopicID                             Status = 2016
	StatusCannotReadTopics                           Status = 2017
	StatusInvalidReplicationFactor                   Status = 2018
	StatusInvalidPartitionsCount                     Status = 2019
	StatusTopicDirectoryNotFound                     Status = 2020
	StatusTooManyTopics                              Status = 2021
	StatusCannotCreatePartition                      Status = 3000
	StatusCannotCreatePartitionsDirectory            Status = 3001
	StatusCannotCreatePartitionDirectory             Status = 3002
	StatusCannotOpenPartitionLogFile                 Status = 3003
	StatusCannotReadPartitions                       Status = 3004
	StatusCannotDeletePartition                      Status = 3005
	StatusCannotDeletePartitionDirectory             Status = 3006
	StatusPartitionNotFound                          Status = 3007
	StatusNoPartitions                               Status = 3008
	StatusTopicFull                                  Status = 3009
	StatusCannotDeleteConsumerOffsetsDirectory       Status = 3010
	StatusCannotDeleteConsumerOffsetFile             Status = 3011
	StatusCannotCreateConsumerOffsetsDirectory       Status = 3012
	StatusCannotReadConsumerOffsets                  Status = 3020
	StatusConsumerOffsetNotFound                     Status = 3021
	StatusNotResolvedConsumer                        Status = 3022
	StatusCannotOpenConsumerOffsetsFile              Status = 3023
	StatusPartitionIDSpaceExhausted                  Status = 3013
	StatusSegmentNotFound                            Status = 4000
	StatusSegmentClosed                              Status = 4001
	StatusInvalidSegmentSize                         Status = 4002
	StatusCannotCreateSegmentLogFile                 Status = 4003
	StatusCannotCreateSegmentIndexFile               Status = 4004
	StatusCannotCreateSegmentTimeIndexFile           Status = 4005
	StatusCannotSaveMessagesToSegment                Status = 4006
	StatusCannotSaveIndexToSegment                   Status = 4007
	StatusCannotSaveTimeIndexToSegment               Status = 4008
	StatusInvalidMessagesCount                       Status = 4009
	StatusCannotAppendMessage                        Status = 4010
	StatusCannotReadMessage                          Status = 4011
	StatusCannotReadMessageID                        Status = 4012
	StatusCannotReadMessageState                     Status = 4013
	StatusCannotReadMessageTimestamp                 Status = 4014
	StatusCannotReadHeadersLength                    Status = 4015
	StatusCannotReadHeadersPayload                   Status = 4016
	StatusTooBigUserHeaders                          Status = 4017
	StatusInvalidHeaderKey                           Status = 4018
	StatusInvalidHeaderValue                         Status = 4019
	StatusCannotReadMessageLength                    Status = 4020
	StatusCannotReadMessagePayload                   Status = 4021
	StatusTooBigMessagePayload                       Status = 4022
	StatusTooManyMessages                            Status = 4023
	StatusEmptyMessagePayload                        Status = 4024
	StatusInvalidMessagePayloadLength                Status = 4025
	StatusCannotReadMessageChecksum                  Status = 4026
	StatusInvalidMessageChecksum                     Status = 4027
	StatusInvalidKeyValueLength                      Status = 4028
	StatusCommandLengthError                         Status = 4029
	StatusInvalidSegmentsCount                       Status = 4030
	StatusNonZeroOffset                              Status = 4031
	StatusNonZeroTimestamp                           Status = 4032
	StatusMissingIndex                               Status = 4033
	StatusInvalidIndexesByteSize                     Status = 4034
	StatusInvalidIndexesCount                        Status = 4035
	StatusInvalidMessagesSize                        Status = 4036
	StatusTooSmallMessage                            Status = 4037
	StatusInvalidMessageTimestampDelta               Status = 4038
	StatusInvalidBatchChecksum                       Status = 4039
	StatusInvalidHeaderKind                          Status = 4040
	StatusUnsupportedOptionKey                       Status = 4041
	StatusInvalidOptionValue                         Status = 4042
	StatusOptionsBlockTooLarge                       Status = 4043
	StatusCannotSendMessagesDueToClientDisconnection Status = 4050
	StatusBackgroundSendError                        Status = 4051
	StatusBackgroundSendTimeout                      Status = 4052
	StatusBackgroundSendBufferFull                   Status = 4053
	StatusBackgroundWorkerDisconnected               Status = 4054
	StatusBackgroundSendBufferOverflow               Status = 4055
	StatusProducerClosed                             Status = 4057
	StatusInvalidOffset                              Status = 4100
	StatusInvalidReservedField                       Status = 4101
	StatusConsumerGroupIDNotFound                    Status = 5000
	StatusInvalidConsumerGroupID                     Status = 5002
	StatusConsumerGroupNameNotFound                  Status = 5003
	StatusConsumerGroupNameAlreadyExists             Status = 5004
	StatusInvalidConsumerGroupName                   Status = 5005
	StatusConsumerGroupMemberNotFound                Status = 5006
	StatusCannotCreateConsumerGroupInfo              Status = 5007
	StatusCannotDeleteConsumerGroupInfo              Status = 5008
	StatusConsumerGroupPartitionNotOwned             Status = 5009
	StatusMissingBaseOffsetRetainedMessageBatch      Status = 6000
	StatusMissingLastOffsetDeltaRetainedMessageBatch Status = 6001
	StatusMissingMaxTimestampRetainedMessageBatch    Status = 6002
	StatusMissingLengthRetainedMessageBatch          Status = 6003
	StatusMissingPayloadRetainedMessageBatch         Status = 6004
	StatusCannotReadBatchBaseOffset                  Status = 7000
	StatusCannotReadBatchLength                      Status = 7001
	StatusCannotReadLastOffsetDelta                  Status = 7002
	StatusCannotReadMaxTimestamp                     Status = 7003
	StatusCannotReadBatchPayload                     Status = 7004
	StatusInvalidConnectionString                    Status = 8000
	StatusSnapshotFileCompletionFailed               Status = 9000
	StatusCannotSerializeResource                    Status = 10000
	StatusCannotDeserializeResource                  Status = 10001
	StatusCannotReadFile                             Status = 10002
	StatusCannotReadFileMetadata                     Status = 10003
	StatusCannotSeekFile                             Status = 10004
	StatusCannotAppendToFile                         Status = 10005
	StatusCannotWriteToFile                          Status = 10006
	StatusCannotOverwriteFile                        Status = 10007
	StatusCannotDeleteFile                           Status = 10008
	StatusCannotSyncFile                             Status = 10009
	StatusCannotReadIndexOffset                      Status = 10010
	StatusCannotReadIndexPosition                    Status = 10011
	StatusCannotReadIndexTimestamp                   Status = 10012
	StatusTimestampOutOfRange                        Status = 10013
	StatusShardNotFound                              Status = 11000
	StatusShardCommunicationError                    Status = 11001
	StatusCannotBindToSocket                         Status = 12000
	StatusTaskTimeout                                Status = 12001
	StatusIoError                                    Status = 13000
	StatusAlreadyAuthenticated                       Status = 14000
	StatusInvalidSession                             Status = 14001
	StatusIncompatibleProtocolVersion                Status = 14003
)

// statusTable is sorted by code so lookups can binary-search it.
var statusTable = [...]statusEntry{
	{1, "Error", "error"},
	{2, "InvalidConfiguration", "invalid configuration"},
	{3, "InvalidCommand", "invalid command"},
	{4, "InvalidFormat", "invalid format"},
	{5, "FeatureUnavailable", "feature is unavailable"},
	{6, "InvalidIdentifier", "invalid identifier"},
	{7, "InvalidVersion", "invalid version: %s"},
	{8, "Disconnected", "disconnected"},
	{9, "CannotEstablishConnection", "cannot establish connection"},
	{10, "CannotCreateBaseDirectory", "cannot create base directory, path: %s"},
	{11, "CannotCreateRuntimeDirectory", "cannot create runtime directory, path: %s"},
	{12, "CannotRemoveRuntimeDirectory", "cannot remove runtime directory, path: %s"},
	{13, "CannotCreateStateDirectory", "cannot create state directory, path: %s"},
	{14, "StateFileNotFound", "state file not found"},
	{15, "StateFileCorrupted", "state file corrupted"},
	{16, "InvalidStateEntryChecksum", "invalid state entry checksum: %d, expected: %d, for index: %d"},
	{19, "CannotOpenDatabase", "cannot open database, path: %s"},
	{20, "ResourceNotFound", "resource with key: %s was not found."},
	{21, "CannotCloseWebSocketConnection", "cannot close websocket connection"},
	{30, "StaleClient", "stale client"},
	{31, "TcpError", "tcp error"},
	{32, "QuicError", "quic error"},
	{33, "InvalidServerAddress", "invalid server address"},
	{34, "InvalidClientAddress", "invalid client address"},
	{35, "InvalidIpAddress", "invalid ip address: %s:%s"},
	{36, "HttpError", "http error %s"},
	{37, "InvalidApiUrl", "invalid api url: %s"},
	{40, "Unauthenticated", "unauthenticated"},
	{41, "Unauthorized", "unauthorized"},
	{42, "InvalidCredentials", "invalid credentials"},
	{43, "InvalidUsername", "invalid username"},
	{44, "InvalidPassword", "invalid password"},
	{45, "InvalidUserStatus", "invalid user status"},
	{46, "UserAlreadyExists", "user already exists"},
	{47, "UserInactive", "user inactive"},
	{48, "CannotDeleteUser", "cannot delete user with id: %d"},
	{49, "CannotChangePermissions", "cannot change permissions for user with id: %d"},
	{50, "InvalidPersonalAccessTokenName", "invalid personal access token name"},
	{51, "PersonalAccessTokenAlreadyExists", "personal access token: %s for user with id: %d already exists"},
	{52, "PersonalAccessTokensLimitReached", "user with id: %d has reached the maximum number of personal access tokens: %d"},
	{53, "InvalidPersonalAccessToken", "invalid personal access token"},
	{54, "PersonalAccessTokenExpired", "personal access token: %s for user with id: %d has expired."},
	{55, "UsersLimitReached", "users limit reached."},
	{56, "InvalidPersonalAccessTokenExpiry", "invalid personal access token expiry"},
	{57, "TransientNotCommitted", "request transiently not committed; retry"},
	{58, "TransientNotAccepted", "request transiently not accepted; retry, on any replica"},
	{59, "RequestAlreadyApplied", "request already applied; its reply is no longer available"},
	{61, "NotConnected", "not connected"},
	{63, "ClientShutdown", "client shutdown"},
	{64, "InvalidTlsDomain", "invalid tls domain"},
	{65, "InvalidTlsCertificatePath", "invalid tls certificate path"},
	{66, "InvalidTlsCertificate", "invalid tls certificate"},
	{67, "FailedToAddCertificate", "failed to add certificate"},
	{70, "InvalidEncryptionKey", "invalid encryption key"},
	{71, "CannotEncryptData", "cannot encrypt data"},
	{72, "CannotDecryptData", "cannot decrypt data"},
	{73, "InvalidJwtAlgorithm", "invalid jwt algorithm: %s"},
	{74, "InvalidJwtSecret", "invalid jwt secret"},
	{75, "JwtMissing", "jwt is missing"},
	{76, "CannotGenerateJwt", "cannot generate jwt"},
	{77, "AccessTokenMissing", "access token is missing"},
	{78, "InvalidAccessToken", "invalid access token"},
	{79, "CannotFetchJwks", "cannot fetch jwks from url: %s"},
	{80, "InvalidSizeBytes", "invalid size bytes"},
	{81, "InvalidUtf8", "invalid utf-8"},
	{82, "InvalidNumberEncoding", "invalid number encoding"},
	{83, "InvalidBooleanValue", "invalid boolean value"},
	{84, "InvalidNumberValue", "invalid number value"},
	{100, "ClientNotFound", "client with id: %d was not found."},
	{101, "InvalidClientId", "invalid client id"},
	{206, "ConnectionClosed", "connection closed"},
	{209, "CannotParseHeaderKind", "cannot parse header kind from %s"},
	{300, "HttpResponseError", "http response error, status: %d, body: %s"},
	{301, "InvalidHttpRequest", "invalid http request"},
	{302, "InvalidJsonResponse", "invalid json response"},
	{303, "InvalidBytesResponse", "invalid bytes response"},
	{304, "EmptyResponse", "empty response"},
	{305, "CannotCreateEndpoint", "cannot create endpoint"},
	{306, "CannotParseUrl", "cannot parse url"},
	{400, "WebSocketError", "websocket error"},
	{401, "WebSocketConnectionError", "websocket connection error"},
	{402, "WebSocketCloseError", "websocket close error"},
	{403, "WebSocketReceiveError", "websocket receive error"},
	{404, "WebSocketSendError", "websocket send error"},
	{1000, "CannotCreateStreamsDirectory", "cannot create streams directory, path: %s"},
	{1001, "CannotCreateStreamDirectory", "cannot create stream with id: %d directory, path: %s"},
	{1002, "CannotCreateStreamInfo", "failed to create stream info file for stream with id: %d"},
	{1003, "CannotUpdateStreamInfo", "failed to update stream info for stream with id: %d"},
	{1004, "CannotOpenStreamInfo", "failed to open stream info file for stream with id: %d"},
	{1005, "CannotReadStreamInfo", "failed to read stream info file for stream with id: %d"},
	{1006, "CannotCreateStream", "failed to create stream with id: %d"},
	{1007, "CannotDeleteStream", "failed to delete stream with id: %d"},
	{1008, "CannotDeleteStreamDirectory", "failed to delete stream directory with id: %d"},
	{1009, "StreamIdNotFound", "stream with id: %d was not found."},
	{1010, "StreamNameNotFound", "stream with name: %s was not found."},
	{1011, "StreamDirectoryNotFound", "stream with directory %s was not found."},
	{1012, "StreamNameAlreadyExists", "stream with name: %s already exists."},
	{1013, "InvalidStreamName", "invalid stream name"},
	{1014, "InvalidStreamId", "invalid stream id"},
	{1015, "CannotReadStreams", "cannot read streams"},
	{1019, "InvalidTopicSize", "max topic size cannot be lower than segment size. max topic size: %v < segment size: %v."},
	{1020, "TooManyStreams", "too many streams"},
	{2000, "CannotCreateTopicsDirectory", "cannot create topics directory for stream with id: %d, path: %s"},
	{2001, "CannotCreateTopicDirectory", "failed to create directory for topic with id: %d for stream with id: %d, path: %s"},
	{2002, "CannotCreateTopicInfo", "failed to create topic info file for topic with id: %d for stream with id: %d."},
	{2003, "CannotUpdateTopicInfo", "failed to update topic info for topic with id: %d for stream with id: %d."},
	{2004, "CannotOpenTopicInfo", "failed to open topic info file for topic with id: %d for stream with id: %d."},
	{2005, "CannotReadTopicInfo", "failed to read topic info file for topic with id: %d for stream with id: %d."},
	{2006, "CannotCreateTopic", "failed to create topic with id: %d for stream with id: %d."},
	{2007, "CannotDeleteTopic", "failed to delete topic with id: %d for stream with id: %d."},
	{2008, "CannotDeleteTopicDirectory", "failed to delete topic directory with id: %d for stream with id: %d, path: %s"},
	{2009, "CannotPollTopic", "cannot poll topic"},
	{2010, "TopicIdNotFound", "topic with id: %d for stream with id: %d was not found."},
	{2011, "TopicNameNotFound", "topic with name: %s for stream with id: %s was not found."},
	{2013, "TopicNameAlreadyExists", "topic with name: %s for stream with id: %d already exists."},
	{2014, "InvalidTopicName", "invalid topic name"},
	{2015, "TooManyPartitions", "too many partitions"},
	{2016, "InvalidTopicId", "invalid topic id"},
	{2017, "CannotReadTopics", "cannot read topics for stream with id: %d"},
	{2018, "InvalidReplicationFactor", "invalid replication factor"},
	{2019, "InvalidPartitionsCount", "invalid partitions count"},
	{2020, "TopicDirectoryNotFound", "topic directory: %s not found"},
	{2021, "TooManyTopics", "too many topics"},
	{3000, "CannotCreatePartition", "cannot create partition with id: %d for stream with id: %d and topic with id: %d"},
	{3001, "CannotCreatePartitionsDirectory", "failed to create directory for partitions for stream with id: %d and topic with id: %d"},
	{3002, "CannotCreatePartitionDirectory", "failed to create directory for partition with id: %d for stream with id: %d and topic with id: %d"},
	{3003, "CannotOpenPartitionLogFile", "cannot open partition log file"},
	{3004, "CannotReadPartitions", "cannot read partitions directories."},
	{3005, "CannotDeletePartition", "failed to delete partition with id: %d for stream with id: %d and topic with id: %d"},
	{3006, "CannotDeletePartitionDirectory", "failed to delete partition directory with id: %d for stream with id: %d and topic with id: %d"},
	{3007, "PartitionNotFound", "partition with id: %d for topic with id: %d for stream with id: %d was not found."},
	{3008, "NoPartitions", "topic with id: %d for stream with id: %d has no partitions."},
	{3009, "TopicFull", "cannot read partitions for topic with id: %d for stream with id: %d"},
	{3010, "CannotDeleteConsumerOffsetsDirectory", "failed to delete consumer offsets directory for path: %s"},
	{3011, "CannotDeleteConsumerOffsetFile", "failed to delete consumer offset file for path: %s"},
	{3012, "CannotCreateConsumerOffsetsDirectory", "failed to create consumer offsets directory for path: %s"},
	{3013, "PartitionIdSpaceExhausted", "partition id space exhausted for this topic"},
	{3020, "CannotReadConsumerOffsets", "failed to read consumers offsets from path: %s"},
	{3021, "ConsumerOffsetNotFound", "consumer offset for consumer with id: %d was not found."},
	{3022, "NotResolvedConsumer", "failed to resolve consumer with id: %d"},
	{3023, "CannotOpenConsumerOffsetsFile", "cannot open consumer offsets file for path: %s"},
	{4000, "SegmentNotFound", "segment not found"},
	{4001, "SegmentClosed", "segment with start offset: %d and partition with id: %d is closed"},
	{4002, "InvalidSegmentSize", "segment size is invalid"},
	{4003, "CannotCreateSegmentLogFile", "failed to create segment log file for path: %s."},
	{4004, "CannotCreateSegmentIndexFile", "failed to create segment index file for path: %s."},
	{4005, "CannotCreateSegmentTimeIndexFile", "failed to create segment time index file for path: %s."},
	{4006, "CannotSaveMessagesToSegment", "cannot save messages to segment."},
	{4007, "CannotSaveIndexToSegment", "cannot save index to segment."},
	{4008, "CannotSaveTimeIndexToSegment", "cannot save time index to segment."},
	{4009, "InvalidMessagesCount", "invalid messages count"},
	{4010, "CannotAppendMessage", "cannot append message"},
	{4011, "CannotReadMessage", "cannot read message"},
	{4012, "CannotReadMessageId", "cannot read message id"},
	{4013, "CannotReadMessageState", "cannot read message state"},
	{4014, "CannotReadMessageTimestamp", "cannot read message timestamp"},
	{4015, "CannotReadHeadersLength", "cannot read headers length"},
	{4016, "CannotReadHeadersPayload", "cannot read headers payload"},
	{4017, "TooBigUserHeaders", "too big headers payload"},
	{4018, "InvalidHeaderKey", "invalid header key"},
	{4019, "InvalidHeaderValue", "invalid header value"},
	{4020, "CannotReadMessageLength", "cannot read message length"},
	{4021, "CannotReadMessagePayload", "cannot save messages to segment"},
	{4022, "TooBigMessagePayload", "too big message payload"},
	{4023, "TooManyMessages", "too many messages"},
	{4024, "EmptyMessagePayload", "empty message payload"},
	{4025, "InvalidMessagePayloadLength", "invalid message payload length"},
	{4026, "CannotReadMessageChecksum", "cannot read message checksum"},
	{4027, "InvalidMessageChecksum", "invalid message checksum: %d, expected: %d, for offset: %d"},
	{4028, "InvalidKeyValueLength", "invalid key value length"},
	{4029, "CommandLengthError", "command length error: %s"},
	{4030, "InvalidSegmentsCount", "incorrect segments count size: %d"},
	{4031, "NonZeroOffset", "non-zero offset: %d at index: %d"},
	{4032, "NonZeroTimestamp", "non-zero timestamp: %d at index: %d"},
	{4033, "MissingIndex", "missing index: %d"},
	{4034, "InvalidIndexesByteSize", "invalid indexes byte size: %dB, should be divisible by 16"},
	{4035, "InvalidIndexesCount", "invalid indexes count: %d, expected: %d"},
	{4036, "InvalidMessagesSize", "invalid messages byte size: %dB, expected: %dB"},
	{4037, "TooSmallMessage", "too small message: %dB, expected: %dB"},
	{4038, "InvalidMessageTimestampDelta", "invalid message timestamp delta: %d microseconds exceeds the per-batch limit"},
	{4039, "InvalidBatchChecksum", "invalid batch checksum: %d, expected: %d, for base offset: %d"},
	{4040, "InvalidHeaderKind", "invalid header kind code: %d"},
	{4041, "UnsupportedOptionKey", "unsupported option key: %s"},
	{4042, "InvalidOptionValue", "invalid option value for key: %s"},
	{4043, "OptionsBlockTooLarge", "options block exceeds its limits: %s"},
	{4050, "CannotSendMessagesDueToClientDisconnection", "cannot sed messages due to client disconnection"},
	{4051, "BackgroundSendError", "background send error"},
	{4052, "BackgroundSendTimeout", "background send timeout"},
	{4053, "BackgroundSendBufferFull", "background send buffer is full"},
	{4054, "BackgroundWorkerDisconnected", "background worker disconnected"},
	{4055, "BackgroundSendBufferOverflow", "background send buffer overflow"},
	{4057, "ProducerClosed", "producer closed"},
	{4100, "InvalidOffset", "invalid offset: %d"},
	{4101, "InvalidReservedField", "invalid reserved field value: %d, expected: 0"},
	{5000, "ConsumerGroupIdNotFound", "consumer group with id: %d for topic with id: %d was not found."},
	{5002, "InvalidConsumerGroupId", "invalid consumer group id"},
	{5003, "ConsumerGroupNameNotFound", "consumer group with name: %s for topic with id: %s was not found."},
	{5004, "ConsumerGroupNameAlreadyExists", "consumer group with name: %s for topic with id: %d already exists."},
	{5005, "InvalidConsumerGroupName", "invalid consumer group name"},
	{5006, "ConsumerGroupMemberNotFound", "consumer group member with id: %d for group with id: %d for topic with id: %d was not found."},
	{5007, "CannotCreateConsumerGroupInfo", "failed to create consumer group info file for id: %d for topic with id: %d for stream with id: %d."},
	{5008, "CannotDeleteConsumerGroupInfo", "failed to delete consumer group info file for id: %d for topic with id: %d for stream with id: %d."},
	{5009, "ConsumerGroupPartitionNotOwned", "consumer group member with client id: %d does not own partition: %d at the current generation (rebalance in progress)."},
	{6000, "MissingBaseOffsetRetainedMessageBatch", "base offset is missing"},
	{6001, "MissingLastOffsetDeltaRetainedMessageBatch", "last offset delta is missing"},
	{6002, "MissingMaxTimestampRetainedMessageBatch", "max timestamp is missing"},
	{6003, "MissingLengthRetainedMessageBatch", "length is missing"},
	{6004, "MissingPayloadRetainedMessageBatch", "payload is missing"},
	{7000, "CannotReadBatchBaseOffset", "cannot read batch base offset"},
	{7001, "CannotReadBatchLength", "cannot read batch length"},
	{7002, "CannotReadLastOffsetDelta", "cannot read batch last offset delta"},
	{7003, "CannotReadMaxTimestamp", "cannot read batch maximum timestamp"},
	{7004, "CannotReadBatchPayload", "cannot read batch payload"},
	{8000, "InvalidConnectionString", "invalid connection string"},
	{9000, "SnapshotFileCompletionFailed", "snapshot file completion failed"},
	{10000, "CannotSerializeResource", "cannot serialize resource"},
	{10001, "CannotDeserializeResource", "cannot deserialize resource"},
	{10002, "CannotReadFile", "cannot read file"},
	{10003, "CannotReadFileMetadata", "cannot read file metadata"},
	{10004, "CannotSeekFile", "cannot seek file"},
	{10005, "CannotAppendToFile", "cannot append to file"},
	{10006, "CannotWriteToFile", "cannot write to file"},
	{10007, "CannotOverwriteFile", "cannot overwrite file"},
	{10008, "CannotDeleteFile", "cannot delete file"},
	{10009, "CannotSyncFile", "cannot sync file"},
	{10010, "CannotReadIndexOffset", "cannot read index offset"},
	{10011, "CannotReadIndexPosition", "cannot read index position"},
	{10012, "CannotReadIndexTimestamp", "cannot read index timestamp"},
	{10013, "TimestampOutOfRange", "timestamp out of range: %d"},
	{11000, "ShardNotFound", "shard not found for stream id: %d, topic id: %d, partition id: %d"},
	{11001, "ShardCommunicationError", "shard communication error"},
	{12000, "CannotBindToSocket", "cannot bind to socket with addr: %s"},
	{12001, "TaskTimeout", "task execution timeout"},
	{13000, "IoError", "io error: %s"},
	{14000, "AlreadyAuthenticated", "vsr session already bound; reset before re-binding"},
	{14001, "InvalidSession", "vsr session value %d is invalid (must be non-zero)"},
	{14003, "IncompatibleProtocolVersion", "incompatible binary protocol version: client %d, server accepts [%d, %d]"},
}
