/* `set exact-path`: parsing and display (exact_path.h). */
#include "exact_path.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

static const char *const exact_path_names[] = {"auto", "pass", "grid", "clusters"};

const char *exact_path_name(int path)
{
    return path >= 0 && path <= EXACT_PATH_CLUSTERS ? exact_path_names[path] : "?";
}

void exact_path_get(const session *s, char *buf, size_t size)
{
    snprintf(buf, size, "%s", exact_path_name(s->eopt.exact_path));
}

int exact_path_set(session *s, char **vals)
{
    for (int k = EXACT_PATH_AUTO; k <= EXACT_PATH_CLUSTERS; k++)
        if (strcmp(vals[0], exact_path_names[k]) == 0) {
            s->eopt.exact_path = k;
            return 0;
        }
    return err_set(TCJ_EINVAL, "exact-path: expected auto, pass, grid or clusters, got '%s'",
                   vals[0]);
}
