#ifndef LIVEPLAY_CSDL2_SHIM_H
#define LIVEPLAY_CSDL2_SHIM_H

#include <SDL2/SDL.h>

/* Function-like macros and macro aliases Swift cannot import. */
static inline int liveplay_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }
static inline SDL_AudioFormat liveplay_sdl_audio_f32(void) { return AUDIO_F32SYS; }

#endif
