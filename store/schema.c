/* The session log's schema as numbered migrations. Migration k takes a
 * database from PRAGMA user_version k-1 to k; a released migration is never
 * edited, a change is a new migration. docs/SCHEMA.md describes the result. */
#include <stdio.h>

#include "err.h"
#include "store_int.h"

/* Version 1: sessions, datasets, commands, runs and their phases (the first,
 * CPU-only log). */
static const char migration_1[] =
    "PRAGMA application_id = 1952672366;\n"
    "CREATE TABLE sessions (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  started TEXT NOT NULL,\n"
    "  ended TEXT,\n"
    "  argv TEXT,\n"
    "  version TEXT,\n"
    "  host TEXT\n"
    ");\n"
    "CREATE TABLE datasets (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  path TEXT,\n"
    "  name TEXT NOT NULL,\n"
    "  format TEXT,\n"
    "  n INTEGER NOT NULL CHECK (n >= 0),\n"
    "  d INTEGER NOT NULL CHECK (d >= 0),\n"
    "  hash TEXT NOT NULL,\n"
    "  first_seen TEXT NOT NULL\n"
    ");\n"
    "CREATE UNIQUE INDEX datasets_path_hash ON datasets(path, hash);\n"
    "CREATE INDEX datasets_hash ON datasets(hash);\n"
    "CREATE TABLE commands (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  at TEXT NOT NULL,\n"
    "  line TEXT NOT NULL,\n"
    "  status INTEGER,\n"
    "  error TEXT,\n"
    "  seconds REAL\n"
    ");\n"
    "CREATE INDEX commands_session ON commands(session_id);\n"
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  command_id INTEGER REFERENCES commands(id),\n"
    "  dataset_id INTEGER REFERENCES datasets(id),\n"
    "  at TEXT NOT NULL,\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  precision TEXT,\n"
    "  mode TEXT,\n"
    "  eps REAL,\n"
    "  q0 INTEGER,\n"
    "  q1 INTEGER,\n"
    "  n INTEGER,\n"
    "  d INTEGER,\n"
    "  options TEXT,\n"
    "  device TEXT,\n"
    "  status INTEGER NOT NULL DEFAULT 0,\n"
    "  error TEXT,\n"
    "  pairs INTEGER,\n"
    "  selectivity REAL,\n"
    "  seconds REAL\n"
    ");\n"
    "CREATE INDEX runs_session ON runs(session_id);\n"
    "CREATE INDEX runs_dataset ON runs(dataset_id);\n"
    "CREATE INDEX runs_command ON runs(command_id);\n"
    "CREATE TABLE run_phases (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL CHECK (name <> ''),\n"
    "  seconds REAL NOT NULL,\n"
    "  PRIMARY KEY (run_id, name)\n"
    ");\n";

/* Version 2: GPU-side run columns, counters by metric name, accuracy
 * comparisons with their histogram, ε searches with their steps. */
static const char migration_2[] =
    "ALTER TABLE runs ADD COLUMN d_padded INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN variant TEXT;\n"
    "ALTER TABLE runs ADD COLUMN kernel_seconds REAL;\n"
    "ALTER TABLE runs ADD COLUMN tflops_padded REAL;\n"
    "ALTER TABLE runs ADD COLUMN tflops_unpadded REAL;\n"
    "CREATE TABLE counters (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  name TEXT NOT NULL CHECK (name <> ''),\n"
    "  value REAL,\n"
    "  unit TEXT,\n"
    "  PRIMARY KEY (run_id, name)\n"
    ");\n"
    "CREATE TABLE comparisons (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  run_a INTEGER REFERENCES runs(id),\n"
    "  run_b INTEGER REFERENCES runs(id),\n"
    "  engine_a TEXT NOT NULL CHECK (engine_a <> ''),\n"
    "  engine_b TEXT NOT NULL CHECK (engine_b <> ''),\n"
    "  eps REAL,\n"
    "  overlap REAL,\n"
    "  err_mean REAL,\n"
    "  err_std REAL,\n"
    "  err_min REAL,\n"
    "  err_max REAL,\n"
    "  both INTEGER,\n"
    "  only_a INTEGER,\n"
    "  only_b INTEGER,\n"
    "  only_a_rel_max REAL,\n"
    "  only_b_rel_max REAL,\n"
    "  at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX comparisons_run_a ON comparisons(run_a);\n"
    "CREATE INDEX comparisons_run_b ON comparisons(run_b);\n"
    "CREATE TABLE histogram_bins (\n"
    "  comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,\n"
    "  bin INTEGER NOT NULL CHECK (bin >= 0),\n"
    "  lo REAL NOT NULL,\n"
    "  hi REAL NOT NULL CHECK (hi >= lo),\n"
    "  count INTEGER NOT NULL CHECK (count >= 0),\n"
    "  PRIMARY KEY (comparison_id, bin)\n"
    ");\n"
    "CREATE TABLE sweeps (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  dataset_id INTEGER REFERENCES datasets(id),\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  kind TEXT NOT NULL CHECK (kind <> ''),\n"
    "  target REAL,\n"
    "  tolerance REAL,\n"
    "  eps REAL,\n"
    "  selectivity REAL,\n"
    "  passes INTEGER,\n"
    "  seconds REAL,\n"
    "  note TEXT,\n"
    "  started TEXT NOT NULL,\n"
    "  ended TEXT\n"
    ");\n"
    "CREATE INDEX sweeps_session ON sweeps(session_id);\n"
    "CREATE INDEX sweeps_dataset ON sweeps(dataset_id);\n"
    "CREATE TABLE sweep_steps (\n"
    "  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,\n"
    "  step INTEGER NOT NULL,\n"
    "  method TEXT NOT NULL CHECK (method <> ''),\n"
    "  eps REAL,\n"
    "  selectivity REAL,\n"
    "  pairs INTEGER,\n"
    "  seconds REAL,\n"
    "  PRIMARY KEY (sweep_id, step)\n"
    ");\n";

/* Version 3: a comparison judges both engines against a ground truth that
 * may be neither of them: the reference is named on the comparison (old
 * rows: engine B was the reference), B's accuracy gets a row of its own,
 * and histogram bins say which side they belong to (the table is rebuilt
 * because the side joins the primary key). */
static const char migration_3[] =
    "ALTER TABLE comparisons ADD COLUMN ref_engine TEXT;\n"
    "ALTER TABLE comparisons ADD COLUMN run_ref INTEGER REFERENCES runs(id);\n"
    "UPDATE comparisons SET ref_engine = engine_b, run_ref = run_b;\n"
    "CREATE INDEX comparisons_run_ref ON comparisons(run_ref);\n"
    "CREATE TABLE comparison_sides (\n"
    "  comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL CHECK (side IN ('a', 'b')),\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  overlap REAL,\n"
    "  err_mean REAL,\n"
    "  err_std REAL,\n"
    "  err_min REAL,\n"
    "  err_max REAL,\n"
    "  both INTEGER,\n"
    "  only_engine INTEGER,\n"
    "  only_ref INTEGER,\n"
    "  only_engine_rel_max REAL,\n"
    "  only_ref_rel_max REAL,\n"
    "  PRIMARY KEY (comparison_id, side)\n"
    ");\n"
    "CREATE TABLE histogram_bins_v3 (\n"
    "  comparison_id INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL DEFAULT 'a' CHECK (side IN ('a', 'b')),\n"
    "  bin INTEGER NOT NULL CHECK (bin >= 0),\n"
    "  lo REAL NOT NULL,\n"
    "  hi REAL NOT NULL CHECK (hi >= lo),\n"
    "  count INTEGER NOT NULL CHECK (count >= 0),\n"
    "  PRIMARY KEY (comparison_id, side, bin)\n"
    ");\n"
    "INSERT INTO histogram_bins_v3(comparison_id, side, bin, lo, hi, count)\n"
    "  SELECT comparison_id, 'a', bin, lo, hi, count FROM histogram_bins;\n"
    "DROP TABLE histogram_bins;\n"
    "ALTER TABLE histogram_bins_v3 RENAME TO histogram_bins;\n";

/* Version 4: a comparison side is one row shape used twice. Side A's
 * columns leave `comparisons` for a comparison_sides row (side 'a'); side
 * 'b' gets a row too when B is the reference itself (engine and run only,
 * its accuracy NULL: it is not judged). `comparisons` keeps what has no
 * side: eps, the reference, the time. The three tables are rebuilt into
 * new ones before the old ones go, because dropping `comparisons` with
 * foreign keys on would cascade to the rows still pointing at it. */
static const char migration_4[] =
    "CREATE TABLE comparisons_v4 (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  eps REAL,\n"
    "  ref_engine TEXT NOT NULL CHECK (ref_engine <> ''),\n"
    "  run_ref INTEGER REFERENCES runs(id),\n"
    "  at TEXT NOT NULL\n"
    ");\n"
    "INSERT INTO comparisons_v4(id, session_id, eps, ref_engine, run_ref, at)\n"
    "  SELECT id, session_id, eps, coalesce(ref_engine, engine_b),\n"
    "         CASE WHEN ref_engine IS NULL THEN run_b ELSE run_ref END, at FROM comparisons;\n"
    "CREATE TABLE comparison_sides_v4 (\n"
    "  comparison_id INTEGER NOT NULL REFERENCES comparisons_v4(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL CHECK (side IN ('a', 'b')),\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  overlap REAL,\n"
    "  err_mean REAL,\n"
    "  err_std REAL,\n"
    "  err_min REAL,\n"
    "  err_max REAL,\n"
    "  both INTEGER,\n"
    "  only_engine INTEGER,\n"
    "  only_ref INTEGER,\n"
    "  only_engine_rel_max REAL,\n"
    "  only_ref_rel_max REAL,\n"
    "  PRIMARY KEY (comparison_id, side)\n"
    ");\n"
    "INSERT INTO comparison_sides_v4\n"
    "  SELECT id, 'a', engine_a, run_a, overlap, err_mean, err_std, err_min, err_max, both,\n"
    "         only_a, only_b, only_a_rel_max, only_b_rel_max FROM comparisons;\n"
    /* Version 3 wrote only side b rows; an a row there would repeat the
     * comparisons row, which wins. */
    "INSERT OR IGNORE INTO comparison_sides_v4\n"
    "  SELECT comparison_id, side, engine, run_id, overlap, err_mean, err_std, err_min,\n"
    "         err_max, both, only_engine, only_ref, only_engine_rel_max, only_ref_rel_max\n"
    "  FROM comparison_sides;\n"
    "INSERT INTO comparison_sides_v4(comparison_id, side, engine, run_id)\n"
    "  SELECT c.id, 'b', c.engine_b, c.run_b FROM comparisons c WHERE NOT EXISTS\n"
    "  (SELECT 1 FROM comparison_sides sd WHERE sd.comparison_id = c.id AND sd.side = 'b');\n"
    "CREATE TABLE histogram_bins_v4 (\n"
    "  comparison_id INTEGER NOT NULL REFERENCES comparisons_v4(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL DEFAULT 'a' CHECK (side IN ('a', 'b')),\n"
    "  bin INTEGER NOT NULL CHECK (bin >= 0),\n"
    "  lo REAL NOT NULL,\n"
    "  hi REAL NOT NULL CHECK (hi >= lo),\n"
    "  count INTEGER NOT NULL CHECK (count >= 0),\n"
    "  PRIMARY KEY (comparison_id, side, bin)\n"
    ");\n"
    "INSERT INTO histogram_bins_v4 SELECT comparison_id, side, bin, lo, hi, count\n"
    "  FROM histogram_bins;\n"
    "DROP TABLE histogram_bins;\n"
    "DROP TABLE comparison_sides;\n"
    "DROP TABLE comparisons;\n"
    "ALTER TABLE comparisons_v4 RENAME TO comparisons;\n"
    "ALTER TABLE comparison_sides_v4 RENAME TO comparison_sides;\n"
    "ALTER TABLE histogram_bins_v4 RENAME TO histogram_bins;\n"
    "CREATE INDEX comparisons_run_ref ON comparisons(run_ref);\n"
    "CREATE INDEX comparison_sides_run ON comparison_sides(run_id);\n";

/* Version 5: the precision lab (`precisions`). One labs row per lab (the
 * dataset, eps, reference and its run, the overlap threshold, the format
 * chosen) and one lab_rows row per format linking the run and the
 * comparison it made, or saying why it did not run. The numbers stay in
 * runs, counters and comparison_sides, where compare keeps them. */
static const char migration_5[] =
    "CREATE TABLE labs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  command_id INTEGER REFERENCES commands(id),\n"
    "  dataset_id INTEGER REFERENCES datasets(id),\n"
    "  eps REAL,\n"
    "  ref_engine TEXT NOT NULL CHECK (ref_engine <> ''),\n"
    "  run_ref INTEGER REFERENCES runs(id),\n"
    "  min_overlap REAL,\n"
    "  baseline TEXT,\n"
    "  chosen TEXT,\n"
    "  note TEXT,\n"
    "  started TEXT NOT NULL,\n"
    "  ended TEXT\n"
    ");\n"
    "CREATE INDEX labs_session ON labs(session_id);\n"
    "CREATE INDEX labs_run_ref ON labs(run_ref);\n"
    "CREATE TABLE lab_rows (\n"
    "  lab_id INTEGER NOT NULL REFERENCES labs(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL CHECK (seq >= 0),\n"
    "  format TEXT NOT NULL CHECK (format <> ''),\n"
    "  bits INTEGER,\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  status TEXT NOT NULL CHECK (status IN ('ok', 'refused', 'unavailable', 'failed')),\n"
    "  reason TEXT,\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  comparison_id INTEGER REFERENCES comparisons(id),\n"
    "  PRIMARY KEY (lab_id, seq)\n"
    ");\n"
    "CREATE INDEX lab_rows_run ON lab_rows(run_id);\n"
    "CREATE INDEX lab_rows_comparison ON lab_rows(comparison_id);\n";

/* Version 6: the element type the run's dataset was kept in (u8, f16, f32,
 * f64). On the run, not the dataset row: one file can be loaded as f32 and
 * as f64 (load dtype=) with the same path and content hash. Older runs
 * keep NULL: their type was not recorded. */
static const char migration_6[] = "ALTER TABLE runs ADD COLUMN dtype TEXT;\n";

/* Version 7: DBSCAN (`dbscan`). One dbscans row per clustering: the
 * dataset, engine, eps, minpts, its counts, the largest cluster sizes
 * (space-separated, descending), time end to end and by pass, the runs its
 * passes made (NULL: the pass needed no join), the red flags
 * (comma-separated names) and the labels file if one was written; and its
 * cluster sizes as a histogram over [lo, hi) power-of-two bins. */
static const char migration_7[] =
    "CREATE TABLE dbscans (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  command_id INTEGER REFERENCES commands(id),\n"
    "  dataset_id INTEGER REFERENCES datasets(id),\n"
    "  at TEXT NOT NULL,\n"
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"
    "  precision TEXT,\n"
    "  eps REAL NOT NULL,\n"
    "  minpts INTEGER NOT NULL CHECK (minpts >= 1),\n"
    "  n INTEGER NOT NULL CHECK (n >= 0),\n"
    "  d INTEGER,\n"
    "  clusters INTEGER NOT NULL CHECK (clusters >= 0),\n"
    "  core INTEGER NOT NULL CHECK (core >= 0),\n"
    "  border INTEGER NOT NULL CHECK (border >= 0),\n"
    "  noise INTEGER NOT NULL CHECK (noise >= 0),\n"
    "  largest TEXT,\n"
    "  seconds REAL,\n"
    "  core_seconds REAL,\n"
    "  union_seconds REAL,\n"
    "  border_seconds REAL,\n"
    "  run_core INTEGER REFERENCES runs(id),\n"
    "  run_union INTEGER REFERENCES runs(id),\n"
    "  run_border INTEGER REFERENCES runs(id),\n"
    "  flags TEXT,\n"
    "  labels TEXT\n"
    ");\n"
    "CREATE INDEX dbscans_session ON dbscans(session_id);\n"
    "CREATE TABLE dbscan_sizes (\n"
    "  dbscan_id INTEGER NOT NULL REFERENCES dbscans(id) ON DELETE CASCADE,\n"
    "  lo INTEGER NOT NULL CHECK (lo >= 1),\n"
    "  hi INTEGER NOT NULL CHECK (hi > lo),\n"
    "  clusters INTEGER NOT NULL CHECK (clusters > 0),\n"
    "  PRIMARY KEY (dbscan_id, lo)\n"
    ");\n";

/* ---- MPI (tcjoin-mpi, src/cli/mpi_run.c): version 8 ---- */
/* Version 8: the ranks of a run spread over MPI ranks, one row each: its
 * host, device, the query rows and queue ranges it took, its pairs, its
 * time and its own outcome. A one-process run has none. */
static const char migration_8[] = "CREATE TABLE run_ranks (\n"
                                  "  id INTEGER PRIMARY KEY,\n"
                                  "  run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,\n"
                                  "  rank INTEGER NOT NULL,\n"
                                  "  host TEXT,\n"
                                  "  device TEXT,\n"
                                  "  rows INTEGER,\n"
                                  "  parts INTEGER,\n"
                                  "  pairs INTEGER,\n"
                                  "  seconds REAL,\n"
                                  "  status INTEGER NOT NULL DEFAULT 0\n"
                                  ");\n"
                                  "CREATE INDEX run_ranks_run ON run_ranks(run_id);\n";
/* ---- end MPI ---- */

/* Version 9: the teaching ladder (`ladder`). One ladders row per ladder:
 * the device, the dataset and its shape, eps, the reference engine and its
 * count; one ladder_rungs row per rung: its status (ok, wrong, not run,
 * failed) and note, its stored timed run, its count, kernel time, TFLOPS,
 * the cuBLAS yardstick of its dtype measured in the same ladder, the
 * profiler's evidence and the NVML clock and power (NULL: not measured). */
static const char migration_9[] =
    "CREATE TABLE ladders (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  session_id INTEGER REFERENCES sessions(id),\n"
    "  command_id INTEGER REFERENCES commands(id),\n"
    "  dataset_id INTEGER REFERENCES datasets(id),\n"
    "  at TEXT NOT NULL,\n"
    "  device TEXT,\n"
    "  n INTEGER NOT NULL CHECK (n >= 0),\n"
    "  d INTEGER NOT NULL CHECK (d >= 0),\n"
    "  eps REAL NOT NULL,\n"
    "  ref_engine TEXT,\n"
    "  ref_pairs INTEGER\n"
    ");\n"
    "CREATE INDEX ladders_session ON ladders(session_id);\n"
    "CREATE TABLE ladder_rungs (\n"
    "  ladder_id INTEGER NOT NULL REFERENCES ladders(id) ON DELETE CASCADE,\n"
    "  rung INTEGER NOT NULL CHECK (rung >= 1),\n"
    "  name TEXT NOT NULL,\n"
    "  unit TEXT NOT NULL,\n"
    "  status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'not run', 'failed')),\n"
    "  note TEXT,\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  pairs INTEGER,\n"
    "  kernel_s REAL,\n"
    "  tflops REAL,\n"
    "  cublas_dtype TEXT,\n"
    "  cublas_tflops REAL,\n"
    "  tensor_pct REAL,\n"
    "  fma_pct REAL,\n"
    "  conflicts_pct REAL,\n"
    "  dram_pct REAL,\n"
    "  smem_pct REAL,\n"
    "  l2_hit_pct REAL,\n"
    "  occupancy_pct REAL,\n"
    "  sm_mhz REAL,\n"
    "  power_w REAL,\n"
    "  peak_max_pct REAL,\n"
    "  peak_run_pct REAL,\n"
    "  PRIMARY KEY (ladder_id, rung)\n"
    ");\n";

static const char *const migrations[] = {migration_1, migration_2, migration_3,
                                         migration_4, migration_5, migration_6,
                                         migration_7, migration_8, migration_9};

_Static_assert(sizeof migrations / sizeof migrations[0] == STORE_SCHEMA_VERSION,
               "one migration per schema version");

const char *store_migration_sql(int version)
{
    if (version < 1 || version > STORE_SCHEMA_VERSION)
        return NULL;
    return migrations[version - 1];
}

/* One integer PRAGMA (user_version, application_id). */
static int pragma_int(store *st, const char *name, int64_t *out)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s", name);
    sqlite3_stmt *s;
    if (store_prepare(st, sql, &s, "reading the schema version"))
        return TCJ_ESTORE;
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        store_fail(st, "reading the schema version");
        sqlite3_finalize(s);
        return TCJ_ESTORE;
    }
    *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return 0;
}

/* Is this file ours to migrate? Refuse another program's database and one
 * written by a newer tcjoin, before anything is written to it. The caller
 * holds a transaction, so the version and the table list are read from one
 * snapshot: a second tcjoin creating the same new file between the two
 * reads cannot make it look like a foreign database. */
static int check_owner(store *st, int64_t version)
{
    int64_t app;
    if (pragma_int(st, "application_id", &app))
        return TCJ_ESTORE;
    if (app != 0 && app != STORE_APPLICATION_ID)
        return err_set(TCJ_ESTORE,
                       "%s: not a tcjoin session log (application_id 0x%llx); "
                       "choose another file with --db",
                       st->path, (unsigned long long)app);
    if (version > STORE_SCHEMA_VERSION)
        return err_set(TCJ_ESTORE,
                       "%s: session log schema version %lld is newer than this tcjoin "
                       "understands (%d); use a newer tcjoin or another file with --db",
                       st->path, (long long)version, STORE_SCHEMA_VERSION);
    if (version == 0) {
        sqlite3_stmt *s;
        if (store_prepare(st, "SELECT count(*) FROM sqlite_master", &s, "reading the schema"))
            return TCJ_ESTORE;
        int64_t nobj = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
        sqlite3_finalize(s);
        if (nobj < 0)
            return store_fail(st, "reading the schema");
        if (nobj > 0)
            return err_set(TCJ_ESTORE,
                           "%s: not a tcjoin session log (it holds other tables); "
                           "choose another file with --db",
                           st->path);
    }
    return 0;
}

int store_check_version(store *st)
{
    /* A read transaction: one snapshot for every read below, and nothing
     * written when the file is refused. */
    if (store_exec(st, "BEGIN", "reading the schema version"))
        return TCJ_ESTORE;
    int64_t version;
    int rc = pragma_int(st, "user_version", &version);
    if (!rc)
        rc = check_owner(st, version);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    if (store_exec(st, "COMMIT", "reading the schema version")) {
        store_rollback(st);
        return TCJ_ESTORE;
    }
    return 0;
}

int store_migrate(store *st)
{
    int64_t version;
    if (pragma_int(st, "user_version", &version))
        return TCJ_ESTORE;
    if (version == STORE_SCHEMA_VERSION)
        return 0;
    if (store_begin(st))
        return TCJ_ESTORE;
    /* Read again inside the write lock: another process may have migrated
     * between the first look and the lock. */
    int rc = pragma_int(st, "user_version", &version);
    if (!rc)
        rc = check_owner(st, version);
    for (int64_t v = version + 1; !rc && v <= STORE_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof what, "migrating to schema version %lld", (long long)v);
        rc = store_exec(st, migrations[v - 1], what);
    }
    if (!rc && version < STORE_SCHEMA_VERSION) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
        rc = store_exec(st, sql, "setting the schema version");
    }
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st);
}
