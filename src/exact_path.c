/* `set exact-path`: parsing and display (exact_path.h). */
#include "exact_path.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

static const char *const exact_path_names[] = {"auto", "pass", "grid", "clusters", "tiles"};

const char *exact_path_name(int path)
{
    return path >= 0 && path <= EXACT_PATH_TILES ? exact_path_names[path] : "?";
}

int exact_path_parse(const char *name, int *path)
{
    for (int k = EXACT_PATH_AUTO; k <= EXACT_PATH_TILES; k++)
        if (strcmp(name, exact_path_names[k]) == 0) {
            *path = k;
            return 0;
        }
    return err_set(TCJ_EINVAL, "exact-path: expected auto, pass, grid, clusters or tiles, got '%s'",
                   name);
}
