/* Completion for the line REPL and the dashboard: a pure function of the
 * line and the cursor (file names come from the file system). Commands,
 * engine names, setting names and values, option keys, file paths. */
#ifndef TCJ_COMPLETE_H
#define TCJ_COMPLETE_H

#include <stddef.h>

/* Candidates for the word that ends at cursor (sorted, unique). Returns the
 * count; *out is a NULL-terminated array, caller frees it with
 * complete_free; *start is the byte offset where that word begins (each
 * candidate replaces line[*start, cursor)). */
int complete_line(const char *line, size_t cursor, char ***out, size_t *start);
void complete_free(char **cands);

#endif
