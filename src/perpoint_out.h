/* The per-point summary (perpoint.h) as output: its JSON members and its
 * text. The one writer of each, shared by `run mode=perpoint` as it
 * finishes and by `show run` / `export run` reading the session log, so a
 * stored summary reads as the live one did. */
#ifndef TCJ_PERPOINT_OUT_H
#define TCJ_PERPOINT_OUT_H

#include "json.h"
#include "perpoint.h"

/* The member "perpoint": {min, p10, median, p90, max, mean, [minpts, core,
 * noise,] histogram: [{lo, hi, count}]} (docs/JSON.md, run). */
void perpoint_json(json_w *w, const perpoint_summary *p);
/* The quantiles, a bar per histogram bin and the core points, through
 * out_printf. */
void perpoint_print(const perpoint_summary *p);

#endif
