/* `set devices all|default|N,M,...`: the GPUs one run of a FASTED format
 * is spread over (docs/SCALING.md). The setting lives in engine_opts
 * (devices: a bit per ordinal; devices_all); this module parses and shows
 * it and turns it into the ordinals a run uses. */
#ifndef TCJ_DEVICES_H
#define TCJ_DEVICES_H

#include <stddef.h>

#include "engine_opts.h"

/* Ordinals a list may name: 0..DEVICES_MAX_ORDINAL (a bit each). */
#define DEVICES_MAX_ORDINAL 63

/* Parse "all", "default" or a comma-separated list of distinct ordinals
 * ("0,1") into o's devices and devices_all. On a bad value o is unchanged
 * and err_msg is one line naming the byte offset and what was expected. */
int devices_parse(const char *text, engine_opts *o);
/* "default", "all" or the list ("0,1"). */
void devices_describe(const engine_opts *o, char *buf, size_t size);
/* The ordinals a run uses, ascending, into out (KERN_MAX_DEVICES
 * entries): a list as given, all as 0..count-1 (at most KERN_MAX_DEVICES
 * of them; count from kern_device_count, 0 without a device). Returns how
 * many; 0 for default (the one device of `set device`) and NULL o. */
int devices_resolve(const engine_opts *o, int *out);
/* A list that is not the default: some run goes through the device queue. */
int devices_listed(const engine_opts *o);

#endif
