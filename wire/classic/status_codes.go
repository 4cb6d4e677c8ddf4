package classic

// Status codes of the 0.8 server (its IggyError list, 222 codes). A reply
// carries one in its status word; 0 is success. TestStatusCodes checks this
// table against the legacy error_codes.json.
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
	StatusTcpError                                   Status = 31
	StatusQuicError                                  Status = 32
	StatusInvalidServerAddress                       Status = 33
	StatusInvalidClientAddress                       Status = 34
	StatusInvalidIpAddress                           Status = 35
	StatusHttpError                                  Status = 36
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
	StatusNotConnected                               Status = 61
	StatusClientShutdown                             Status = 63
	StatusInvalidTlsDomain                           Status = 64
	StatusInvalidTlsCertificatePath                  Status = 65
	StatusInvalidTlsCertificate                      Status = 66
	StatusFailedToAddCertificate                     Status = 67
	StatusInvalidEncryptionKey                       Status = 70
	StatusCannotEncryptData                          Status = 71
	StatusCannotDecryptData                          Status = 72
	StatusInvalidJwtAlgorithm                        Status = 73
	StatusInvalidJwtSecret                           Status = 74
	StatusJwtMissing                                 Status = 75
	StatusCannotGenerateJwt                          Status = 76
	StatusAccessTokenMissing                         Status = 77
	StatusInvalidAccessToken                         Status = 78
	StatusCannotFetchJwks                            Status = 79
	StatusInvalidSizeBytes                           Status = 80
	StatusInvalidUtf8                                Status = 81
	StatusInvalidNumberEncoding                      Status = 82
	StatusInvalidBooleanValue                        Status = 83
	StatusInvalidNumberValue                         Status = 84
	StatusClientNotFound                             Status = 100
	StatusInvalidClientId                            Status = 101
	StatusConnectionClosed                           Status = 206
	StatusCannotParseHeaderKind                      Status = 209
	StatusHttpResponseError                          Status = 300
	StatusInvalidHttpRequest                         Status = 301
	StatusInvalidJsonResponse                        Status = 302
	StatusInvalidBytesResponse                       Status = 303
	StatusEmptyResponse                              Status = 304
	StatusCannotCreateEndpoint                       Status = 305
	StatusCannotParseUrl                             Status = 306
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
	StatusStreamIdNotFound                           Status = 1009
	StatusStreamNameNotFound                         Status = 1010
	StatusStreamDirectoryNotFound                    Status = 1011
	StatusStreamNameAlreadyExists                    Status = 1012
	StatusInvalidStreamName                          Status = 1013
	StatusInvalidStreamId                            Status = 1014
	StatusCannotReadStreams                          Status = 1015
	StatusInvalidTopicSize                           Status = 1019
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
	StatusTopicIdNotFound                            Status = 2010
	StatusTopicNameNotFound                          Status = 2011
	StatusTopicNameAlreadyExists                     Status = 2013
	StatusInvalidTopicName                           Status = 2014
	StatusTooManyPartitions                          Status = 2015
	StatusInvalidTopicId                             Status = 2016
	StatusCannotReadTopics                           Status = 2017
	StatusInvalidReplicationFactor                   Status = 2018
	StatusInvalidPartitionsCount                     Status = 2019
	StatusTopicDirectoryNotFound                     Status = 2020
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
	StatusCannotReadMessageId                        Status = 4012
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
	StatusCannotSendMessagesDueToClientDisconnection Status = 4050
	StatusBackgroundSendError                        Status = 4051
	StatusBackgroundSendTimeout                      Status = 4052
	StatusBackgroundSendBufferFull                   Status = 4053
	StatusBackgroundWorkerDisconnected               Status = 4054
	StatusBackgroundSendBufferOverflow               Status = 4055
	StatusProducerClosed                             Status = 4057
	StatusInvalidOffset                              Status = 4100
	StatusInvalidReservedField                       Status = 4101
	StatusConsumerGroupIdNotFound                    Status = 5000
	StatusInvalidConsumerGroupId                     Status = 5002
	StatusConsumerGroupNameNotFound                  Status = 5003
	StatusConsumerGroupNameAlreadyExists             Status = 5004
	StatusInvalidConsumerGroupName                   Status = 5005
	StatusConsumerGroupMemberNotFound                Status = 5006
	StatusCannotCreateConsumerGroupInfo              Status = 5007
	StatusCannotDeleteConsumerGroupInfo              Status = 5008
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
)

// statusTable is sorted by code for binary search.
var statusTable = [...]statusInfo{
	{StatusError, "Error", true},
	{StatusInvalidConfiguration, "InvalidConfiguration", true},
	{StatusInvalidCommand, "InvalidCommand", true},
	{StatusInvalidFormat, "InvalidFormat", true},
	{StatusFeatureUnavailable, "FeatureUnavailable", true},
	{StatusInvalidIdentifier, "InvalidIdentifier", true},
	{StatusInvalidVersion, "InvalidVersion", true},
	{StatusDisconnected, "Disconnected", true},
	{StatusCannotEstablishConnection, "CannotEstablishConnection", true},
	{StatusCannotCreateBaseDirectory, "CannotCreateBaseDirectory", true},
	{StatusCannotCreateRuntimeDirectory, "CannotCreateRuntimeDirectory", true},
	{StatusCannotRemoveRuntimeDirectory, "CannotRemoveRuntimeDirectory", true},
	{StatusCannotCreateStateDirectory, "CannotCreateStateDirectory", true},
	{StatusStateFileNotFound, "StateFileNotFound", true},
	{StatusStateFileCorrupted, "StateFileCorrupted", true},
	{StatusInvalidStateEntryChecksum, "InvalidStateEntryChecksum", true},
	{StatusCannotOpenDatabase, "CannotOpenDatabase", true},
	{StatusResourceNotFound, "ResourceNotFound", true},
	{StatusCannotCloseWebSocketConnection, "CannotCloseWebSocketConnection", false},
	{StatusStaleClient, "StaleClient", true},
	{StatusTcpError, "TcpError", true},
	{StatusQuicError, "QuicError", true},
	{StatusInvalidServerAddress, "InvalidServerAddress", true},
	{StatusInvalidClientAddress, "InvalidClientAddress", true},
	{StatusInvalidIpAddress, "InvalidIpAddress", true},
	{StatusHttpError, "HttpError", false},
	{StatusUnauthenticated, "Unauthenticated", true},
	{StatusUnauthorized, "Unauthorized", true},
	{StatusInvalidCredentials, "InvalidCredentials", true},
	{StatusInvalidUsername, "InvalidUsername", true},
	{StatusInvalidPassword, "InvalidPassword", true},
	{StatusInvalidUserStatus, "InvalidUserStatus", true},
	{StatusUserAlreadyExists, "UserAlreadyExists", true},
	{StatusUserInactive, "UserInactive", true},
	{StatusCannotDeleteUser, "CannotDeleteUser", true},
	{StatusCannotChangePermissions, "CannotChangePermissions", true},
	{StatusInvalidPersonalAccessTokenName, "InvalidPersonalAccessTokenName", true},
	{StatusPersonalAccessTokenAlreadyExists, "PersonalAccessTokenAlreadyExists", true},
	{StatusPersonalAccessTokensLimitReached, "PersonalAccessTokensLimitReached", true},
	{StatusInvalidPersonalAccessToken, "InvalidPersonalAccessToken", true},
	{StatusPersonalAccessTokenExpired, "PersonalAccessTokenExpired", true},
	{StatusUsersLimitReached, "UsersLimitReached", true},
	{StatusNotConnected, "NotConnected", true},
	{StatusClientShutdown, "ClientShutdown", true},
	{StatusInvalidTlsDomain, "InvalidTlsDomain", true},
	{StatusInvalidTlsCertificatePath, "InvalidTlsCertificatePath", true},
	{StatusInvalidTlsCertificate, "InvalidTlsCertificate", true},
	{StatusFailedToAddCertificate, "FailedToAddCertificate", true},
	{StatusInvalidEncryptionKey, "InvalidEncryptionKey", true},
	{StatusCannotEncryptData, "CannotEncryptData", true},
	{StatusCannotDecryptData, "CannotDecryptData", true},
	{StatusInvalidJwtAlgorithm, "InvalidJwtAlgorithm", true},
	{StatusInvalidJwtSecret, "InvalidJwtSecret", true},
	{StatusJwtMissing, "JwtMissing", true},
	{StatusCannotGenerateJwt, "CannotGenerateJwt", true},
	{StatusAccessTokenMissing, "AccessTokenMissing", true},
	{StatusInvalidAccessToken, "InvalidAccessToken", true},
	{StatusCannotFetchJwks, "CannotFetchJwks", false},
	{StatusInvalidSizeBytes, "InvalidSizeBytes", true},
	{StatusInvalidUtf8, "InvalidUtf8", true},
	{StatusInvalidNumberEncoding, "InvalidNumberEncoding", true},
	{StatusInvalidBooleanValue, "InvalidBooleanValue", true},
	{StatusInvalidNumberValue, "InvalidNumberValue", true},
	{StatusClientNotFound, "ClientNotFound", true},
	{StatusInvalidClientId, "InvalidClientId", true},
	{StatusConnectionClosed, "ConnectionClosed", true},
	{StatusCannotParseHeaderKind, "CannotParseHeaderKind", true},
	{StatusHttpResponseError, "HttpResponseError", true},
	{StatusInvalidHttpRequest, "InvalidHttpRequest", true},
	{StatusInvalidJsonResponse, "InvalidJsonResponse", true},
	{StatusInvalidBytesResponse, "InvalidBytesResponse", true},
	{StatusEmptyResponse, "EmptyResponse", true},
	{StatusCannotCreateEndpoint, "CannotCreateEndpoint", true},
	{StatusCannotParseUrl, "CannotParseUrl", true},
	{StatusWebSocketError, "WebSocketError", false},
	{StatusWebSocketConnectionError, "WebSocketConnectionError", false},
	{StatusWebSocketCloseError, "WebSocketCloseError", false},
	{StatusWebSocketReceiveError, "WebSocketReceiveError", false},
	{StatusWebSocketSendError, "WebSocketSendError", false},
	{StatusCannotCreateStreamsDirectory, "CannotCreateStreamsDirectory", true},
	{StatusCannotCreateStreamDirectory, "CannotCreateStreamDirectory", true},
	{StatusCannotCreateStreamInfo, "CannotCreateStreamInfo", true},
	{StatusCannotUpdateStreamInfo, "CannotUpdateStreamInfo", true},
	{StatusCannotOpenStreamInfo, "CannotOpenStreamInfo", true},
	{StatusCannotReadStreamInfo, "CannotReadStreamInfo", true},
	{StatusCannotCreateStream, "CannotCreateStream", true},
	{StatusCannotDeleteStream, "CannotDeleteStream", true},
	{StatusCannotDeleteStreamDirectory, "CannotDeleteStreamDirectory", true},
	{StatusStreamIdNotFound, "StreamIdNotFound", true},
	{StatusStreamNameNotFound, "StreamNameNotFound", true},
	{StatusStreamDirectoryNotFound, "StreamDirectoryNotFound", true},
	{StatusStreamNameAlreadyExists, "StreamNameAlreadyExists", true},
	{StatusInvalidStreamName, "InvalidStreamName", true},
	{StatusInvalidStreamId, "InvalidStreamId", true},
	{StatusCannotReadStreams, "CannotReadStreams", true},
	{StatusInvalidTopicSize, "InvalidTopicSize", true},
	{StatusCannotCreateTopicsDirectory, "CannotCreateTopicsDirectory", true},
	{StatusCannotCreateTopicDirectory, "CannotCreateTopicDirectory", true},
	{StatusCannotCreateTopicInfo, "CannotCreateTopicInfo", true},
	{StatusCannotUpdateTopicInfo, "CannotUpdateTopicInfo", true},
	{StatusCannotOpenTopicInfo, "CannotOpenTopicInfo", true},
	{StatusCannotReadTopicInfo, "CannotReadTopicInfo", true},
	{StatusCannotCreateTopic, "CannotCreateTopic", true},
	{StatusCannotDeleteTopic, "CannotDeleteTopic", true},
	{StatusCannotDeleteTopicDirectory, "CannotDeleteTopicDirectory", true},
	{StatusCannotPollTopic, "CannotPollTopic", true},
	{StatusTopicIdNotFound, "TopicIdNotFound", true},
	{StatusTopicNameNotFound, "TopicNameNotFound", true},
	{StatusTopicNameAlreadyExists, "TopicNameAlreadyExists", true},
	{StatusInvalidTopicName, "InvalidTopicName", true},
	{StatusTooManyPartitions, "TooManyPartitions", true},
	{StatusInvalidTopicId, "InvalidTopicId", true},
	{StatusCannotReadTopics, "CannotReadTopics", true},
	{StatusInvalidReplicationFactor, "InvalidReplicationFactor", true},
	{StatusInvalidPartitionsCount, "InvalidPartitionsCount", false},
	{StatusTopicDirectoryNotFound, "TopicDirectoryNotFound", false},
	{StatusCannotCreatePartition, "CannotCreatePartition", true},
	{StatusCannotCreatePartitionsDirectory, "CannotCreatePartitionsDirectory", true},
	{StatusCannotCreatePartitionDirectory, "CannotCreatePartitionDirectory", true},
	{StatusCannotOpenPartitionLogFile, "CannotOpenPartitionLogFile", true},
	{StatusCannotReadPartitions, "CannotReadPartitions", true},
	{StatusCannotDeletePartition, "CannotDeletePartition", true},
	{StatusCannotDeletePartitionDirectory, "CannotDeletePartitionDirectory", true},
	{StatusPartitionNotFound, "PartitionNotFound", true},
	{StatusNoPartitions, "NoPartitions", true},
	{StatusTopicFull, "TopicFull", true},
	{StatusCannotDeleteConsumerOffsetsDirectory, "CannotDeleteConsumerOffsetsDirectory", true},
	{StatusCannotDeleteConsumerOffsetFile, "CannotDeleteConsumerOffsetFile", true},
	{StatusCannotCreateConsumerOffsetsDirectory, "CannotCreateConsumerOffsetsDirectory", true},
	{StatusCannotReadConsumerOffsets, "CannotReadConsumerOffsets", true},
	{StatusConsumerOffsetNotFound, "ConsumerOffsetNotFound", true},
	{StatusNotResolvedConsumer, "NotResolvedConsumer", false},
	{StatusCannotOpenConsumerOffsetsFile, "CannotOpenConsumerOffsetsFile", false},
	{StatusSegmentNotFound, "SegmentNotFound", true},
	{StatusSegmentClosed, "SegmentClosed", true},
	{StatusInvalidSegmentSize, "InvalidSegmentSize", true},
	{StatusCannotCreateSegmentLogFile, "CannotCreateSegmentLogFile", true},
	{StatusCannotCreateSegmentIndexFile, "CannotCreateSegmentIndexFile", true},
	{StatusCannotCreateSegmentTimeIndexFile, "CannotCreateSegmentTimeIndexFile", true},
	{StatusCannotSaveMessagesToSegment, "CannotSaveMessagesToSegment", true},
	{StatusCannotSaveIndexToSegment, "CannotSaveIndexToSegment", true},
	{StatusCannotSaveTimeIndexToSegment, "CannotSaveTimeIndexToSegment", true},
	{StatusInvalidMessagesCount, "InvalidMessagesCount", true},
	{StatusCannotAppendMessage, "CannotAppendMessage", true},
	{StatusCannotReadMessage, "CannotReadMessage", true},
	{StatusCannotReadMessageId, "CannotReadMessageId", true},
	{StatusCannotReadMessageState, "CannotReadMessageState", true},
	{StatusCannotReadMessageTimestamp, "CannotReadMessageTimestamp", true},
	{StatusCannotReadHeadersLength, "CannotReadHeadersLength", true},
	{StatusCannotReadHeadersPayload, "CannotReadHeadersPayload", true},
	{StatusTooBigUserHeaders, "TooBigUserHeaders", true},
	{StatusInvalidHeaderKey, "InvalidHeaderKey", true},
	{StatusInvalidHeaderValue, "InvalidHeaderValue", true},
	{StatusCannotReadMessageLength, "CannotReadMessageLength", true},
	{StatusCannotReadMessagePayload, "CannotReadMessagePayload", true},
	{StatusTooBigMessagePayload, "TooBigMessagePayload", true},
	{StatusTooManyMessages, "TooManyMessages", true},
	{StatusEmptyMessagePayload, "EmptyMessagePayload", true},
	{StatusInvalidMessagePayloadLength, "InvalidMessagePayloadLength", true},
	{StatusCannotReadMessageChecksum, "CannotReadMessageChecksum", true},
	{StatusInvalidMessageChecksum, "InvalidMessageChecksum", true},
	{StatusInvalidKeyValueLength, "InvalidKeyValueLength", true},
	{StatusCommandLengthError, "CommandLengthError", true},
	{StatusInvalidSegmentsCount, "InvalidSegmentsCount", true},
	{StatusNonZeroOffset, "NonZeroOffset", true},
	{StatusNonZeroTimestamp, "NonZeroTimestamp", true},
	{StatusMissingIndex, "MissingIndex", true},
	{StatusInvalidIndexesByteSize, "InvalidIndexesByteSize", true},
	{StatusInvalidIndexesCount, "InvalidIndexesCount", true},
	{StatusInvalidMessagesSize, "InvalidMessagesSize", true},
	{StatusTooSmallMessage, "TooSmallMessage", true},
	{StatusInvalidMessageTimestampDelta, "InvalidMessageTimestampDelta", false},
	{StatusInvalidBatchChecksum, "InvalidBatchChecksum", false},
	{StatusInvalidHeaderKind, "InvalidHeaderKind", false},
	{StatusCannotSendMessagesDueToClientDisconnection, "CannotSendMessagesDueToClientDisconnection", true},
	{StatusBackgroundSendError, "BackgroundSendError", true},
	{StatusBackgroundSendTimeout, "BackgroundSendTimeout", true},
	{StatusBackgroundSendBufferFull, "BackgroundSendBufferFull", true},
	{StatusBackgroundWorkerDisconnected, "BackgroundWorkerDisconnected", true},
	{StatusBackgroundSendBufferOverflow, "BackgroundSendBufferOverflow", true},
	{StatusProducerClosed, "ProducerClosed", true},
	{StatusInvalidOffset, "InvalidOffset", true},
	{StatusInvalidReservedField, "InvalidReservedField", false},
	{StatusConsumerGroupIdNotFound, "ConsumerGroupIdNotFound", true},
	{StatusInvalidConsumerGroupId, "InvalidConsumerGroupId", true},
	{StatusConsumerGroupNameNotFound, "ConsumerGroupNameNotFound", true},
	{StatusConsumerGroupNameAlreadyExists, "ConsumerGroupNameAlreadyExists", true},
	{StatusInvalidConsumerGroupName, "InvalidConsumerGroupName", true},
	{StatusConsumerGroupMemberNotFound, "ConsumerGroupMemberNotFound", true},
	{StatusCannotCreateConsumerGroupInfo, "CannotCreateConsumerGroupInfo", true},
	{StatusCannotDeleteConsumerGroupInfo, "CannotDeleteConsumerGroupInfo", true},
	{StatusMissingBaseOffsetRetainedMessageBatch, "MissingBaseOffsetRetainedMessageBatch", true},
	{StatusMissingLastOffsetDeltaRetainedMessageBatch, "MissingLastOffsetDeltaRetainedMessageBatch", true},
	{StatusMissingMaxTimestampRetainedMessageBatch, "MissingMaxTimestampRetainedMessageBatch", true},
	{StatusMissingLengthRetainedMessageBatch, "MissingLengthRetainedMessageBatch", true},
	{StatusMissingPayloadRetainedMessageBatch, "MissingPayloadRetainedMessageBatch", true},
	{StatusCannotReadBatchBaseOffset, "CannotReadBatchBaseOffset", true},
	{StatusCannotReadBatchLength, "CannotReadBatchLength", true},
	{StatusCannotReadLastOffsetDelta, "CannotReadLastOffsetDelta", true},
	{StatusCannotReadMaxTimestamp, "CannotReadMaxTimestamp", true},
	{StatusCannotReadBatchPayload, "CannotReadBatchPayload", true},
	{StatusInvalidConnectionString, "InvalidConnectionString", true},
	{StatusSnapshotFileCompletionFailed, "SnapshotFileCompletionFailed", true},
	{StatusCannotSerializeResource, "CannotSerializeResource", true},
	{StatusCannotDeserializeResource, "CannotDeserializeResource", true},
	{StatusCannotReadFile, "CannotReadFile", true},
	{StatusCannotReadFileMetadata, "CannotReadFileMetadata", true},
	{StatusCannotSeekFile, "CannotSeekFile", true},
	{StatusCannotAppendToFile, "CannotAppendToFile", true},
	{StatusCannotWriteToFile, "CannotWriteToFile", true},
	{StatusCannotOverwriteFile, "CannotOverwriteFile", true},
	{StatusCannotDeleteFile, "CannotDeleteFile", true},
	{StatusCannotSyncFile, "CannotSyncFile", true},
	{StatusCannotReadIndexOffset, "CannotReadIndexOffset", true},
	{StatusCannotReadIndexPosition, "CannotReadIndexPosition", true},
	{StatusCannotReadIndexTimestamp, "CannotReadIndexTimestamp", true},
	{StatusTimestampOutOfRange, "TimestampOutOfRange", false},
	{StatusShardNotFound, "ShardNotFound", false},
	{StatusShardCommunicationError, "ShardCommunicationError", false},
	{StatusCannotBindToSocket, "CannotBindToSocket", false},
	{StatusTaskTimeout, "TaskTimeout", false},
	{StatusIoError, "IoError", false},
}
