#ifndef LIVEPLAY_CRTMP_SHIM_H
#define LIVEPLAY_CRTMP_SHIM_H

#include <librtmp/rtmp.h>
#include <librtmp/log.h>

#endif
