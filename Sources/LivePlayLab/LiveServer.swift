public import LivePlayDemo

// The live origin lives in LivePlayDemo, so the `liveplay` binary links the server its demo plays and not the lab.
// The lab names its types here, one by one as LivePlay's Vocabulary.swift does, so `import LivePlayLab` stays all a
// test, bench or sample needs to put a player in front of a live stream.
public typealias LiveFLVServer = LivePlayDemo.LiveFLVServer
public typealias LiveFLVProgram = LivePlayDemo.LiveFLVProgram
public typealias LiveFLVSchedule = LivePlayDemo.LiveFLVSchedule
public typealias LiveChunk = LivePlayDemo.LiveChunk
public typealias GOPCache = LivePlayDemo.GOPCache
public typealias WallClockSchedule = LivePlayDemo.WallClockSchedule
public typealias FLVTagSplitter = LivePlayDemo.FLVTagSplitter
public typealias Loopback = LivePlayDemo.Loopback
public typealias DemoError = LivePlayDemo.DemoError
