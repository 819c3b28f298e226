/// # LivePlayLoudness
///
/// Loudness normalisation of the sound played (TUIPlayer's loudness normalisation, a target of −70 to 0 LUFS):
/// ``LoudnessMeter`` measures the programme per EBU R 128 / ITU-R BS.1770 with libebur128 (its one wrapper, the
/// library loaded when first needed), and ``LoudnessNormalizer`` turns the measure into a gain that moves slowly and
/// never lets a sample past the peak limit. Neither reads a clock: time is the sound's own, its samples.
enum LivePlayLoudness {}
