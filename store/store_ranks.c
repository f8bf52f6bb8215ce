/* run_ranks rows (store/store_ranks.h). */
#include "store_ranks.h"

#include "err.h"
#include "store_int.h"

int64_t store_run_rank(store *st, const store_rank_rec *r)
{
    const char *what = "storing a rank of the run";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO run_ranks(run_id, rank, host, device, rows, parts, pairs, "
                      "seconds, status) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, r->run_id);
    sqlite3_bind_int(s, 2, r->rank);
    store_bind_text(s, 3, r->host);
    store_bind_text(s, 4, r->device);
    store_bind_u64(s, 5, r->rows);
    store_bind_u64(s, 6, r->parts);
    store_bind_u64(s, 7, r->pairs);
    store_bind_real(s, 8, r->seconds);
    sqlite3_bind_int(s, 9, r->status);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    return sqlite3_last_insert_rowid(st->db);
}
