// # LivePlayWindow
//
// A desktop front end over the public `LivePlay` API, through SDL2 (the only module that links it): a
// ``PlayerWindow`` that is a video sink showing each picture at the time the player presents it, scaled by the render
// mode and rotation, with the keyboard controls of `liveplay --window` and a control bar for the mouse
// (``ControlBar``: layout, hit-testing and hiding as a value, drawn by the renderer, its words in DejaVu Sans through
// SDL2_ttf, ``WindowText``); and a ``DeviceAudioSink`` that plays sound through the sound device (PulseAudio,
// PipeWire or ALSA, as SDL finds them) and reports what it holds unplayed, so the device clock is the player's master
// clock. For a stream without video the window shows an ``AudioOnlyCard`` (a poster, or the title and a level meter
// that ``SoundLevelTap`` measures on the way to the device) and the bar's audio-only layout.
//
// Threads: the window runs SDL's video and event loop on a thread of its own (`liveplay-window`), started by
// ``PlayerWindow/init(options:onAction:)`` and ended by ``PlayerWindow/close()`` (both awaited: nothing blocks on
// it); frames reach it through a one-picture mailbox (the newest wins) and a wake-up event. SDL's audio device
// pulls queued sound on SDL's own audio thread; the play loop queues it (`SDL_QueueAudio` locks the device).
