#include "lazy_libraries.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <libavformat/version.h>

/* The functions liveplay calls, per library (`nm -u` of LivePlayWindow's, LivePlayRecording's, LivePlayLoudness's and
   LivePlayMPRIS's objects). */
#define LIVEPLAY_SDL2_FUNCTIONS(X)                                                                                    \
    X(SDL_ClearQueuedAudio) X(SDL_CloseAudioDevice) X(SDL_CreateRenderer) X(SDL_CreateTexture)                        \
    X(SDL_CreateTextureFromSurface) X(SDL_CreateWindow) X(SDL_DestroyRenderer) X(SDL_DestroyTexture)                  \
    X(SDL_DestroyWindow) X(SDL_FreeSurface) X(SDL_GetCurrentVideoDriver) X(SDL_GetDisplayBounds) X(SDL_GetError)      \
    X(SDL_GetQueuedAudioSize)                                                                                         \
    X(SDL_GetRendererInfo) X(SDL_GetRendererOutputSize) X(SDL_GetWindowDisplayIndex) X(SDL_GetWindowPosition)         \
    X(SDL_GetWindowSize) X(SDL_GetWindowWMInfo) X(SDL_InitSubSystem) X(SDL_LockAudioDevice) X(SDL_OpenAudioDevice)    \
    X(SDL_PauseAudioDevice) X(SDL_PollEvent) X(SDL_PushEvent) X(SDL_QueueAudio) X(SDL_QuitSubSystem)                  \
    X(SDL_RegisterEvents) X(SDL_RenderClear) X(SDL_RenderCopy) X(SDL_RenderCopyExF) X(SDL_RenderFillRect)             \
    X(SDL_RenderFillRects) X(SDL_RenderPresent) X(SDL_RenderReadPixels) X(SDL_SetHint)                                \
    X(SDL_SetRenderDrawBlendMode) X(SDL_SetRenderDrawColor) X(SDL_SetWindowBordered) X(SDL_SetWindowFullscreen)       \
    X(SDL_SetWindowPosition) X(SDL_SetWindowSize) X(SDL_SetWindowTitle) X(SDL_SetYUVConversionMode)                   \
    X(SDL_UnlockAudioDevice) X(SDL_UpdateNVTexture) X(SDL_UpdateTexture) X(SDL_UpdateYUVTexture)                      \
    X(SDL_WaitEventTimeout)
#define LIVEPLAY_X11_FUNCTIONS(X) X(XFree) X(XGetWindowProperty) X(XInternAtom)
#define LIVEPLAY_SDL2_TTF_FUNCTIONS(X)                                                                                \
    X(TTF_CloseFont) X(TTF_Init) X(TTF_OpenFont) X(TTF_Quit) X(TTF_RenderUTF8_Blended) X(TTF_SizeUTF8)
#define LIVEPLAY_EBUR128_FUNCTIONS(X)                                                                                 \
    X(ebur128_init) X(ebur128_destroy) X(ebur128_add_frames_float) X(ebur128_loudness_momentary)                      \
    X(ebur128_loudness_shortterm)
#define LIVEPLAY_SYSTEMD_FUNCTIONS(X)                                                                                 \
    X(sd_bus_open_user) X(sd_bus_request_name) X(sd_bus_release_name) X(sd_bus_add_object) X(sd_bus_get_fd)         \
    X(sd_bus_get_events) X(sd_bus_get_timeout) X(sd_bus_process) X(sd_bus_flush) X(sd_bus_flush_close_unref)          \
    X(sd_bus_slot_unref) X(sd_bus_send) X(sd_bus_reply_method_error) X(sd_bus_message_new_method_return)              \
    X(sd_bus_message_new_signal) X(sd_bus_message_unref) X(sd_bus_message_get_interface) X(sd_bus_message_get_member)  \
    X(sd_bus_message_is_method_call) X(sd_bus_message_append_basic) X(sd_bus_message_open_container)                  \
    X(sd_bus_message_close_container) X(sd_bus_message_read_basic) X(sd_bus_message_enter_container)                  \
    X(sd_bus_message_exit_container)
#define LIVEPLAY_AVFORMAT_FUNCTIONS(X)                                                                                \
    X(avformat_alloc_output_context2) X(avformat_free_context) X(avformat_new_stream) X(avformat_write_header)        \
    X(av_write_frame) X(av_write_trailer) X(avio_closep) X(avio_flush) X(avio_open) X(avio_seek)

#define LIVEPLAY_STRING(x) #x
#define LIVEPLAY_SONAME(base, major) base LIVEPLAY_STRING(major)

/* Where each jump goes: the library's function once loaded, `unloaded` before. */
static void unloaded(void) {
    fputs("liveplay: a lazily loaded library was called before liveplay_lazy_load\n", stderr);
    abort();
}

#define LIVEPLAY_TARGET(name) __attribute__((visibility("hidden"))) void *liveplay_lazy_##name = (void *)unloaded;
LIVEPLAY_SDL2_FUNCTIONS(LIVEPLAY_TARGET)
LIVEPLAY_X11_FUNCTIONS(LIVEPLAY_TARGET)
LIVEPLAY_SDL2_TTF_FUNCTIONS(LIVEPLAY_TARGET)
LIVEPLAY_AVFORMAT_FUNCTIONS(LIVEPLAY_TARGET)
LIVEPLAY_EBUR128_FUNCTIONS(LIVEPLAY_TARGET)
LIVEPLAY_SYSTEMD_FUNCTIONS(LIVEPLAY_TARGET)

/* Each function: a jump through its pointer, which leaves every argument register (and varargs' %al) as the
   caller set it, so one definition serves every signature. */
#if defined(__x86_64__)
#define LIVEPLAY_JUMP(name) "jmp *liveplay_lazy_" #name "(%rip)\n"
#elif defined(__aarch64__)
#define LIVEPLAY_JUMP(name)                                                                                           \
    "adrp x16, liveplay_lazy_" #name "\n"                                                                             \
    "ldr x16, [x16, :lo12:liveplay_lazy_" #name "]\n"                                                                 \
    "br x16\n"
#else
#error "lazy_libraries.c has jumps for x86_64 and aarch64 only"
#endif
#define LIVEPLAY_FUNCTION(name)                                                                                       \
    __asm__(".text\n.globl " #name "\n.type " #name ", @function\n" #name ":\n" LIVEPLAY_JUMP(name)                   \
            ".size " #name ", . - " #name "\n");
LIVEPLAY_SDL2_FUNCTIONS(LIVEPLAY_FUNCTION)
LIVEPLAY_X11_FUNCTIONS(LIVEPLAY_FUNCTION)
LIVEPLAY_SDL2_TTF_FUNCTIONS(LIVEPLAY_FUNCTION)
LIVEPLAY_AVFORMAT_FUNCTIONS(LIVEPLAY_FUNCTION)
LIVEPLAY_EBUR128_FUNCTIONS(LIVEPLAY_FUNCTION)
LIVEPLAY_SYSTEMD_FUNCTIONS(LIVEPLAY_FUNCTION)

struct entry {
    const char *name;
    void **target;
};

#define LIVEPLAY_ENTRY(name) {#name, &liveplay_lazy_##name},
static const struct entry sdl2_entries[] = {LIVEPLAY_SDL2_FUNCTIONS(LIVEPLAY_ENTRY)};
static const struct entry x11_entries[] = {LIVEPLAY_X11_FUNCTIONS(LIVEPLAY_ENTRY)};
static const struct entry sdl2_ttf_entries[] = {LIVEPLAY_SDL2_TTF_FUNCTIONS(LIVEPLAY_ENTRY)};
static const struct entry avformat_entries[] = {LIVEPLAY_AVFORMAT_FUNCTIONS(LIVEPLAY_ENTRY)};
static const struct entry ebur128_entries[] = {LIVEPLAY_EBUR128_FUNCTIONS(LIVEPLAY_ENTRY)};
static const struct entry systemd_entries[] = {LIVEPLAY_SYSTEMD_FUNCTIONS(LIVEPLAY_ENTRY)};

static const struct {
    const char *soname;
    const struct entry *entries;
    size_t count;
} libraries[] = {
    [LIVEPLAY_LAZY_SDL2] = {"libSDL2-2.0.so.0", sdl2_entries, sizeof sdl2_entries / sizeof *sdl2_entries},
    [LIVEPLAY_LAZY_X11] = {"libX11.so.6", x11_entries, sizeof x11_entries / sizeof *x11_entries},
    [LIVEPLAY_LAZY_SDL2_TTF] = {"libSDL2_ttf-2.0.so.0", sdl2_ttf_entries,
                                sizeof sdl2_ttf_entries / sizeof *sdl2_ttf_entries},
    [LIVEPLAY_LAZY_AVFORMAT] = {LIVEPLAY_SONAME("libavformat.so.", LIBAVFORMAT_VERSION_MAJOR), avformat_entries,
                                sizeof avformat_entries / sizeof *avformat_entries},
    [LIVEPLAY_LAZY_EBUR128] = {"libebur128.so.1", ebur128_entries, sizeof ebur128_entries / sizeof *ebur128_entries},
    [LIVEPLAY_LAZY_SYSTEMD] = {"libsystemd.so.0", systemd_entries, sizeof systemd_entries / sizeof *systemd_entries},
};

static int loaded[sizeof libraries / sizeof *libraries];

int liveplay_lazy_load(liveplay_lazy_library library, char *error, size_t capacity) {
    if (__atomic_load_n(&loaded[library], __ATOMIC_ACQUIRE)) return 0;
    /* Two threads loading at once both resolve the same addresses and store them: dlopen and dlsym are
       thread-safe, and the handle is counted, so no lock is needed. The handle is kept for the process's life. */
    void *handle = dlopen(libraries[library].soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(error, capacity, "cannot load %s: %s", libraries[library].soname, dlerror());
        return -1;
    }
    for (size_t index = 0; index < libraries[library].count; index++) {
        const struct entry *entry = &libraries[library].entries[index];
        void *address = dlsym(handle, entry->name);
        if (!address) {
            snprintf(error, capacity, "%s has no %s", libraries[library].soname, entry->name);
            return -1;
        }
        __atomic_store_n(entry->target, address, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&loaded[library], 1, __ATOMIC_RELEASE);
    return 0;
}
