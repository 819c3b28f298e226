#ifndef LIVEPLAY_CSDL2_SHIM_H
#define LIVEPLAY_CSDL2_SHIM_H

#include <SDL2/SDL.h>
#include <SDL2/SDL_syswm.h>
#include <SDL2/SDL_ttf.h>

/* Function-like macros and macro aliases Swift cannot import. */
static inline int liveplay_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }
static inline SDL_AudioFormat liveplay_sdl_audio_f32(void) { return AUDIO_F32SYS; }

/* Whether a window manager looks after `window`, which fullscreen needs: on X11, whether the root window names
   one (EWMH's _NET_SUPPORTING_WM_CHECK); on anything else (Wayland's compositor) always. SDL does not say, and on a
   bare X server it takes a fullscreen request as done while the window keeps its size. */
static inline int liveplay_sdl_has_window_manager(SDL_Window *window) {
#if defined(SDL_VIDEO_DRIVER_X11)
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(window, &info) || info.subsystem != SDL_SYSWM_X11) return 1;
    Display *display = info.info.x11.display;
    Atom check = XInternAtom(display, "_NET_SUPPORTING_WM_CHECK", True);
    if (check == None) return 0;
    Atom type = None;
    int format = 0;
    unsigned long count = 0, after = 0;
    unsigned char *data = NULL;
    int found = XGetWindowProperty(display, DefaultRootWindow(display), check, 0, 1, False, XA_WINDOW, &type, &format,
                                   &count, &after, &data) == Success && count == 1;
    if (data) XFree(data);
    return found;
#else
    (void)window;
    return 1;
#endif
}

#endif
