#ifndef LIVEPLAY_CFFMPEG_SHIM_H
#define LIVEPLAY_CFFMPEG_SHIM_H

#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/sha.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>

/* Function-like macros Swift cannot import. */
static inline int liveplay_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int liveplay_averror_eof(void) { return AVERROR_EOF; }
static inline int liveplay_averror_enomem(void) { return AVERROR(ENOMEM); }

/* libavutil's log callback takes a va_list, which Swift cannot receive: format the line here and hand it
 * on. Only LivePlayDecode imports this header, so there is one handler per process. */
typedef void (*liveplay_log_line_handler)(int level, const char *line);
static inline liveplay_log_line_handler *liveplay_log_handler(void) {
    static liveplay_log_line_handler handler;
    return &handler;
}
static inline void liveplay_log_callback(void *object, int level, const char *format, va_list arguments) {
    liveplay_log_line_handler handler = *liveplay_log_handler();
    if (level > av_log_get_level() || !handler) return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(object, level, format, arguments, line, sizeof line, &print_prefix);
    handler(level, line);
}
static inline void liveplay_route_log(liveplay_log_line_handler handler, int level) {
    *liveplay_log_handler() = handler;
    av_log_set_level(level);
    av_log_set_callback(liveplay_log_callback);
}

#endif
