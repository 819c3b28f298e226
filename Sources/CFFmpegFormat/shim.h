#ifndef LIVEPLAY_CFFMPEGFORMAT_SHIM_H
#define LIVEPLAY_CFFMPEGFORMAT_SHIM_H

/* libavformat, for recording: only LivePlayRecording imports this header. */
#include <libavcodec/codec_desc.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

/* Function-like macros Swift cannot import. */
static inline int liveplay_format_averror_enospc(void) { return AVERROR(ENOSPC); }
static inline int liveplay_format_input_padding(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }

#endif
