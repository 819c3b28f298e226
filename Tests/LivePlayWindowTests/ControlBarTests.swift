import LivePlay
@testable import LivePlayWindow
import Testing

/// The control bar's promise, on virtual time and without a window: its three layouts, what a click, a drag and a
/// release on each control does, and when it shows and hides.
struct ControlBarTests {
    let view = PictureSize(width: 960, height: 540)

    /// The middle of `control` in `bar`'s layout.
    func centre(of control: ControlBar.Control, in bar: ControlBar) throws -> (x: Int, y: Int) {
        let frame = try #require(bar.layout(in: view).controls.first { $0.control == control }?.frame, "\(control)")
        return (frame.x + frame.width / 2, frame.y + frame.height / 2)
    }

    /// Where the one seek among `effects` goes.
    func seconds(_ effects: [ControlBar.Effect]) throws -> Double {
        guard effects.count == 1, case .action(.seek(let seconds)) = effects[0] else {
            throw ControlBarTestFailure(description: "not one seek: \(effects)")
        }
        return seconds
    }

    struct ControlBarTestFailure: Error, CustomStringConvertible {
        var description: String
    }

    func visibleBar(_ timeline: PlayerWindow.Timeline) -> ControlBar {
        var bar = ControlBar()
        bar.timeline = timeline
        bar.activity(at: .seconds(10))
        return bar
    }

    /// Behind the live edge of a time-shift window, the bar says how far: `-0:30` (issue 45, point 13).
    @Test func behindTheLiveEdgeTheTimeSaysHowFar() {
        #expect(ControlBar.behindText(position: 90, end: 120) == "-0:30")
        #expect(ControlBar.behindText(position: 120, end: 4000) == "-1:04:40")
        #expect(ControlBar.behindText(position: 130, end: 120) == "-0:00")
    }

    /// A stream played from a LAS manifest has a rendition button, between the volume and CC, as wide as its label;
    /// a press asks for the next rendition.
    @Test func aManifestsBarHasARenditionButtonThatAsksForTheNextRendition() throws {
        var bar = visibleBar(.live)
        #expect(!bar.layout(in: view).controls.contains { $0.control == .rendition }, "no manifest, no button")
        bar.rendition = "AUTO 240P"
        let controls = bar.layout(in: view).controls
        #expect(controls.map(\.control) == [.playPause, .liveBadge, .mute, .volume, .rendition, .captions, .fullscreen])
        let frame = try #require(controls.first { $0.control == .rendition }?.frame)
        #expect(frame.width == 9 * ControlBar.height(forWindowHeight: view.height) * 3 / 10)
        let (x, y) = try centre(of: .rendition, in: bar)
        #expect(bar.press(atX: x, y: y, in: view, at: .seconds(11)) == .bar([.action(.nextRendition)]))
    }

    @Test func eachLayoutHasItsControlsLeftToRightAlongTheBottom() {
        let layouts: [(PlayerWindow.Timeline, [ControlBar.Control])] = [
            (
                .onDemand(position: 65, duration: 200),
                [.playPause, .time, .seekBar, .mute, .volume, .captions, .fullscreen]
            ),
            (.live, [.playPause, .liveBadge, .mute, .volume, .captions, .fullscreen]),
            (
                .timeShift(position: 90, start: 0, end: 120, atLiveEdge: false),
                [.playPause, .time, .seekBar, .goLive, .mute, .volume, .captions, .fullscreen]
            ),
            (
                .timeShift(position: 120, start: 0, end: 120, atLiveEdge: true),
                [.playPause, .seekBar, .liveBadge, .mute, .volume, .captions, .fullscreen]
            ),
        ]
        for (timeline, expected) in layouts {
            let (bar, controls) = visibleBar(timeline).layout(in: view)
            #expect(controls.map(\.control) == expected, "\(timeline)")
            // 540 / 12 = 45 pixels high, the window's width, at its bottom.
            #expect(bar == BarRectangle(x: 0, y: 495, width: 960, height: 45))
            let frames = controls.map(\.frame)
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.x + $0.width < $1.x }, "no overlap: \(frames)")
            #expect(frames.allSatisfy { $0.y == 495 && $0.height == 45 && $0.x >= 0 && $0.x + $0.width <= 960 })
        }
        // The seek bar takes the width left over.
        let controls = visibleBar(.onDemand(position: 0, duration: 1)).layout(in: view).controls
        #expect((controls.first { $0.control == .seekBar }?.frame.width ?? 0) > 960 / 3)
    }

    @Test func theTimeReadsMinutesAndSecondsOrHours() {
        #expect(ControlBar.timeText(position: 65.9, duration: 200) == "1:05 / 3:20")
        #expect(ControlBar.timeText(position: 0, duration: 3725) == "0:00 / 1:02:05")
        #expect(ControlBar.clock(-3) == "0:00")
        #expect(ControlBar.timeText(position: 5, duration: 0) == "0:05", "no duration known: the position alone")
    }

    @Test func itShowsOnActivityAndHidesThreeSecondsLater() {
        var bar = ControlBar()
        #expect(!bar.isVisible(at: .seconds(1)), "hidden until the mouse moves or a key is pressed")
        _ = bar.motion(toX: 10, y: 10, in: view, at: .seconds(5))
        #expect(bar.isVisible(at: .seconds(5)))
        #expect(bar.isVisible(at: .milliseconds(7_999)))
        #expect(!bar.isVisible(at: .seconds(8)), "3 s after the last move")
        bar.activity(at: .seconds(20))
        #expect(bar.isVisible(at: .seconds(22)) && !bar.isVisible(at: .seconds(23)), "a key shows it too")

        // A pointer resting on the bar keeps it; leaving the window or moving off it starts the 3 s again.
        let onBar = view.height - ControlBar.height(forWindowHeight: view.height) / 2
        _ = bar.motion(toX: 10, y: onBar, in: view, at: .seconds(30))
        #expect(bar.isVisible(at: .seconds(60)), "under the pointer")
        _ = bar.pointerLeft()
        #expect(!bar.isVisible(at: .seconds(60)), "the pointer left the window 30 s after its last move")
        _ = bar.motion(toX: 10, y: onBar, in: view, at: .seconds(70))
        _ = bar.motion(toX: 10, y: 10, in: view, at: .seconds(71))
        #expect(bar.isVisible(at: .milliseconds(73_999)) && !bar.isVisible(at: .seconds(74)), "off the bar")
    }

    @Test func buttonsDoTheirControlAndTheRestOfThePictureIsTheClickItWas() throws {
        var bar = visibleBar(.onDemand(position: 65, duration: 200))
        let now = Duration.seconds(11)
        func press(_ control: ControlBar.Control) throws -> ControlBar.Press {
            let point = try centre(of: control, in: bar)
            return bar.press(atX: point.x, y: point.y, in: view, at: now)
        }
        #expect(try press(.playPause) == .bar([.action(.togglePause)]))
        #expect(try press(.mute) == .bar([.action(.toggleMute)]))
        #expect(try press(.captions) == .bar([.toggleCaptions]))
        #expect(try press(.fullscreen) == .bar([.toggleFullscreen]))
        #expect(try press(.time) == .bar([]), "the time is not a button")
        #expect(bar.press(atX: 480, y: 200, in: view, at: now) == .picture, "above the bar: pause / double-click")
        #expect(bar.press(atX: 2, y: 530, in: view, at: now) == .bar([]), "between controls: nothing, no pause")
        var hidden = ControlBar()
        hidden.timeline = bar.timeline
        let point = try centre(of: .playPause, in: hidden)
        #expect(hidden.press(atX: point.x, y: point.y, in: view, at: now) == .picture, "a hidden bar takes no click")
    }

    /// A narrow window (Brightcove's compact layout): the time and the seek bar across a top row, the buttons in a
    /// row below, so the seek bar stays long enough to aim at; live, with no seek bar, keeps one row. A click on
    /// the compact seek bar seeks as in one row.
    @Test func aNarrowWindowPutsTheSeekBarOnARowOfItsOwn() throws {
        let narrow = PictureSize(width: 400, height: 300)
        // 300 / 12 = 32 pixels a row (the least).
        let cases: [(PlayerWindow.Timeline, [ControlBar.Control], [ControlBar.Control])] = [
            (
                .onDemand(position: 65, duration: 200), [.time, .seekBar],
                [.playPause, .mute, .volume, .captions, .fullscreen]
            ),
            (
                .timeShift(position: 90, start: 0, end: 120, atLiveEdge: false), [.time, .seekBar],
                [.playPause, .goLive, .mute, .volume, .captions, .fullscreen]
            ),
        ]
        for (timeline, top, bottom) in cases {
            let (bar, controls) = visibleBar(timeline).layout(in: narrow)
            #expect(bar == BarRectangle(x: 0, y: 236, width: 400, height: 64), "\(timeline)")
            #expect(controls.filter { $0.frame.y == 236 }.map(\.control) == top, "\(timeline)")
            #expect(controls.filter { $0.frame.y == 268 }.map(\.control) == bottom, "\(timeline)")
            #expect(controls.count == top.count + bottom.count)
            for row in [236, 268] {
                let frames = controls.map(\.frame).filter { $0.y == row }
                #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.x + $0.width < $1.x }, "no overlap: \(frames)")
                #expect(frames.allSatisfy { $0.height == 32 && $0.x >= 0 && $0.x + $0.width <= 400 })
            }
            let seekBar = try #require(controls.first { $0.control == .seekBar }?.frame)
            #expect(seekBar.width >= ControlBar.compactSeekBarWidth * 32, "\(seekBar)")
        }
        // In one row the same on-demand bar would leave its seek bar under four bar heights.
        #expect(visibleBar(.onDemand(position: 65, duration: 200)).layout(in: narrow).bar.height == 64)
        let live = visibleBar(.live).layout(in: narrow)
        #expect(live.bar == BarRectangle(x: 0, y: 268, width: 400, height: 32), "live keeps one row")

        var bar = visibleBar(.onDemand(position: 65, duration: 200))
        let frame = try #require(bar.layout(in: narrow).controls.first { $0.control == .seekBar }?.frame)
        let middle = (x: frame.x + (frame.width - 1) / 2, y: frame.y + 16)
        #expect(bar.press(atX: middle.x, y: middle.y, in: narrow, at: .seconds(11)) == .bar([]))
        #expect(abs(try seconds(bar.release(at: .seconds(11))) - 100) < 0.5, "half of 200 s")
        #expect(bar.press(atX: 200, y: 250, in: narrow, at: .seconds(12)) == .bar([]), "the top row is the bar too")
    }

    @Test func aClickOnTheSeekBarSeeksThereAndADragSeeksWhereItEnds() throws {
        var bar = visibleBar(.onDemand(position: 65, duration: 200))
        let frame = try #require(bar.layout(in: view).controls.first { $0.control == .seekBar }?.frame)
        let y = frame.y + frame.height / 2
        #expect(bar.press(atX: frame.x + (frame.width - 1) / 4, y: y, in: view, at: .seconds(11)) == .bar([]))
        #expect(abs(try seconds(bar.release(at: .seconds(11))) - 50) < 0.5, "a quarter of 200 s")

        _ = bar.press(atX: frame.x, y: y, in: view, at: .seconds(12))
        #expect(bar.motion(toX: frame.x + frame.width - 1, y: y - 100, in: view, at: .seconds(13)).isEmpty)
        #expect(bar.seekFraction == 1, "the knob follows the drag")
        #expect(bar.isVisible(at: .seconds(30)), "shown all through a drag")
        #expect(bar.release(at: .seconds(14)) == [.action(.seek(seconds: 200))])
        #expect(!bar.isDragging)

        var unknown = visibleBar(.onDemand(position: 5, duration: 0))
        let unknownFrame = try #require(unknown.layout(in: view).controls.first { $0.control == .seekBar }?.frame)
        _ = unknown.press(atX: unknownFrame.x + 10, y: y, in: view, at: .seconds(11))
        #expect(unknown.release(at: .seconds(11)).isEmpty, "no duration: no seek (not to 0)")
    }

    /// Resting on the seek bar asks for a preview of the time there, once per time; leaving it says so once; a drag, a
    /// live stream and a file of unknown length ask for none.
    @Test func restingOnTheSeekBarAsksForAPreviewOfTheTimeThere() throws {
        var bar = visibleBar(.onDemand(position: 65, duration: 200))
        let frame = try #require(bar.layout(in: view).controls.first { $0.control == .seekBar }?.frame)
        let (quarter, y) = (frame.x + (frame.width - 1) / 4, frame.y + frame.height / 2)
        let asked = bar.motion(toX: quarter, y: y, in: view, at: .seconds(11))
        guard asked.count == 1, case .action(.preview(let seconds?)) = asked[0] else {
            throw ControlBarTestFailure(description: "one preview: \(asked)")
        }
        #expect(abs(seconds - 50) < 0.5, "a quarter of 200 s")
        #expect(bar.hover?.x == quarter)
        #expect(bar.motion(toX: quarter, y: y + 1, in: view, at: .seconds(11)).isEmpty, "the same time: asked once")
        #expect(bar.motion(toX: quarter, y: y - 100, in: view, at: .seconds(12)) == [.action(.preview(seconds: nil))])
        #expect(bar.hover == nil)
        #expect(bar.motion(toX: quarter, y: y - 100, in: view, at: .seconds(12)).isEmpty, "left once")

        _ = bar.press(atX: frame.x, y: y, in: view, at: .seconds(13))
        #expect(bar.motion(toX: quarter, y: y, in: view, at: .seconds(13)).isEmpty, "no preview while dragging")
        _ = bar.release(at: .seconds(13))
        for timeline in [PlayerWindow.Timeline.live, .onDemand(position: 5, duration: 0)] {
            var other = visibleBar(timeline)
            #expect(other.motion(toX: quarter, y: y, in: view, at: .seconds(11)).isEmpty, "\(timeline)")
        }
        var shifted = visibleBar(.timeShift(position: 100, start: 40, end: 160, atLiveEdge: false))
        let shiftedFrame = try #require(shifted.layout(in: view).controls.first { $0.control == .seekBar }?.frame)
        let middle = shifted.motion(
            toX: shiftedFrame.x + (shiftedFrame.width - 1) / 2, y: y, in: view, at: .seconds(11))
        guard middle.count == 1, case .action(.preview(let seconds?)) = middle[0] else {
            throw ControlBarTestFailure(description: "one preview: \(middle)")
        }
        #expect(abs(seconds - 100) < 0.5, "the middle of the time-shift window")
    }

    @Test func theVolumeSliderSetsTheVolumeAsItIsDragged() throws {
        var bar = visibleBar(.live)
        let frame = try #require(bar.layout(in: view).controls.first { $0.control == .volume }?.frame)
        let y = frame.y + frame.height / 2
        #expect(bar.press(atX: frame.x, y: y, in: view, at: .seconds(11)) == .bar([.action(.setVolume(0))]))
        let half = frame.x + (frame.width - 1) / 2
        let moved = bar.motion(toX: half, y: y, in: view, at: .seconds(11))
        #expect(moved.count == 1 && [.action(.setVolume(49)), .action(.setVolume(50))].contains(moved[0]), "\(moved)")
        #expect(bar.release(at: .seconds(12)).isEmpty, "the volume was set as it went")
    }

    @Test func timeShiftSeeksInsideItsWindowAndGoLiveReturnsToTheEdge() throws {
        var bar = visibleBar(.timeShift(position: 1090, start: 1000, end: 1120, atLiveEdge: false))
        #expect(abs(bar.seekFraction - 0.75) < 1e-9, "the knob at 90 s of the 120 s window: \(bar.seekFraction)")
        let frame = try #require(bar.layout(in: view).controls.first { $0.control == .seekBar }?.frame)
        _ = bar.press(atX: frame.x + (frame.width - 1) / 2, y: frame.y + 1, in: view, at: .seconds(11))
        let middle = try seconds(bar.release(at: .seconds(11)))
        #expect(abs(middle - 1060) < 0.1, "the middle of 1000–1120: \(middle)")
        let goLive = try centre(of: .goLive, in: bar)
        #expect(bar.press(atX: goLive.x, y: goLive.y, in: view, at: .seconds(12)) == .bar([.action(.goLive)]))

        var atEdge = visibleBar(.timeShift(position: 1120, start: 1000, end: 1120, atLiveEdge: true))
        let badge = try centre(of: .liveBadge, in: atEdge)
        #expect(atEdge.press(atX: badge.x, y: badge.y, in: view, at: .seconds(12)) == .bar([]), "LIVE at the edge")
    }
}
