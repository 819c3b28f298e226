import Testing

/// What SDL's `disk` driver wrote, held against the samples the device was given: the same samples, in order,
/// with only silence between them where the device had nothing to play.
///
/// SDL2 plays silence in two places the sink does not choose: a paused device's thread runs, so when it gets in
/// between the device opening and the first sound unpausing it, one device buffer of silence comes first (about
/// once in a hundred opens on a loaded machine, SDL 2.26); and when the queue runs dry (the machine stalled longer
/// than the player's lead), the rest of a buffer, and whole buffers after it, are silence. Both are found here and
/// counted, so a test can bound them; anything else that differs is a mismatch.
struct HeardSound {
    /// Silence the device played that it was not given: where in the given samples, and how many samples long.
    struct Gap: Sendable, CustomStringConvertible {
        var at: Int
        var length: Int
        var description: String { "\(length) samples of silence at sample \(at)" }
    }

    /// What was heard with the gaps taken out: index for index the samples as given, as far as it goes.
    var aligned: [Float] = []
    var gaps: [Gap] = []
    /// The first sample given that was heard as something else (not silence, not the same); nil when none was.
    var mismatchAt: Int?

    /// Silence before the first sound.
    var leadingSilence: Int { gaps.first { $0.at == 0 }?.length ?? 0 }
    /// Gaps after the first sound: the device ran dry.
    var underruns: [Gap] { gaps.filter { $0.at > 0 } }

    init(heard: [Float], given: [Float]) {
        var heardIndex = 0
        var givenIndex = 0
        aligned.reserveCapacity(min(heard.count, given.count))
        // Silence before the first sound is what the device played before it, less the silence the sound itself begins
        // with (a stream's first decoded block can be exact zeros). Matched sample for sample from the start, those
        // zeros of the sound would take the device's leading silence for their own and leave a gap after them.
        let heardLead = heard.prefix { $0 == 0 }.count
        let givenLead = given.prefix { $0 == 0 }.count
        if heardLead > givenLead, givenLead < given.count {
            gaps.append(Gap(at: 0, length: heardLead - givenLead))
            heardIndex = heardLead - givenLead
        }
        while heardIndex < heard.count, givenIndex < given.count {
            if heard[heardIndex] == given[givenIndex] {
                aligned.append(heard[heardIndex])
                heardIndex += 1
                givenIndex += 1
                continue
            }
            // A sample that differs: silence the device added, if the sound goes on as given right after it.
            var end = heardIndex
            while end < heard.count, heard[end] == 0 { end += 1 }
            guard end > heardIndex, end == heard.count || heard[end] == given[givenIndex] else {
                mismatchAt = givenIndex
                return
            }
            gaps.append(Gap(at: givenIndex, length: end - heardIndex))
            heardIndex = end
        }
    }
}

@Suite struct HeardSoundTests {
    @Test func findsTheSilenceSDLAddsAndNothingElse() {
        let given: [Float] = [0.5, -0.5, 0, 0.25, 0.75]
        let heard = HeardSound(heard: [0, 0, 0.5, -0.5, 0, 0, 0, 0.25, 0.75, 0], given: given)
        #expect(heard.mismatchAt == nil)
        #expect(heard.aligned == given)
        #expect(heard.leadingSilence == 2)
        #expect(heard.underruns.map(\.at) == [3] && heard.underruns.map(\.length) == [2])
        let changed = HeardSound(heard: [0.5, 0, 0.4], given: [0.5, 0.25, 0.4])
        #expect(changed.mismatchAt == 1, "silence that does not go on as given is a mismatch")
        #expect(HeardSound(heard: [0.5, 0.1], given: [0.5, 0.25]).mismatchAt == 1)
    }

    /// A sound that begins with exact zeros, after a buffer of the device's own silence: the silence is leading, not a
    /// gap after the sound's first zeros (DeviceSoundTests failed so, now and then, when SDL's paused thread wrote a
    /// buffer of silence before the first block, an AAC stream's 448 samples of zeros).
    @Test func silenceBeforeASoundThatBeginsWithZerosIsLeading() {
        let given: [Float] = [0, 0, 0, 0.5, -0.5]
        let heard = HeardSound(heard: [0, 0, 0, 0, 0, 0.5, -0.5], given: given)
        #expect(heard.mismatchAt == nil)
        #expect(heard.aligned == given)
        #expect(heard.leadingSilence == 2)
        #expect(heard.underruns.isEmpty, "\(heard.gaps)")
        // Without leading silence from the device, none is found; a device that dropped the zeros is a mismatch.
        #expect(HeardSound(heard: given, given: given).gaps.isEmpty)
        #expect(HeardSound(heard: [0, 0.5, -0.5], given: given).mismatchAt != nil)
    }
}
