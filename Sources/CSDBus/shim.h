#ifndef LIVEPLAY_CSDBUS_SHIM_H
#define LIVEPLAY_CSDBUS_SHIM_H

/* sd-bus (libsystemd's D-Bus library), for MPRIS: only LivePlayMPRIS imports this header. */
#include <systemd/sd-bus.h>

#endif
