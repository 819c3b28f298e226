#ifndef LIVEPLAY_CFFMPEG_SHIM_H
#define LIVEPLAY_CFFMPEG_SHIM_H

#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libavutil/channel_layout.h>

/* Function-like macros Swift cannot import. */
static inline int liveplay_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int liveplay_averror_eof(void) { return AVERROR_EOF; }
static inline int liveplay_averror_enomem(void) { return AVERROR(ENOMEM); }

#endif
