/* Text plots on a character buffer: bars, sparklines, line plots and
 * histograms, against hand-computed pictures. */
#include "check.h"
#include "plot.h"

#include <math.h>

TEST(bar_fractions)
{
    char b[32];
    CHECK_EQ_INT(ui_plot_bar(b, 10, 0.5), 0);
    CHECK(strcmp(b, "#####.....") == 0);
    ui_plot_bar(b, 10, 0);
    CHECK(strcmp(b, "..........") == 0);
    ui_plot_bar(b, 10, 1.7); /* clamped */
    CHECK(strcmp(b, "##########") == 0);
    ui_plot_bar(b, 10, -3);
    CHECK(strcmp(b, "..........") == 0);
    ui_plot_bar(b, 4, 0.26); /* 1.04 cells round to 1 */
    CHECK(strcmp(b, "#...") == 0);
    CHECK_EQ_INT(ui_plot_bar(b, 5, NAN), -1);
    CHECK(strcmp(b, "     ") == 0);
}

TEST(fmt_num)
{
    char b[16];
    ui_fmt_num(b, sizeof b, 0);
    CHECK(strcmp(b, "0") == 0);
    ui_fmt_num(b, sizeof b, 12.5);
    CHECK(strcmp(b, "12.5") == 0);
    ui_fmt_num(b, sizeof b, 1234);
    CHECK(strcmp(b, "1234") == 0);
    ui_fmt_num(b, sizeof b, 12345);
    CHECK(strcmp(b, "12.3k") == 0);
    ui_fmt_num(b, sizeof b, 4560000);
    CHECK(strcmp(b, "4.56M") == 0);
    ui_fmt_num(b, sizeof b, 0.0000123);
    CHECK(strcmp(b, "1.2e-05") == 0);
    ui_fmt_num(b, sizeof b, NAN);
    CHECK(strcmp(b, "N/A") == 0);
    ui_fmt_num(b, sizeof b, -0.031);
    CHECK(strcmp(b, "-0.031") == 0);
}

TEST(spark_levels)
{
    double v[] = {0, 1, 2, 3, 4, 5, 6, NAN, 6};
    char s[16];
    ui_plot_spark(s, 9, v, 9, 0, 6);
    CHECK(strcmp(s, ".:-=+*# #") == 0);
    /* Only the last width values are drawn. */
    ui_plot_spark(s, 3, v, 7, 0, 6);
    CHECK(strcmp(s, "+*#") == 0);
    /* Fewer values than cells: left-aligned, rest blank. */
    ui_plot_spark(s, 4, v, 2, 0, 6);
    CHECK(strcmp(s, ".:  ") == 0);
}

TEST(xy_diagonal_with_axes)
{
    /* y = x over 0..10 on a 16x7 grid: labels "10" and "0" take 2 cells, so
     * the plot area is columns 3..15 (13 wide) and rows 0..4 (5 high). */
    double x[] = {0, 5, 10}, y[] = {0, 5, 10};
    char cells[16 * 7];
    ui_grid g;
    ui_grid_init(&g, cells, 16, 7);
    CHECK_EQ_INT(ui_plot_xy(&g, x, y, 3, 0, 0), 0);
    char row[17];
    ui_grid_row(&g, 0, row);
    CHECK(strncmp(row, "10|", 3) == 0);
    CHECK_EQ_INT(ui_grid_at(&g, 0, 15), '*'); /* (10, 10): top right */
    CHECK_EQ_INT(ui_grid_at(&g, 4, 3), '*');  /* (0, 0): bottom left */
    CHECK_EQ_INT(ui_grid_at(&g, 4, 1), '0');  /* y min label */
    CHECK_EQ_INT(ui_grid_at(&g, 5, 2), '+');
    CHECK_EQ_INT(ui_grid_at(&g, 5, 9), '-');
    ui_grid_row(&g, 6, row);
    CHECK(strcmp(row, "   0          10") == 0);
    /* One mark per column, never rising to the left. */
    int prev = 99;
    for (int c = 3; c < 16; c++) {
        int found = -1;
        for (int r = 0; r < 5; r++)
            if (ui_grid_at(&g, r, c) == '*') {
                CHECK(found < 0);
                found = r;
            }
        CHECK(found >= 0);
        CHECK(found <= prev);
        prev = found;
    }
    /* The middle column is at mid height. */
    CHECK_EQ_INT(ui_grid_at(&g, 2, 9), '*');
}

TEST(xy_log_skips_nonpositive)
{
    double x[] = {0, 1, 10, 100}, y[] = {5, 1, 10, 100};
    char cells[20 * 6];
    ui_grid g;
    ui_grid_init(&g, cells, 20, 6);
    CHECK_EQ_INT(ui_plot_xy(&g, x, y, 4, 1, 1), 0);
    char row[21];
    ui_grid_row(&g, 5, row);
    CHECK_STR_CONTAINS(row, "1"); /* x from 1, the 0 is skipped */
    CHECK_STR_CONTAINS(row, "100");
    double z[] = {-1, 0};
    ui_grid_init(&g, cells, 20, 6);
    CHECK_EQ_INT(ui_plot_xy(&g, z, z, 2, 1, 1), -1);
    ui_grid_row(&g, 0, row);
    CHECK_STR_CONTAINS(row, "no data");
}

TEST(hist_heights)
{
    /* Four bins, counts 0, 2, 4, 1, linear scale, 4 plot columns (labels
     * "4" and "0" are one wide: plot from column 2), 4 plot rows. */
    double lo[] = {-2, -1, 0, 1}, hi[] = {-1, 0, 1, 2}, cnt[] = {0, 2, 4, 1};
    char cells[6 * 6];
    ui_grid g;
    ui_grid_init(&g, cells, 6, 6);
    CHECK_EQ_INT(ui_plot_hist(&g, lo, hi, cnt, 4, 0), 0);
    int h[4];
    for (int c = 0; c < 4; c++) {
        h[c] = 0;
        for (int r = 0; r < 4; r++)
            h[c] += ui_grid_at(&g, r, 2 + c) == '#';
    }
    /* The empty first bin is left out: bins 2, 4, 1 over 4 columns, the
     * first bin on columns 0 and 1 (column c sums bins c*3/4..(c+1)*3/4). */
    CHECK_EQ_INT(h[0], 2);
    CHECK_EQ_INT(h[1], 2);
    CHECK_EQ_INT(h[2], 4);
    CHECK_EQ_INT(h[3], 1);
    char row[8];
    ui_grid_row(&g, 5, row);
    CHECK(strcmp(row, "  -1 2") == 0); /* from the first counted bin's lo */
    /* Log scale: a count of 1 against 1000 still shows one cell; the two
     * empty bins at the right are left out (2 bins over 4 columns). */
    double c2[] = {1000, 1, 0, 0};
    char wide[9 * 6];
    ui_grid_init(&g, wide, 9, 6); /* label "1000": plot from column 5 */
    CHECK_EQ_INT(ui_plot_hist(&g, lo, hi, c2, 4, 1), 0);
    CHECK_EQ_INT(ui_grid_at(&g, 0, 5), '#');
    CHECK_EQ_INT(ui_grid_at(&g, 0, 6), '#');
    CHECK_EQ_INT(ui_grid_at(&g, 3, 7), '#');
    CHECK_EQ_INT(ui_grid_at(&g, 2, 7), ' ');
    CHECK_EQ_INT(ui_grid_at(&g, 3, 8), '#');
    char wrow[10];
    ui_grid_row(&g, 5, wrow);
    CHECK(strcmp(wrow, "     -2 0") == 0); /* up to the last counted bin's hi */
    double z[] = {0, 0, 0, 0};
    ui_grid_init(&g, cells, 6, 6);
    CHECK_EQ_INT(ui_plot_hist(&g, lo, hi, z, 4, 0), -1);
}

TEST(curve_marks_on_the_line)
{
    /* S(eps) = 10 * eps on 0..10 (log y skips S = 0, but the x axis still
     * starts at the first point); sweep results as marks on the curve. */
    double x[] = {0, 1, 2, 5, 10}, y[] = {0, 10, 20, 50, 100};
    double mx[] = {5}, my[] = {50};
    char cells[24 * 8];
    ui_grid g;
    ui_grid_init(&g, cells, 24, 8);
    CHECK_EQ_INT(ui_plot_curve(&g, x, y, 5, mx, my, 1, 0, 1), 0);
    char row[25];
    ui_grid_row(&g, 7, row);
    /* labels "100" and "10": plot from column 4; x from 0, not from 1 */
    CHECK(strncmp(row, "    0", 5) == 0);
    CHECK_STR_CONTAINS(row, "10");
    /* The mark: x = 5 of 0..10 on 20 columns is column 4 + round(9.5) = 14
     * (lround rounds half away from zero); y = log 50 of log 10..log 100
     * on 6 rows: 5 - round(0.699 * 5) = 2. */
    CHECK_EQ_INT(ui_grid_at(&g, 2, 14), 'O');
    int marks = 0, stars = 0;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 24; c++) {
            marks += ui_grid_at(&g, r, c) == 'O';
            stars += ui_grid_at(&g, r, c) == '*';
        }
    CHECK_EQ_INT(marks, 1);
    CHECK(stars > 5);
    /* No curve measured: the sweep results alone, as marks, no line. */
    double sx[] = {1, 2, 4}, sy[] = {10, 20, 40};
    ui_grid_init(&g, cells, 24, 8);
    CHECK_EQ_INT(ui_plot_curve(&g, NULL, NULL, 0, sx, sy, 3, 0, 0), 0);
    marks = stars = 0;
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 24; c++) {
            marks += ui_grid_at(&g, r, c) == 'O';
            stars += ui_grid_at(&g, r, c) == '*';
        }
    CHECK_EQ_INT(marks, 3);
    CHECK_EQ_INT(stars, 0);
}

TEST(points_labelled_on_a_log_axis)
{
    /* 1 - overlap of 0.01, 0 (drawn on the floor, 1e-4), NaN (left out)
     * and 0.001 on a 30x8 grid: y from 1e-4 to 1e-2, labels 7 cells wide,
     * so the plot area is columns 8..29 and rows 0..5; x from 1 to 2. */
    double x[] = {1, 2, 3, 2}, y[] = {0.01, 0, NAN, 0.001};
    const char *label[] = {"bf16", "fp16", "none", "tf32"};
    char cells[30 * 8];
    ui_grid g;
    ui_grid_init(&g, cells, 30, 8);
    CHECK_EQ_INT(ui_plot_points(&g, x, y, label, 4, 1e-4), 0);
    char row[31], want[31];
#define ROW_IS(r, text)                                                                            \
    (ui_grid_row(&g, r, row), snprintf(want, sizeof want, "%-30s", text), strcmp(row, want) == 0)
    /* bf16 top left, its label on its right. */
    CHECK(ROW_IS(0, "   0.01|o bf16"));
    /* tf32 one decade up at the right edge (row 5 - 5/2, rounded), its
     * label on its left. */
    CHECK(ROW_IS(2, "       |                tf32 o"));
    /* fp16 (overlap 1) on the floor's row. */
    CHECK(ROW_IS(5, "1.0e-04|                fp16 o"));
    /* The x labels, and between them that the y axis is logarithmic. */
    CHECK(ROW_IS(7, "        1       log y        2"));
    /* The NaN point is not drawn, nor its label. */
    for (int r = 0; r < 8; r++) {
        ui_grid_row(&g, r, row);
        CHECK(strstr(row, "none") == NULL);
    }
    /* Two formats on one cell share a label. */
    double x2[] = {1, 1, 3}, y2[] = {0.01, 0.01, 0.001};
    const char *l2[] = {"fp16", "tf32", "ue4m4"};
    ui_grid_init(&g, cells, 30, 8);
    CHECK_EQ_INT(ui_plot_points(&g, x2, y2, l2, 3, 1e-4), 0);
    ui_grid_row(&g, 0, row);
    CHECK(strstr(row, "|o fp16,tf32") != NULL);
    /* A label never touches another point or label: bf16 at column 8
     * would end at 13, next to ue4m4's point at 14 ("o bf16o"); it goes
     * under its point instead. Plot area columns 8..29: x = 1 + 6/21 is
     * column 14. */
    double x3[] = {1, 1 + 6.0 / 21, 2}, y3[] = {0.01, 0.01, 0.001};
    const char *l3[] = {"bf16", "ue4m4", "fp8"};
    ui_grid_init(&g, cells, 30, 8);
    CHECK_EQ_INT(ui_plot_points(&g, x3, y3, l3, 3, 1e-4), 0);
    CHECK(ROW_IS(0, "   0.01|o     o ue4m4"));
    CHECK(ROW_IS(1, "       |bf16"));
    for (int r = 0; r < 6; r++) {
        ui_grid_row(&g, r, row);
        for (int col = 9; col < 29; col++)
            CHECK_MSG(!(row[col] == 'o' && row[col - 1] != ' ' && row[col - 1] != '|') &&
                          !(row[col] == 'o' && row[col + 1] != ' '),
                      "row %d: a point touches a label: %s", r, row);
    }
    /* Nothing to draw. */
    ui_grid_init(&g, cells, 30, 8);
    CHECK_EQ_INT(ui_plot_points(&g, x, y, label, 0, 1e-4), -1);
#undef ROW_IS
}

/* A logarithmic axis says so on the bottom row; a linear one does not. */
TEST(log_axes_are_named)
{
    double x[] = {1, 10, 100}, y[] = {1, 10, 100};
    char cells[30 * 6], row[31];
    ui_grid g;
    ui_grid_init(&g, cells, 30, 6);
    CHECK_EQ_INT(ui_plot_xy(&g, x, y, 3, 0, 1), 0);
    ui_grid_row(&g, 5, row);
    CHECK_STR_CONTAINS(row, "log y");
    CHECK(strstr(row, "log x") == NULL);
    ui_grid_init(&g, cells, 30, 6);
    CHECK_EQ_INT(ui_plot_xy(&g, x, y, 3, 1, 1), 0);
    ui_grid_row(&g, 5, row);
    CHECK_STR_CONTAINS(row, "log x, log y");
    ui_grid_init(&g, cells, 30, 6);
    CHECK_EQ_INT(ui_plot_xy(&g, x, y, 3, 0, 0), 0);
    ui_grid_row(&g, 5, row);
    CHECK(strstr(row, "log") == NULL);
}

/* A k-distance curve with outliers: the bulk 1..2, the last points at
 * 1000 (a lidar scan's far returns). On a linear axis of 10 rows the bulk
 * would sit on the bottom row (2/1000 of the height); ui_kdist_logy picks
 * a log axis, on which the bulk spans rows, and the eps rule is drawn. */
TEST(kdist_outliers_log_axis_and_eps_rule)
{
    double x[64], y[64];
    for (int k = 0; k < 64; k++) {
        x[k] = k;
        y[k] = k < 60 ? 1 + k / 59.0 : 1000;
    }
    CHECK_EQ_INT(ui_kdist_logy(y, 64), 1);
    double flat[] = {1, 1.5, 2, 3};
    CHECK_EQ_INT(ui_kdist_logy(flat, 4), 0);
    double zeros[] = {0, 0, 0, 5}; /* duplicates: zero distances ignored */
    CHECK_EQ_INT(ui_kdist_logy(zeros, 4), 0);

    char cells[40 * 12], row[41];
    ui_grid g;
    /* rows 0..9 are the plot area */
    int rows_lin = 0, rows_log = 0;
    for (int lg = 0; lg < 2; lg++) {
        ui_grid_init(&g, cells, 40, 12);
        CHECK_EQ_INT(ui_plot_curve_rule(&g, x, y, 64, NULL, NULL, 0, 0, lg, 1.5), 0);
        int used[10] = {0};
        for (int r = 0; r < 10; r++)
            for (int c = 0; c < 40; c++)
                used[r] |= ui_grid_at(&g, r, c) == '*' && c < 35; /* the bulk's columns */
        int n = 0;
        for (int r = 0; r < 10; r++)
            n += used[r];
        *(lg ? &rows_log : &rows_lin) = n;
        /* the eps rule: one row of dashes beside the curve's marks (on the
         * linear axis the bulk's row covers it) */
        int dashes = 0;
        for (int r = 0; r < 10; r++) {
            ui_grid_row(&g, r, row);
            dashes += strstr(row, "- - -") != NULL;
        }
        if (lg)
            CHECK_EQ_INT(dashes, 1);
    }
    CHECK(rows_lin <= 1);
    CHECK(rows_log >= 2);
}

/* Wrapping at spaces: no word split, the breaking space dropped, a word
 * longer than the width cut. */
TEST(wrap_at_words)
{
    const char *s = "run 3: cpu-fp16 on letter.csv";
    int st[8], n[8];
    int k = ui_wrap(s, (int)strlen(s), 12, st, n, 8);
    CHECK_EQ_INT(k, 3);
    CHECK(n[0] == 6 && strncmp(s + st[0], "run 3:", 6) == 0);
    CHECK(n[1] == 11 && strncmp(s + st[1], "cpu-fp16 on", 11) == 0);
    CHECK(n[2] == 10 && strncmp(s + st[2], "letter.csv", 10) == 0);
    for (int j = 0; j < k; j++)
        CHECK(n[j] <= 12);
    k = ui_wrap("abcdefghij", 10, 4, st, n, 8);
    CHECK_EQ_INT(k, 3);
    CHECK(n[0] == 4 && n[1] == 4 && n[2] == 2);
    CHECK_EQ_INT(ui_wrap("", 0, 4, st, n, 8), 1);
    CHECK_EQ_INT(n[0], 0);
}

/* HDBSCAN*'s condensed tree as an icicle, worked by hand: a root of 100
 * points splits at distance 4 into a chosen cluster of 60 (label 0) and
 * one of 30, which splits at distance 2 into two chosen ones of 15 and 10
 * (labels 1, 2); 28 x 6 cells, the plot 20 wide after the 8 label
 * columns. Rows: distance 4 on row 1, 2 on the last (log scale, the
 * root's row 0); columns: 60% of 20 = 12, then 6, whose halves 3 and 2. */
TEST(icicle_by_hand)
{
    const int parent[5] = {-1, 0, 0, 2, 2};
    const double lam[5] = {0, 0.25, 0.25, 0.5, 0.5};
    const double size[5] = {100, 60, 30, 15, 10};
    const int label[5] = {-1, 0, -1, 1, 2};
    char cells[28 * 6], row[32];
    ui_grid g;
    ui_grid_init(&g, cells, 28, 6);
    CHECK_EQ_INT(ui_plot_icicle(&g, parent, lam, size, label, 5), 0);
    const char *want[6] = {
        "dist    --------------------", "4       0###########::::::", "                    ::::::",
        "                    ::::::",   "                    ::::::", "2                   1##2#"};
    for (int y = 0; y < 6; y++) {
        ui_grid_row_trimmed(&g, y, row);
        CHECK_MSG(strcmp(row, want[y]) == 0, "row %d: '%s', want '%s'", y, row, want[y]);
    }
    /* parents must come first; no room */
    const int bad[3] = {-1, 2, 0};
    ui_grid_init(&g, cells, 28, 6);
    CHECK_EQ_INT(ui_plot_icicle(&g, bad, lam, size, label, 3), -1);
    ui_grid_init(&g, cells, 12, 6);
    CHECK_EQ_INT(ui_plot_icicle(&g, parent, lam, size, label, 5), -1);
}
