import LivePlay

/// A video profile by the name ffprobe prints (`avcodec_profile_name`: libavcodec/profiles.c), from the numbers
/// the sequence header carries; a number FFmpeg has no name for is printed as it is.
enum ProfileName {
    static func of(_ video: VideoCodecConfiguration) -> String {
        let name: String? =
            switch video.codec {
            // avcC byte 2 is `profile_compatibility`, the SPS's constraint flags (constraint_set0 is its top bit).
            case .h264: h264(video.profile, constraints: video.extradata.count > 2 ? video.extradata[2] : 0)
            case .hevc: hevc[video.profile]
            case .av1: av1[video.profile]
            case .vp9: (0...3).contains(video.profile) ? "Profile \(video.profile)" : nil
            case .vp8, .vvc: nil
            }
        return name ?? String(video.profile)
    }

    /// H.264 as `ff_h264_get_profile` sees it: Baseline with constraint_set1 is Constrained Baseline; High 10,
    /// High 4:2:2 and High 4:4:4 Predictive with constraint_set3 are their Intra profiles.
    static func h264(_ profile: Int, constraints: UInt8) -> String? {
        let set1 = constraints & 0x40 != 0
        let set3 = constraints & 0x10 != 0
        switch profile {
        case 66: return set1 ? "Constrained Baseline" : "Baseline"
        case 77: return "Main"
        case 88: return "Extended"
        case 100: return "High"
        case 110: return set3 ? "High 10 Intra" : "High 10"
        case 122: return set3 ? "High 4:2:2 Intra" : "High 4:2:2"
        case 144: return "High 4:4:4"
        case 244: return set3 ? "High 4:4:4 Intra" : "High 4:4:4 Predictive"
        case 44: return "CAVLC 4:4:4"
        case 118: return "Multiview High"
        case 128: return "Stereo High"
        default: return nil
        }
    }

    static let hevc = [1: "Main", 2: "Main 10", 3: "Main Still Picture", 4: "Rext", 9: "SCC"]
    static let av1 = [0: "Main", 1: "High", 2: "Professional"]
}
