#ifndef LIVEPLAY_CEBUR128_SHIM_H
#define LIVEPLAY_CEBUR128_SHIM_H

/* libebur128 (EBU R 128 loudness), for loudness normalisation: only LivePlayLoudness imports this header. */
#include <ebur128.h>

#endif
