/* `set devices`: parsing, display and the ordinals of a run (devices.h). */
#include "devices.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "kernels.h"

int devices_parse(const char *text, engine_opts *o)
{
    if (strcmp(text, "all") == 0 || strcmp(text, "default") == 0) {
        o->devices_all = text[0] == 'a';
        o->devices = 0;
        return 0;
    }
    unsigned long long mask = 0;
    int count = 0;
    const char *p = text;
    for (;;) {
        const size_t at = (size_t)(p - text);
        if (*p < '0' || *p > '9')
            return err_set(TCJ_EINVAL,
                           "devices: expected all, default or ordinals like 0,1; byte %zu of '%s' "
                           "is not a device ordinal",
                           at, text);
        unsigned v = 0;
        while (*p >= '0' && *p <= '9' && v <= DEVICES_MAX_ORDINAL)
            v = v * 10 + (unsigned)(*p++ - '0');
        if (v > DEVICES_MAX_ORDINAL)
            return err_set(TCJ_EINVAL, "devices: ordinal at byte %zu of '%s' is above %d", at, text,
                           DEVICES_MAX_ORDINAL);
        /* Refused rather than merged: a repeated ordinal is most likely a
         * typo for another device. */
        if (mask & (1ull << v))
            return err_set(TCJ_EINVAL, "devices: device %u is listed twice in '%s'", v, text);
        if (++count > KERN_MAX_DEVICES)
            return err_set(TCJ_EINVAL, "devices: at most %d devices in a run, '%s' lists more",
                           KERN_MAX_DEVICES, text);
        mask |= 1ull << v;
        if (*p == '\0')
            break;
        if (*p != ',')
            return err_set(TCJ_EINVAL, "devices: expected ',' or the end at byte %zu of '%s'",
                           (size_t)(p - text), text);
        p++;
    }
    o->devices = mask;
    o->devices_all = 0;
    return 0;
}

void devices_describe(const engine_opts *o, char *buf, size_t size)
{
    if (o->devices_all) {
        snprintf(buf, size, "all");
        return;
    }
    if (!o->devices) {
        snprintf(buf, size, "default");
        return;
    }
    size_t k = 0;
    buf[0] = '\0';
    for (int v = 0; v <= DEVICES_MAX_ORDINAL && k < size; v++)
        if (o->devices & (1ull << v))
            k += (size_t)snprintf(buf + k, size - k, "%s%d", k ? "," : "", v);
}

int devices_listed(const engine_opts *o)
{
    return o && (o->devices_all || o->devices);
}

int devices_resolve(const engine_opts *o, int *out)
{
    int n = 0;
    if (!devices_listed(o))
        return 0;
    if (o->devices_all) {
        int have = kern_device_count();
        for (int v = 0; v < have && n < KERN_MAX_DEVICES; v++)
            out[n++] = v;
        return n;
    }
    for (int v = 0; v <= DEVICES_MAX_ORDINAL && n < KERN_MAX_DEVICES; v++)
        if (o->devices & (1ull << v))
            out[n++] = v;
    return n;
}
