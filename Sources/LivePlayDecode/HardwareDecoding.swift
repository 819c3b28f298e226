import CFFmpeg
import Glibc
import Synchronization

/// Whether video is decoded on a GPU (TXLivePlayer's `enableHWAcceleration`, mpv's `--hwdec`): the device decodes,
/// and each picture is copied to memory (NV12, or P010 for 10 bits) and handed on as a software picture is.
public enum HardwareDecoding: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Software only: the default.
    case off = "no"
    /// What the machine has, for the codecs each supports: NVDEC, then VA-API; software otherwise, quietly.
    case auto
    /// NVIDIA's decoder (CUDA); software, with one 2106, where it cannot start.
    case nvdec
    /// VA-API (Intel, AMD); software, with one 2106, where it cannot start.
    case vaapi

    public var description: String { rawValue }

    /// The devices tried, in order.
    var devices: [HardwareDevice] {
        switch self {
        case .off: []
        case .auto: [.nvdec, .vaapi]
        case .nvdec: [.nvdec]
        case .vaapi: [.vaapi]
        }
    }

    /// A device asked for by name that cannot decode is a warning (2106); `auto` falls back quietly.
    var warns: Bool { self == .nvdec || self == .vaapi }
}

/// A decoding device, as libavutil opens it.
public enum HardwareDevice: String, Sendable, Hashable, CustomStringConvertible {
    case nvdec
    case vaapi

    public var description: String { rawValue }

    var type: AVHWDeviceType {
        switch self {
        case .nvdec: AV_HWDEVICE_TYPE_CUDA
        case .vaapi: AV_HWDEVICE_TYPE_VAAPI
        }
    }
}

/// What a video decoder's hardware did, for the session to report.
public enum HardwareNotice: Sendable, Hashable {
    /// The device decodes this stream.
    case started(HardwareDevice)
    /// No device asked for could decode this stream, for `reason`: software decodes it. A warning (2106) when the
    /// device was asked for by name, a debug line for `auto`.
    case unavailable(HardwareDevice?, reason: String, warns: Bool)
    /// The device failed on the stream's first keyframe, which software decoded instead (2108).
    case firstKeyframeFailed(HardwareDevice, reason: String)
    /// The device failed ``HardwareFallback/failuresAllowed`` packets in a row while playing: software from the
    /// keyframe before them on (2106).
    case failed(HardwareDevice, reason: String)
}

/// The devices opened in this process, each once: a CUDA context or a VA display is shared by every decoder
/// (opening one takes tens of milliseconds and device memory), and a device that failed is not tried again.
/// Process-wide, like the decoder shelf; a device stays open until the process ends.
enum HardwareDevices {
    private enum Opened {
        case ready(UnsafeMutablePointer<AVBufferRef>)
        case failed(String)
    }

    private static let opened = Mutex<[HardwareDevice: Opened]>([:])

    /// A new reference to `device`'s context, which the caller frees (a codec context takes it), or why not.
    static func reference(_ device: HardwareDevice) -> Result<UnsafeMutablePointer<AVBufferRef>, HardwareFailure> {
        opened.withLock { opened in
            if opened[device] == nil {
                var context: UnsafeMutablePointer<AVBufferRef>?
                CodecLog.deviceLines.withLock { $0.removeAll() }
                let status = av_hwdevice_ctx_create(&context, device.type, nil, nil, 0)
                if status >= 0, let context {
                    opened[device] = .ready(context)
                } else {
                    // libavutil's own words first ("Cannot load libcuda.so.1"), then the code's.
                    let said = CodecLog.deviceLines.withLock { lines in
                        lines.map { String($0.dropFirst(CodecLog.deviceContext.count)) }
                    }
                    // libva says why only at verbose level; a machine without a render node is the usual reason.
                    let nodes = device == .vaapi && access("/dev/dri", F_OK) != 0 ? ["no /dev/dri render node"] : []
                    let why = (said + nodes + [CodecSession.describe(status)]).joined(separator: "; ")
                    opened[device] = .failed("cannot open the \(device) device: \(why)")
                }
            }
            switch opened[device] {
            case .ready(let context):
                guard let reference = av_buffer_ref(context) else { return .failure(HardwareFailure("out of memory")) }
                return .success(reference)
            case .failed(let reason): return .failure(HardwareFailure(reason))
            case nil: return .failure(HardwareFailure("not opened"))
            }
        }
    }

    /// Whether `device` opens on this machine (tried once per process).
    static func opens(_ device: HardwareDevice) -> Bool {
        guard case .success(let reference) = reference(device) else { return false }
        var unused: UnsafeMutablePointer<AVBufferRef>? = reference
        av_buffer_unref(&unused)
        return true
    }
}

/// Why a device does not decode a stream, in words for 2106's `reason`.
struct HardwareFailure: Error, Hashable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// What `get_format` picks from the pixel formats libavcodec offers, as values: the device's format when offered,
/// else the first software one. libavcodec offers the software formats alone on its second call, after the
/// device's decoder failed to start; the stream then decodes in software in the same context.
enum HardwareFormatChoice {
    struct Offered: Hashable {
        var name: String
        var isHardware: Bool
    }

    enum Choice: Hashable {
        case hardware(index: Int)
        case software(index: Int)
        case none
    }

    static func pick(_ offered: [Offered], device format: String) -> Choice {
        if let index = offered.firstIndex(where: { $0.name == format }) { return .hardware(index: index) }
        if let index = offered.firstIndex(where: { !$0.isHardware }) { return .software(index: index) }
        return .none
    }
}

/// When a device decoder gives up on a stream (mpv's `--hwdec-software-fallback=3`), as values: at once when the
/// stream's first keyframe fails (2108); later, after ``failuresAllowed`` packets in a row without a picture from a
/// failure on: the packet that failed and those dropped after it while the decoder waits for a keyframe. So a device
/// that fails hands over within three packets, and software decodes again from the keyframe what it dropped: the
/// picture never freezes until the next keyframe. A packet that decodes, or a keyframe taken without a picture yet,
/// ends a run of failures.
struct HardwareFallback: Hashable {
    static let failuresAllowed = 3

    enum Verdict: Hashable {
        case goOn
        case firstKeyframeFailed
        case failedWhilePlaying
    }

    /// The device has given a picture.
    private(set) var decodedPicture = false
    private(set) var consecutiveFailures = 0

    /// - Parameters:
    ///   - failed: the packet gave errors.
    ///   - skipped: the decoder dropped it, waiting for a keyframe (at the start, or after a failure).
    ///   - pictures: the pictures it gave.
    mutating func decoded(failed: Bool, skipped: Bool = false, pictures: Int) -> Verdict {
        if pictures > 0 { decodedPicture = true }
        let failing = pictures == 0 && (failed || (skipped && consecutiveFailures > 0))
        guard failing else {
            // Skipped before the first keyframe is not a failure; anything else without one ends the run.
            if !skipped { consecutiveFailures = 0 }
            return .goOn
        }
        guard decodedPicture else { return .firstKeyframeFailed }
        consecutiveFailures += 1
        return consecutiveFailures >= Self.failuresAllowed ? .failedWhilePlaying : .goOn
    }
}

/// Tests only: a software decoder that stands in for a device (no GPU here), failing the packets it is told to, by
/// their index since it opened; ``DecoderOptions/hardware`` says which device it plays.
struct HardwareStandIn: Hashable, Sendable {
    var failing: Set<Int>
}
