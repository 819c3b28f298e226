public import LivePlayBuffering
public import LivePlayCache
public import LivePlayCore
public import LivePlayDecode
public import LivePlayFLV
public import LivePlayRecording
public import LivePlayTransport

// The types of the lower modules a front end names, so that `import LivePlay` is all it needs: the stream's
// vocabulary, what the demuxer and decoders hand out, the transport's options and events, the latency
// parameters. Named one by one rather than re-exporting the modules whole, so LivePlay's public surface is
// what is listed here and in its own files, and a front end's imports show the layering (STYLE.md).

// Media and codecs (LivePlayCore).
public typealias MediaTimestamp = LivePlayCore.MediaTimestamp
public typealias MediaKind = LivePlayCore.MediaKind
public typealias EncodedPacket = LivePlayCore.EncodedPacket
public typealias VideoCodec = LivePlayCore.VideoCodec
public typealias AudioCodec = LivePlayCore.AudioCodec
public typealias VideoCodecConfiguration = LivePlayCore.VideoCodecConfiguration
public typealias AudioCodecConfiguration = LivePlayCore.AudioCodecConfiguration
public typealias StreamAddress = LivePlayCore.StreamAddress
public typealias Redaction = LivePlayCore.Redaction

// What the FLV demuxer finds (LivePlayFLV).
public typealias FLVDemuxer = LivePlayFLV.FLVDemuxer
public typealias FLVTrack = LivePlayFLV.FLVTrack
public typealias FLVVideoFourCC = LivePlayFLV.FLVVideoFourCC
public typealias FLVAudioFourCC = LivePlayFLV.FLVAudioFourCC
public typealias FLVElement = LivePlayFLV.FLVElement
public typealias FLVFileHeader = LivePlayFLV.FLVFileHeader
public typealias FLVMetadata = LivePlayFLV.FLVMetadata
public typealias FLVDataMessage = LivePlayFLV.FLVDataMessage
public typealias FLVError = LivePlayFLV.FLVError
public typealias AMF0Value = LivePlayFLV.AMF0Value

// Decoders and frames (LivePlayDecode).
public typealias VideoFrame = LivePlayDecode.VideoFrame
public typealias AudioFrame = LivePlayDecode.AudioFrame
public typealias PictureSize = LivePlayDecode.PictureSize
public typealias Caption = LivePlayDecode.Caption
public typealias CaptionChannel = LivePlayDecode.CaptionChannel
public typealias CaptionScreen = LivePlayDecode.CaptionScreen
public typealias RGBPicture = LivePlayDecode.RGBPicture
public typealias PNGEncoder = LivePlayDecode.PNGEncoder
public typealias StillImage = LivePlayDecode.StillImage
public typealias DecoderOptions = LivePlayDecode.DecoderOptions
public typealias DecodeError = LivePlayDecode.DecodeError
public typealias HardwareDecoding = LivePlayDecode.HardwareDecoding
public typealias HardwareDevice = LivePlayDecode.HardwareDevice
public typealias HardwareNotice = LivePlayDecode.HardwareNotice
public typealias CodecLog = LivePlayDecode.CodecLog

// Transports (LivePlayTransport): options, and the seam for a transport of the caller's own.
public typealias StreamURL = LivePlayTransport.StreamURL
public typealias TransportOptions = LivePlayTransport.TransportOptions
public typealias HTTPHeaderField = LivePlayTransport.HTTPHeaderField
public typealias RTMPEnhancedConnect = LivePlayTransport.RTMPEnhancedConnect
public typealias ByteSource = LivePlayTransport.ByteSource
public typealias ByteConnection = LivePlayTransport.ByteConnection
public typealias TransportEvent = LivePlayTransport.TransportEvent
public typealias TransportError = LivePlayTransport.TransportError
/// What broke a connection (`reason` in events; ``PlaybackState/reconnects``' keys).
public typealias TransportErrorCode = LivePlayTransport.TransportError.Code
public typealias StopRequest<Reason: Sendable> = LivePlayTransport.StopRequest<Reason>

// The cache and the downloader (LivePlayCache): media on demand kept on disk to play again.
public typealias MediaCache = LivePlayCache.MediaCache
public typealias CacheEntry = LivePlayCache.CacheEntry
public typealias CacheKeys = LivePlayCache.CacheKeys
public typealias CacheError = LivePlayCache.CacheError
public typealias Downloader = LivePlayCache.Downloader
public typealias DownloadOptions = LivePlayCache.DownloadOptions
public typealias DownloadUpdate = LivePlayCache.DownloadUpdate
public typealias RemoteFile = LivePlayTransport.RemoteFile
public typealias TimeShiftRing = LivePlayTransport.TimeShiftRing

// What a recording is written as (LivePlayRecording): ``RecordingOptions`` names it.
public typealias RecordingFormat = LivePlayRecording.RecordingFormat

// Latency modes and the engine's figures (LivePlayBuffering).
public typealias LatencyMode = LivePlayBuffering.LatencyMode
public typealias LatencyParameters = LivePlayBuffering.LatencyParameters
public typealias JitterBuffer = LivePlayBuffering.JitterBuffer
public typealias PlaybackEngine = LivePlayBuffering.PlaybackEngine
public typealias PlaybackStatistics = LivePlayBuffering.PlaybackStatistics
