// A front end in thirty lines: decode a local FLV with LivePlay and report what came out.
//
//     swift run decode-file-sample FILE.flv
import Foundation
import LivePlay

guard CommandLine.arguments.count == 2 else {
    print("usage: decode-file-sample FILE.flv")
    exit(64)
}

let reader = try MediaReader(path: CommandLine.arguments[1], options: .init(decodes: true))
var videoFrames = 0
var audioSamples = 0
while let event = try reader.next() {
    switch event {
    case .element(.videoConfiguration(let video)):
        print("video \(video.codec.rawValue) \(video.width)x\(video.height)")
    case .element(.audioConfiguration(let audio)):
        print("audio \(audio.codec.rawValue) \(audio.sampleRate) Hz x\(audio.channels)")
    case .element(.warning(let warning)):
        print("warning: \(warning)")
    case .videoFrame(let frame):
        videoFrames += 1
        if videoFrames == 1 { print("first frame at \(frame.pts): \(frame.pixelFormat), md5 \(frame.md5())") }
    case .audioFrame(let frame):
        audioSamples += frame.sampleCount
    case .decodeError(let kind, let error):
        print("\(kind.rawValue) decode error: \(error)")
    case .hardware(_, let decoder):
        print("video decoder: \(decoder)")
    case .element:
        break
    }
}
print("\(videoFrames) video frames, \(audioSamples) audio samples per channel")
