#ifndef LIVEPLAY_LAZY_LIBRARIES_H
#define LIVEPLAY_LAZY_LIBRARIES_H

#include <stddef.h>

/* Libraries liveplay loads when a feature first needs them instead of at process start: SDL2 and Xlib for the
   window and the sound device, SDL2_ttf for the window's text, libavformat for recording, libebur128 for loudness
   normalisation, libsystemd's sd-bus for MPRIS. Linked as usual, they
   and their dependencies (53 of the 174 shared objects liveplay loaded) were mapped and relocated on every run, window or not: about a third of
   process start-up. Their functions are defined here as one-instruction jumps through a pointer, so the code that
   calls them is written and type-checked against the libraries' own headers as before; a jump before its library
   was loaded stops the process with a message. A function missing from lazy_libraries.c's lists is a link error. */
typedef enum {
    LIVEPLAY_LAZY_SDL2 = 0,
    LIVEPLAY_LAZY_X11 = 1,
    LIVEPLAY_LAZY_AVFORMAT = 2,
    LIVEPLAY_LAZY_SDL2_TTF = 3,
    LIVEPLAY_LAZY_EBUR128 = 4,
    LIVEPLAY_LAZY_SYSTEMD = 5,
} liveplay_lazy_library;

/* Loads `library` (by the soname liveplay was built against) and points its functions at it. Returns 0, at once
   when it is loaded already; or -1 with the loader's message in `error`. Safe from any thread. */
int liveplay_lazy_load(liveplay_lazy_library library, char *error, size_t capacity);

#endif
