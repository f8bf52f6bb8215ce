/* The dashboard's view model: records from the writer become panel data;
 * log text is split into lines. */
#include "check.h"
#include "json.h"
#include "json_mini.h"
#include "ladder.h"
#include "layout.h"
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(json_reader)
{
    json *j = json_parse("{\"type\":\"run\",\"n\":20000,\"eps\":0.25,\"s\":\"a\\\"b\\u00e9\","
                         "\"ok\":true,\"z\":null,\"a\":[1,2,{\"x\":3}],\"o\":{}}");
    CHECK(j);
    CHECK_NEAR(json_num(j, "n"), 20000, 0);
    CHECK_NEAR(json_num(j, "eps"), 0.25, 0);
    CHECK(strcmp(json_str(j, "s", ""), "a\"b\xc3\xa9") == 0);
    CHECK_NEAR(json_num(j, "ok"), 1, 0);
    CHECK(isnan(json_num(j, "z")));
    CHECK(isnan(json_num(j, "missing")));
    CHECK_EQ_INT(json_len(json_get(j, "a")), 3);
    CHECK_NEAR(json_num(json_at(json_get(j, "a"), 2), "x"), 3, 0);
    CHECK_EQ_INT(json_len(json_get(j, "o")), 0);
    json_free(j);
    CHECK(json_parse("{\"a\":") == NULL);
    CHECK(json_parse("{\"a\":1} x") == NULL);
    CHECK(json_parse("[1,2") == NULL);
}

TEST(run_and_compare_records)
{
    static ui_view v;
    ui_view_init(&v);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"run\",\"run_id\":7,\"engine\":\"cpu\",\"eps\":2,"
                                    "\"pairs\":30000,\"selectivity\":0.5,\"time_s\":0.125,"
                                    "\"tflops\":0.01}"),
                 UI_RUNS);
    CHECK_EQ_INT(v.nruns, 1);
    CHECK_EQ_INT(v.runs[0].id, 7);
    CHECK(strcmp(v.runs[0].engine, "cpu") == 0);
    CHECK_EQ_INT(v.runs[0].pairs, 30000);
    CHECK_NEAR(v.runs[0].sel, 0.5, 0);
    /* NVML metrics of a GPU run go to the clocks panel. */
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"run\",\"run_id\":8,\"engine\":\"fasted\","
                                    "\"metrics\":{\"sm_clock_mhz.min\":1120,"
                                    "\"sm_clock_mhz.max\":1980}}"),
                 UI_CLOCKS);
    CHECK_EQ_INT(v.nruns, 2);
    CHECK_NEAR(ui_metric_get(v.clk, v.nclk, "sm_clock_mhz.min"), 1120, 0);
    CHECK_EQ_INT(v.ncnt, 0);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"compare\",\"engine_a\":\"cpu-fp16\","
                                    "\"engine_b\":\"cpu\",\"overlap\":0.99,\"err_mean\":1e-4,"
                                    "\"only_a\":3,\"only_b\":5,"
                                    "\"hist\":[{\"lo\":-1,\"hi\":0,\"count\":10},"
                                    "{\"lo\":0,\"hi\":1,\"count\":20}]}"),
                 UI_COMPARE);
    CHECK(v.have_cmp);
    CHECK(strcmp(v.cmp_a, "cpu-fp16") == 0 && strcmp(v.cmp_b, "cpu") == 0);
    CHECK_NEAR(v.overlap, 0.99, 0);
    CHECK_EQ_INT(v.nbins, 2);
    CHECK_NEAR(v.bin_count[1], 20, 0);
    CHECK_NEAR(v.bin_lo[0], -1, 0);
    CHECK_EQ_INT(ui_view_record(&v, "not json"), -1);
    ui_view_free(&v);
}

TEST(profile_record_with_reason)
{
    static ui_view v;
    ui_view_init(&v);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"profile\",\"run_id\":3,\"engine\":\"fasted\","
                                    "\"reason\":\"no CUDA device\",\"counters\":{}}"),
                 UI_COUNTERS);
    CHECK_EQ_INT(v.ncnt, 0);
    CHECK(strcmp(v.cnt_note, "no CUDA device") == 0);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"profile\",\"run_id\":4,\"engine\":\"fasted\","
                                    "\"reason\":null,\"counters\":{"
                                    "\"lts__t_sector_hit_rate.pct\":87.5}}"),
                 UI_COUNTERS);
    CHECK_EQ_INT(v.ncnt, 1);
    CHECK_NEAR(v.cnt[0].value, 87.5, 0);
    CHECK(v.cnt_note[0] == '\0');
    ui_view_free(&v);
}

TEST(curve_sorted_and_dataset)
{
    static ui_view v;
    ui_view_init(&v);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"curve\",\"points\":[{\"eps\":3,"
                                    "\"selectivity\":9},{\"eps\":1,\"selectivity\":1}]}"),
                 UI_CURVE);
    CHECK_EQ_INT(v.ncurve, 2);
    CHECK_NEAR(v.curve_eps[0], 1, 0);
    CHECK_NEAR(v.curve_sel[1], 9, 0);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"dataset\",\"name\":\"letter.csv\","
                                    "\"n\":20000,\"d\":16}"),
                 UI_DATASET);
    CHECK(strcmp(v.ds_name, "letter.csv") == 0);
    CHECK_NEAR(v.n, 20000, 0);
    CHECK_EQ_INT(v.ncurve, 0); /* a new dataset clears the old curve */
    ui_view_free(&v);
}

/* kdist has its own panel: the record names it, a curve afterwards leaves
 * it alone, and another dataset clears it with the other results. */
TEST(kdist_own_panel_and_clear_on_change)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"pts.csv\",\"dataset_hash\":\"aa\","
                       "\"n\":1200,\"d\":6}");
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"kdist\",\"engine\":\"cpu\",\"dataset\":"
                                    "\"pts.csv\",\"n\":1200,\"k\":4,\"knee_rank\":1186,"
                                    "\"knee_dist\":1.67,\"eps\":1.67,\"points\":{\"rank\":"
                                    "[0,600,1199],\"dist\":[0.53,0.99,2.06]}}"),
                 UI_KDIST);
    CHECK_EQ_INT(v.nkdist, 3);
    CHECK(strcmp(v.kdist_dataset, "pts.csv") == 0);
    CHECK(strcmp(v.kdist_engine, "cpu") == 0);
    CHECK_EQ_INT(v.kdist_k, 4);
    CHECK(v.kdist_have_knee);
    CHECK_NEAR(v.kdist_knee_rank, 1186, 0);
    CHECK_NEAR(v.kdist_dist[2], 2.06, 0);
    /* A selectivity curve goes to its own panel, the k-distance stays. */
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"curve\",\"dataset\":\"pts.csv\",\"points\":"
                                    "[{\"eps\":1,\"selectivity\":1},{\"eps\":2,"
                                    "\"selectivity\":9}]}"),
                 UI_CURVE);
    CHECK_EQ_INT(v.nkdist, 3);
    CHECK(strcmp(ui_panel_name(UI_KDIST), "k-distance") == 0);
    /* The same dataset again keeps it; another clears it. */
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"pts.csv\",\"dataset_hash\":\"aa\","
                       "\"n\":1200,\"d\":6}");
    CHECK_EQ_INT(v.nkdist, 3);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"ties.csv\",\"dataset_hash\":\"bb\","
                       "\"n\":40,\"d\":1}");
    CHECK_EQ_INT(v.nkdist, 0);
    CHECK(v.kdist_dataset[0] == '\0');
    ui_view_free(&v);
}

/* dbscan's results take the k-distance panel's place while they are the
 * newer: the curve with the eps marked (the count at the last point at
 * or below it), the widest plateau, a clustering's counts; a kdist record
 * gives the place back; another dataset clears them. */
TEST(clusters_in_the_kdist_place)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"pts.csv\",\"dataset_hash\":\"aa\","
                       "\"n\":1200,\"d\":6}");
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"dbscan_curve\",\"engine\":\"cpu\",\"dataset\":"
                                    "\"pts.csv\",\"n\":1200,\"minpts\":12,\"max\":2.5,"
                                    "\"eps\":0.9,\"points\":[{\"eps\":0.5,\"clusters\":0},"
                                    "{\"eps\":0.8,\"clusters\":6},{\"eps\":1.2,\"clusters\":8}],"
                                    "\"plateaus\":[{\"lo\":1.02,\"hi\":1.32,\"clusters\":8}]}"),
                 UI_KDIST);
    CHECK(v.clu_newer && v.nclu == 3 && v.clu_y[2] == 8);
    CHECK_NEAR(v.clu_mark_eps, 0.9, 0);
    CHECK_NEAR(v.clu_mark_n, 6, 0);
    CHECK_NEAR(v.clu_plateau_n, 8, 0);
    CHECK_NEAR(v.clu_minpts, 12, 0);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"dbscan\",\"engine\":\"cpu\",\"dataset\":"
                                    "\"pts.csv\",\"n\":1200,\"minpts\":12,\"eps\":0.9,"
                                    "\"clusters\":8,\"core\":49,\"border\":241,\"noise\":910,"
                                    "\"largest\":[55,53],\"flags\":[\"mostly-noise\"]}"),
                 UI_KDIST);
    CHECK(v.clu_have_run && v.clu_ntop == 2 && v.clu_top[1] == 53 && v.clu_noise == 910);
    CHECK(strcmp(v.clu_flags, "mostly-noise") == 0);
    CHECK_EQ_INT(v.nclu, 3); /* the curve stays */
    ui_view_record(&v, "{\"type\":\"kdist\",\"engine\":\"cpu\",\"dataset\":\"pts.csv\","
                       "\"n\":1200,\"k\":4,\"points\":{\"rank\":[0,1],\"dist\":[0.5,1]}}");
    CHECK(!v.clu_newer && v.nkdist == 2);
    ui_view_record(&v, "{\"type\":\"dbscan\",\"engine\":\"cpu\",\"n\":1200,\"clusters\":1}");
    CHECK(v.clu_newer);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"ties.csv\",\"dataset_hash\":\"bb\","
                       "\"n\":40,\"d\":1}");
    CHECK(!v.clu_newer && v.nclu == 0 && !v.clu_have_run);
    ui_view_free(&v);
}

/* hdbscan's condensed tree takes the clusters' place: its clusters in
 * order, parents first (a node whose parent was not kept ends the tree),
 * the root the points; a dbscan record gives the place back to the
 * clusters, a kdist record to the k-distance. */
TEST(hdbscan_tree_in_the_clusters_place)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"pts.csv\",\"dataset_hash\":\"aa\","
                       "\"n\":1200,\"d\":6}");
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"hdbscan\",\"hdbscan_id\":1,\"engine\":\"cpu\","
                                    "\"dataset\":\"pts.csv\",\"n\":1200,\"min_cluster_size\":20,"
                                    "\"min_samples\":20,\"clusters\":2,\"noise\":151,"
                                    "\"condensed\":[{\"parent\":0,\"lambda\":0.5,\"size\":700,"
                                    "\"label\":0},{\"parent\":0,\"lambda\":0.5,\"size\":400,"
                                    "\"label\":-1},{\"parent\":2,\"lambda\":0.9,\"size\":"
                                    "300,\"label\":1},{\"parent\":9,\"lambda\":1,\"size\":20,"
                                    "\"label\":-1}],\"root_chosen\":false}"),
                 UI_KDIST);
    CHECK(v.clu_newer && v.hd_show);
    CHECK_EQ_INT(v.hd_nodes, 4);
    CHECK(v.hd_parent[3] == 2 && v.hd_label[1] == 0 && v.hd_label[2] == -1 && v.hd_label[0] == -1);
    CHECK_NEAR(v.hd_size[0], 1200, 0);
    CHECK_NEAR(v.hd_size[3], 300, 0);
    CHECK_NEAR(v.hd_lambda[3], 0.9, 0);
    CHECK_NEAR(v.hd_mcs, 20, 0);
    ui_view_record(&v, "{\"type\":\"dbscan\",\"engine\":\"cpu\",\"n\":1200,\"clusters\":1}");
    CHECK(v.clu_newer && !v.hd_show);
    ui_view_record(&v, "{\"type\":\"hdbscan\",\"engine\":\"cpu\",\"n\":1200}");
    CHECK(v.hd_show && v.hd_nodes == 1);
    ui_view_record(&v, "{\"type\":\"kdist\",\"engine\":\"cpu\",\"dataset\":\"pts.csv\","
                       "\"n\":1200,\"k\":4,\"points\":{\"rank\":[0,1],\"dist\":[0.5,1]}}");
    CHECK(!v.clu_newer);
    ui_view_free(&v);
}

/* The lab panel: a point per lab_format record, the lab record closes
 * them; the next lab starts anew; another dataset clears it. */
TEST(lab_points_and_clear_on_change)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"pts.csv\",\"dataset_hash\":\"aa\","
                       "\"n\":1200,\"d\":6}");
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"lab_format\",\"lab_id\":1,\"format\":"
                                    "\"fp16\",\"engine\":\"cpu-fp16\",\"status\":\"ok\","
                                    "\"overlap\":0.99901,\"kernel_s\":0.002}"),
                 UI_LAB);
    ui_view_record(&v, "{\"type\":\"lab_format\",\"lab_id\":1,\"format\":\"ue5m3\","
                       "\"engine\":\"cpu-ue5m3\",\"status\":\"refused\",\"overlap\":null,"
                       "\"kernel_s\":null}");
    CHECK(v.nlab == 2 && !v.lab_done);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"lab\",\"lab_id\":1,\"dataset\":\"pts.csv\","
                                    "\"eps\":1.2,\"ref_engine\":\"cpu\",\"min_overlap\":0.9999,"
                                    "\"chosen\":null,\"closest\":\"fp16\"}"),
                 UI_LAB);
    CHECK(v.lab_done && v.nlab == 2 && v.lab_id == 1);
    CHECK(strcmp(v.lab[0].format, "fp16") == 0 && strcmp(v.lab[1].status, "refused") == 0);
    CHECK_NEAR(v.lab[0].overlap, 0.99901, 0);
    CHECK(isnan(v.lab[1].overlap));
    CHECK(v.lab_chosen[0] == '\0' && strcmp(v.lab_closest, "fp16") == 0);
    CHECK(strcmp(ui_panel_name(UI_LAB), "precision lab") == 0);
    /* show lab 1 again: the same lab, not twice its points. */
    ui_view_record(&v, "{\"type\":\"lab_format\",\"lab_id\":1,\"format\":\"fp16\","
                       "\"status\":\"ok\",\"overlap\":1,\"kernel_s\":1}");
    CHECK(v.nlab == 1 && !v.lab_done);
    /* Another dataset clears it with the other results. */
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"ties.csv\",\"dataset_hash\":\"bb\","
                       "\"n\":40,\"d\":1}");
    CHECK_EQ_INT(v.nlab, 0);
    ui_view_free(&v);
}

TEST(results_name_their_dataset_and_clear_on_change)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_record(&v, "{\"type\":\"dataset\",\"name\":\"letter.csv\",\"hash\":\"aa\","
                       "\"n\":20000,\"d\":16}");
    ui_view_record(&v, "{\"type\":\"curve\",\"dataset\":\"letter.csv\",\"points\":["
                       "{\"eps\":1,\"selectivity\":1},{\"eps\":3,\"selectivity\":9}]}");
    ui_view_record(&v, "{\"type\":\"sweep\",\"dataset\":\"letter.csv\",\"target\":4,"
                       "\"eps\":2,\"selectivity\":4.1}");
    ui_view_record(&v, "{\"type\":\"compare\",\"engine_a\":\"cpu-fp16\",\"engine_b\":"
                       "\"cpu\",\"dataset\":\"letter.csv\",\"eps\":3,\"err_min\":-2e-6,"
                       "\"err_max\":3e-6,\"hist\":[{\"lo\":-1,\"hi\":1,\"count\":5}]}");
    ui_view_record(&v, "{\"type\":\"profile\",\"run_id\":4,\"engine\":\"fasted\","
                       "\"reason\":\"no CUDA device\",\"counters\":{}}");
    CHECK(strcmp(v.curve_dataset, "letter.csv") == 0);
    CHECK(strcmp(v.cmp_dataset, "letter.csv") == 0);
    CHECK_EQ_INT(v.ncurve, 2);
    CHECK_EQ_INT(v.nsweep, 1); /* the sweep's mark sits on the same curve */
    CHECK_NEAR(v.err_min, -2e-6, 0);
    CHECK_NEAR(v.err_max, 3e-6, 0);
    CHECK(!ui_view_no_error(&v));
    /* The same dataset loaded again (same name and hash) keeps them. */
    ui_view_record(&v, "{\"type\":\"dataset\",\"name\":\"letter.csv\",\"hash\":\"aa\","
                       "\"n\":20000,\"d\":16}");
    CHECK(v.have_cmp && v.ncurve == 2 && v.nbins == 1);
    /* Another one clears every panel that showed results for the old. */
    ui_view_record(&v, "{\"type\":\"dataset\",\"name\":\"letter.csv\",\"hash\":\"bb\","
                       "\"n\":10000,\"d\":16}");
    CHECK(!v.have_cmp);
    CHECK_EQ_INT(v.nbins, 0);
    CHECK_EQ_INT(v.ncurve, 0);
    CHECK_EQ_INT(v.nsweep, 0);
    CHECK_EQ_INT(v.ncnt, 0);
    CHECK(v.cnt_note[0] == '\0' && v.cnt_engine[0] == '\0');
    /* A sweep on another dataset than the curve's replaces the curve. */
    ui_view_record(&v, "{\"type\":\"curve\",\"dataset\":\"a\",\"points\":["
                       "{\"eps\":1,\"selectivity\":1},{\"eps\":3,\"selectivity\":9}]}");
    ui_view_record(&v, "{\"type\":\"sweep\",\"dataset\":\"b\",\"target\":4,"
                       "\"eps\":2,\"selectivity\":4.1}");
    CHECK_EQ_INT(v.ncurve, 0);
    CHECK_EQ_INT(v.nsweep, 1);
    CHECK(strcmp(v.curve_dataset, "b") == 0);
    /* All-zero error: "no error", not a histogram. */
    ui_view_record(&v, "{\"type\":\"compare\",\"engine_a\":\"cpu-fp16\",\"engine_b\":"
                       "\"cpu\",\"err_min\":0,\"err_max\":0,\"both\":11500,"
                       "\"hist\":[{\"lo\":-1,\"hi\":1,\"count\":11500}]}");
    CHECK(ui_view_no_error(&v));
    ui_view_free(&v);
}

TEST(log_lines)
{
    static ui_view v;
    ui_view_init(&v);
    ui_view_log(&v, "one\ntwo\n", 0);
    ui_view_log(&v, "thr", 0);
    ui_view_log(&v, "ee\n", 0);
    ui_view_log(&v, "bad\n", 1);
    CHECK_EQ_INT(v.log_n, 4);
    int err;
    CHECK(strcmp(ui_view_log_line(&v, 0, &err), "one") == 0);
    CHECK(strcmp(ui_view_log_line(&v, 2, &err), "three") == 0);
    CHECK_EQ_INT(err, 0);
    CHECK(strcmp(ui_view_log_line(&v, 3, &err), "bad") == 0);
    CHECK_EQ_INT(err, 1);
    /* The ring keeps the newest lines. */
    for (int k = 0; k < UI_LOG_LINES + 5; k++)
        ui_view_log(&v, "x\n", 0);
    CHECK_EQ_INT(v.log_n, UI_LOG_LINES);
    CHECK(strcmp(ui_view_log_line(&v, UI_LOG_LINES - 1, NULL), "x") == 0);
    ui_view_free(&v);
}

/* The compare record of docs/JSON.md: sides a, b and ref of one shape,
 * each side's accuracy nested in it (null for the reference). */
TEST(compare_record_with_sides)
{
    static ui_view v;
    ui_view_init(&v);
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"compare\",\"eps\":0.5,"
                                    "\"a\":{\"engine\":\"cpu-fp16\",\"time_s\":0.25,\"accuracy\":{"
                                    "\"overlap\":0.98,\"both\":90,\"only_engine\":4,\"only_ref\":6,"
                                    "\"err_mean\":1e-6,\"err_std\":2e-6,\"err_max\":8e-6,"
                                    "\"histogram\":[{\"lo\":-1,\"hi\":1,\"count\":90}]}},"
                                    "\"b\":{\"engine\":\"fasted\",\"time_s\":0.125,\"accuracy\":{"
                                    "\"overlap\":0.97,\"only_engine\":7,\"only_ref\":9}},"
                                    "\"ref\":{\"engine\":\"cpu\",\"accuracy\":null}}"),
                 UI_COMPARE);
    CHECK(strcmp(v.cmp_a, "cpu-fp16") == 0 && strcmp(v.cmp_b, "fasted") == 0);
    CHECK(strcmp(v.cmp_ref, "cpu") == 0);
    CHECK(v.overlap == 0.98 && v.only_a == 4 && v.only_b == 6 && v.both == 90);
    CHECK(v.err_max == 8e-6 && v.time_a == 0.25 && v.time_b == 0.125);
    CHECK(v.b_overlap == 0.97 && v.b_only_engine == 7 && v.b_only_ref == 9);
    CHECK_EQ_INT(v.nbins, 1);
    CHECK_NEAR(v.bin_count[0], 90, 0);
    /* B the reference: its accuracy is null, nothing of B's to show. */
    CHECK_EQ_INT(ui_view_record(&v, "{\"type\":\"compare\",\"a\":{\"engine\":\"cpu-fp16\","
                                    "\"accuracy\":{\"overlap\":1}},\"b\":{\"engine\":\"cpu\","
                                    "\"accuracy\":null},\"ref\":{\"engine\":\"cpu\","
                                    "\"accuracy\":null}}"),
                 UI_COMPARE);
    CHECK(v.overlap == 1 && isnan(v.b_overlap));
    ui_view_free(&v);
}

/* The ladder panel: the "ladder" record as src/ladder.c writes it (the
 * producer's own JSON, not a hand-written copy) gives one bar per rung in
 * the lab panel's place; a lab record takes the place back, another
 * dataset clears it. */
TEST(ladder_in_the_lab_place)
{
    static ui_view v;
    ui_view_init(&v);
    ladder_view lv;
    memset(&lv, 0, sizeof lv);
    lv.id = 4;
    snprintf(lv.device, sizeof lv.device, "NVIDIA H200 (sm_90, 132 SMs)");
    lv.n = 16384;
    lv.d = 1024;
    lv.nrows = 2;
    lv.row[0] = (ladder_row){.rung = 7, .status = LADDER_OK, .tflops = 198.4, .blas_tflops = 730};
    snprintf(lv.row[0].name, sizeof lv.row[0].name, "swizzle");
    snprintf(lv.row[0].blas, sizeof lv.row[0].blas, "fp16");
    lv.row[1] = (ladder_row){.rung = 12, .status = LADDER_NOT_RUN, .tflops = NAN};
    snprintf(lv.row[1].name, sizeof lv.row[1].name, "wgmma-fp8");
    ladder_speedups(&lv);
    json_w w;
    json_w_init(&w, '{');
    json_w_str(&w, "type", "ladder");
    ladder_json(&w, &lv);
    char *rec = json_w_finish(&w);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"ints\",\"dataset_hash\":\"aa\","
                       "\"n\":16384,\"d\":1024}");
    CHECK_EQ_INT(ui_view_record(&v, rec), UI_LAB);
    free(rec);
    CHECK(v.ladder_newer && v.nladder == 2 && v.ladder_id == 4);
    CHECK_NEAR(v.ladder[0].pct, 100 * 198.4 / 730, 1e-9);
    CHECK(strcmp(v.ladder[0].name, "swizzle") == 0 && strcmp(v.ladder[0].blas, "fp16") == 0);
    CHECK(strcmp(v.ladder[1].status, "not run") == 0 && isnan(v.ladder[1].pct));
    CHECK_NEAR(v.ladder_n, 16384, 0);
    ui_view_record(&v, "{\"type\":\"lab\",\"lab_id\":1,\"dataset\":\"ints\",\"eps\":1,"
                       "\"ref_engine\":\"cpu\",\"min_overlap\":0.9999}");
    CHECK(!v.ladder_newer && v.nladder == 2);
    ui_view_record(&v, "{\"type\":\"dataset\",\"dataset\":\"other\",\"dataset_hash\":\"bb\","
                       "\"n\":4,\"d\":1}");
    CHECK_EQ_INT(v.nladder, 0);
    ui_view_free(&v);
}
