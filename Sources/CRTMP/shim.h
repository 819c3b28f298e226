#ifndef LIVEPLAY_CRTMP_SHIM_H
#define LIVEPLAY_CRTMP_SHIM_H

#include <librtmp/rtmp.h>
#include <librtmp/log.h>

/// The start of librtmp's receive buffer (`RTMPSockBuf.sb_buf`, 16 KiB): Swift does not import a C array
/// that large. LivePlayTransport parses the next chunk header there before `RTMP_ReadPacket` does.
static inline char *liveplay_rtmp_receive_buffer(RTMPSockBuf *buffer) {
    return buffer->sb_buf;
}

#endif
