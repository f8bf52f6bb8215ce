/* The one JSON writer (src/json.c) against the project's reader
 * (ui/json_mini.c, strict RFC 8259): every document the writer makes must
 * parse, and read back to exactly what was written. Doubles must come back
 * bit for bit and in the fewest significant digits that do; strings come
 * back byte for byte when they are UTF-8, with one U+FFFD per byte that is
 * not (the documented policy), whatever control characters they hold. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "json_mini.h"

/* {"v": <v>} through the writer and the reader. */
static json *num_doc(double v, char **text)
{
    json_w w;
    json_w_init(&w, '{');
    json_w_dbl(&w, "v", v);
    *text = json_w_finish(&w);
    return json_parse(*text);
}

/* Significant digits in the mantissa of a %g text, leading and trailing
 * zeros not counted: "-1.25e-07" -> 3, "100" -> 1, "0.0012" -> 2. */
static int sig_digits(const char *t)
{
    char dig[64];
    int n = 0;
    for (const char *p = t; *p && *p != 'e' && *p != 'E' && n < 63; p++)
        if (*p >= '0' && *p <= '9' && (n > 0 || *p != '0'))
            dig[n++] = *p;
    while (n > 0 && dig[n - 1] == '0')
        n--;
    return n ? n : 1;
}

/* v written, read back to the same bits, and no shorter %g would do. */
static int num_ok(double v, char *why, size_t size)
{
    char *text;
    json *j = num_doc(v, &text);
    const json *x = json_get(j, "v");
    int ok = x && x->type == JSON_NUM && memcmp(&x->num, &v, sizeof v) == 0;
    if (!ok)
        snprintf(why, size, "%.17g written as %s", v, text);
    if (ok) {
        /* The writer's text is minimal: one digit fewer does not read back. */
        char num[JSON_NUM_MAX];
        json_fmt_double(num, sizeof num, v);
        int k = sig_digits(num);
        char shorter[400];
        snprintf(shorter, sizeof shorter, "%.*g", k - 1 > 0 ? k - 1 : 1, v);
        double back = strtod(shorter, NULL);
        if (k > 1 && memcmp(&back, &v, sizeof v) == 0) {
            ok = 0;
            snprintf(why, size, "%s is not the shortest: %.40s reads back too", num, shorter);
        }
        if (k > 17) {
            ok = 0;
            snprintf(why, size, "%s has %d digits", num, k);
        }
    }
    json_free(j);
    free(text);
    return ok;
}

TEST(numbers_edge_values)
{
    const double edge[] = {0.0,
                           -0.0,
                           1,
                           -1,
                           0.1,
                           0.2,
                           0.3,
                           1.0 / 3,
                           2.0 / 3,
                           12.423333333333334,
                           1e21,
                           1e22,
                           1e-7,
                           123456789012345678.0,
                           9007199254740992.0,
                           9007199254740993.0,
                           DBL_MAX,
                           -DBL_MAX,
                           DBL_MIN,
                           DBL_EPSILON,
                           4.9406564584124654e-324, /* the smallest subnormal */
                           2.2250738585072009e-308, /* the largest subnormal */
                           5e-324,
                           1.7976931348623157e308,
                           0.1 + 0.2,
                           100,
                           1e100,
                           -2.5e-5};
    char why[200];
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++)
        CHECK_MSG(num_ok(edge[k], why, sizeof why), "%s", why);
    CHECK_MSG(num_ok(nextafter(1.0, 2.0), why, sizeof why), "%s", why);
    CHECK_MSG(num_ok(nextafter(1.0, 0.0), why, sizeof why), "%s", why);

    /* -0 keeps its sign; short values stay short. */
    char num[JSON_NUM_MAX];
    json_fmt_double(num, sizeof num, -0.0);
    CHECK(strcmp(num, "-0") == 0);
    json_fmt_double(num, sizeof num, 0.1);
    CHECK(strcmp(num, "0.1") == 0);
    json_fmt_double(num, sizeof num, 1e21);
    CHECK(strcmp(num, "1e+21") == 0);
    json_fmt_double(num, sizeof num, 0.1 + 0.2);
    CHECK(strcmp(num, "0.30000000000000004") == 0);
    /* Plain integers and the usual exponent forms, as %g writes them. */
    const double plain[] = {100, 123456, 1e14, 1e15, 1e-5, 2.5e-7, 1e100, 12};
    const char *const want[] = {"100",   "123456",  "100000000000000", "1e+15",
                                "1e-05", "2.5e-07", "1e+100",          "12"};
    for (int k = 0; k < 8; k++) {
        json_fmt_double(num, sizeof num, plain[k]);
        CHECK_MSG(strcmp(num, want[k]) == 0, "%.17g written as %s", plain[k], num);
    }

    /* Not finite: null, which the reader gives as NaN. */
    const double bad[] = {NAN, -NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < 4; k++) {
        char *text;
        json *j = num_doc(bad[k], &text);
        CHECK_MSG(j && json_get(j, "v")->type == JSON_NULL, "%s", text);
        CHECK(strcmp(text, "{\"v\":null}") == 0);
        json_free(j);
        free(text);
    }
}

/* A 64-bit generator (splitmix64): random bit patterns cover every
 * exponent, subnormals included. */

TEST(numbers_random_round_trip)
{
    uint64_t seed = 12345;
    char why[200];
    int tried = 0;
    for (int k = 0; k < 20000; k++) {
        uint64_t bits = t_splitmix(&seed);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!isfinite(v))
            continue;
        tried++;
        CHECK_MSG(num_ok(v, why, sizeof why), "%s", why);
    }
    CHECK(tried > 19000);
    /* Short decimals as people type them, and the results of arithmetic. */
    for (int k = -2000; k <= 2000; k++) {
        CHECK_MSG(num_ok(k / 1000.0, why, sizeof why), "%s", why);
        CHECK_MSG(num_ok(k * 0.1, why, sizeof why), "%s", why);
        CHECK_MSG(num_ok(sqrt(fabs((double)k) + 0.5), why, sizeof why), "%s", why);
    }
}

TEST(integers)
{
    json_w w;
    json_w_init(&w, '[');
    json_w_int(&w, NULL, INT64_MIN);
    json_w_int(&w, NULL, INT64_MAX);
    json_w_uint(&w, NULL, UINT64_MAX);
    json_w_int(&w, NULL, 0);
    char *text = json_w_finish(&w);
    CHECK(strcmp(text, "[-9223372036854775808,9223372036854775807,18446744073709551615,0]") == 0);
    json *j = json_parse(text);
    CHECK(j && json_len(j) == 4);
    CHECK(json_at(j, 1)->num == 9223372036854775807.0);
    json_free(j);
    free(text);
}

/* s (n bytes) as a string member, read back: the decoded bytes. */
static char *str_round_trip(const char *s, size_t n, size_t *len, char **text)
{
    json_w w;
    json_w_init(&w, '{');
    json_w_strn(&w, "s", s, n);
    *text = json_w_finish(&w);
    json *j = json_parse(*text);
    const json *x = json_get(j, "s");
    char *out = NULL;
    if (x && x->type == JSON_STR) {
        out = malloc(x->len + 1);
        memcpy(out, x->str, x->len + 1);
        *len = x->len;
    }
    json_free(j);
    return out;
}

TEST(strings_every_control_character)
{
    /* Every byte 0x00..0x7f in one string, then each alone. */
    char all[128];
    for (int c = 0; c < 128; c++)
        all[c] = (char)c;
    size_t len = 0;
    char *text;
    char *back = str_round_trip(all, sizeof all, &len, &text);
    CHECK_MSG(back && len == sizeof all && memcmp(back, all, len) == 0, "%s", text);
    /* Nothing below 0x20 (nor DEL) is written raw. */
    for (const char *p = text; *p; p++)
        CHECK_MSG((unsigned char)*p >= 0x20 && *p != 0x7f, "raw byte %d in %s", *p, text);
    CHECK_STR_CONTAINS(text, "\\u0000\\u0001");
    CHECK_STR_CONTAINS(text, "\\b\\t\\n\\u000b\\f\\r");
    CHECK_STR_CONTAINS(text, "\\\"");
    CHECK_STR_CONTAINS(text, "\\\\");
    free(back);
    free(text);
    for (int c = 0; c < 128; c++) {
        char one = (char)c;
        back = str_round_trip(&one, 1, &len, &text);
        CHECK_MSG(back && len == 1 && back[0] == one, "byte %d: %s", c, text);
        free(back);
        free(text);
    }
}

/* What the policy says a byte string reads back as, computed from the
 * Unicode table of well-formed sequences (3.9, table 3-7), independently
 * of the writer: each well-formed sequence as is, every other byte
 * U+FFFD. */
static size_t expect_policy(const unsigned char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = 0;
        unsigned lo = 0x80, hi = 0xbf;
        if (c < 0x80)
            len = 1;
        else if (c >= 0xc2 && c <= 0xdf)
            len = 2;
        else if (c == 0xe0)
            len = 3, lo = 0xa0;
        else if (c >= 0xe1 && c <= 0xec)
            len = 3;
        else if (c == 0xed)
            len = 3, hi = 0x9f;
        else if (c >= 0xee && c <= 0xef)
            len = 3;
        else if (c == 0xf0)
            len = 4, lo = 0x90;
        else if (c >= 0xf1 && c <= 0xf3)
            len = 4;
        else if (c == 0xf4)
            len = 4, hi = 0x8f;
        int ok = len > 0 && i + len <= n;
        if (ok && len > 1)
            ok = s[i + 1] >= lo && s[i + 1] <= hi;
        for (size_t k = 2; ok && k < len; k++)
            ok = s[i + k] >= 0x80 && s[i + k] <= 0xbf;
        if (ok) {
            memcpy(out + o, s + i, len);
            o += len;
            i += len;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    return o;
}

TEST(strings_invalid_utf8)
{
    static const char *const cases[] = {
        "caf\xe9",                  /* Latin-1 e acute */
        "\x80",                     /* a lone continuation byte */
        "\xc0\x80",                 /* overlong NUL */
        "\xc1\xbf",                 /* overlong */
        "\xe0\x80\x80",             /* overlong 3-byte */
        "\xe0\x9f\xbf",             /* overlong 3-byte, top */
        "\xed\xa0\x80",             /* an encoded high surrogate (CESU-8) */
        "\xed\xbf\xbf",             /* an encoded low surrogate */
        "\xed\xa0\xbd\xed\xb8\x80", /* a surrogate pair in CESU-8 */
        "\xf0\x80\x80\x80",         /* overlong 4-byte */
        "\xf4\x90\x80\x80",         /* above U+10FFFF */
        "\xf5\x80\x80\x80",         /* not a lead byte */
        "\xfe\xff",                 /* never in UTF-8 */
        "ab\xe2\x82",               /* truncated at the end */
        "\xe2\x82x",                /* truncated before ASCII */
        "\xf0\x9f\x98",             /* truncated 4-byte */
        "\xc3",                     /* truncated 2-byte */
        "ok \xc2\x80 \xdf\xbf \xe0\xa0\x80 \xef\xbf\xbf \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf",
        "\xf0\x9f\x98\x80 emoji, \xe2\x82\xac euro",
    };
    char want[256];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *s = cases[k];
        size_t n = strlen(s), len = 0;
        size_t wn = expect_policy((const unsigned char *)s, n, want);
        char *text;
        char *back = str_round_trip(s, n, &len, &text);
        CHECK_MSG(back != NULL, "case %zu: the reader refused %s", k, text);
        CHECK_MSG(len == wn && memcmp(back, want, wn) == 0, "case %zu: %s", k, text);
        free(back);
        free(text);
    }
    /* Every single byte above 0x7f alone is invalid: one U+FFFD, escaped. */
    for (int c = 0x80; c < 0x100; c++) {
        char one = (char)c;
        size_t len = 0;
        char *text;
        char *back = str_round_trip(&one, 1, &len, &text);
        CHECK_MSG(back && len == 3 && memcmp(back, "\xef\xbf\xbd", 3) == 0, "byte %d", c);
        CHECK(strcmp(text, "{\"s\":\"\\ufffd\"}") == 0);
        free(back);
        free(text);
    }
    /* Random byte strings: always readable, always as the policy says. */
    uint64_t seed = 99;
    for (int k = 0; k < 2000; k++) {
        unsigned char s[24];
        size_t n = t_splitmix(&seed) % sizeof s;
        for (size_t i = 0; i < n; i++)
            s[i] = (unsigned char)t_splitmix(&seed);
        size_t wn = expect_policy(s, n, want), len = 0;
        char *text;
        char *back = str_round_trip((const char *)s, n, &len, &text);
        CHECK_MSG(back && len == wn && memcmp(back, want, wn) == 0, "random %d: %s", k, text);
        free(back);
        free(text);
    }
}

TEST(surrogates_in_the_reader)
{
    /* The writer never escapes beyond U+007F, but other writers do: a pair
     * is one code point, a lone half U+FFFD. */
    json *j = json_parse("[\"\\ud83d\\ude00\",\"\\ud800\",\"x\\udc00y\",\"\\u20ac\",\"\\ud83dA\"]");
    CHECK(j && json_len(j) == 5);
    CHECK(strcmp(json_at(j, 0)->str, "\xf0\x9f\x98\x80") == 0);
    CHECK(strcmp(json_at(j, 1)->str, "\xef\xbf\xbd") == 0);
    CHECK(strcmp(json_at(j, 2)->str, "x\xef\xbf\xbdy") == 0);
    CHECK(strcmp(json_at(j, 3)->str, "\xe2\x82\xac") == 0);
    CHECK(strcmp(json_at(j, 4)->str, "\xef\xbf\xbd"
                                     "A") == 0);
    json_free(j);
    /* A supplementary character written raw reads back as itself. */
    size_t len = 0;
    char *text;
    char *back = str_round_trip("\xf0\x9f\x98\x80", 4, &len, &text);
    CHECK(back && len == 4 && memcmp(back, "\xf0\x9f\x98\x80", 4) == 0);
    CHECK(strcmp(text, "{\"s\":\"\xf0\x9f\x98\x80\"}") == 0);
    free(back);
    free(text);
}

TEST(reader_is_strict)
{
    static const char *const bad[] = {
        "{\"a\":+1}",        "{\"a\":01}",       "{\"a\":.5}",       "{\"a\":1.}",
        "{\"a\":1e}",        "{\"a\":nan}",      "{\"a\":Infinity}", "{\"a\":0x10}",
        "{\"a\":\"\\x\"}",   "{\"a\":\"\x01\"}", "{\"a\":\"\n\"}",   "{\"a\":\"\xe9\"}",
        "{\"a\":\"\\u12\"}", "{\"a\":1} x",      "{\"a\":-}",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        json *j = json_parse(bad[k]);
        CHECK_MSG(j == NULL, "accepted %s", bad[k]);
    }
    json *j = json_parse("{\"a\":-0.5e+3,\"b\":\"\\/\",\"c\":0,\"d\":[true,false,null]}");
    CHECK(j && json_num(j, "a") == -500 && strcmp(json_str(j, "b", ""), "/") == 0);
    CHECK(json_num(j, "c") == 0 && json_len(json_get(j, "d")) == 3);
    json_free(j);
}

TEST(nesting_keys_and_nulls)
{
    json_w w;
    json_w_init(&w, '{');
    json_w_str(&w, "type", "run");
    json_w_str(&w, "k\"ey\n", "v");
    json_w_str(&w, "none", NULL);
    json_w_obj(&w, "o");
    json_w_arr(&w, "a");
    json_w_obj(&w, NULL);
    json_w_bool(&w, "t", 1);
    json_w_close(&w);
    json_w_null(&w, NULL);
    /* finish closes whatever is still open */
    char *text = json_w_finish(&w);
    CHECK_MSG(strcmp(text, "{\"type\":\"run\",\"k\\\"ey\\n\":\"v\",\"none\":null,\"o\":{\"a\":[{"
                           "\"t\":true},null]}}") == 0,
              "%s", text);
    json *j = json_parse(text);
    CHECK(j && strcmp(json_str(j, "k\"ey\n", ""), "v") == 0);
    CHECK(json_get(j, "none")->type == JSON_NULL);
    CHECK(json_at(json_get(json_get(j, "o"), "a"), 0)->child->num == 1);
    json_free(j);
    free(text);
    json_w_init(&w, '[');
    text = json_w_finish(&w);
    CHECK(strcmp(text, "[]") == 0);
    free(text);
}

/* The dashboard runs under the user's locale; JSON numbers keep '.'. */
TEST(numbers_under_a_comma_locale)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE", NULL};
    const char *got = NULL;
    for (int k = 0; names[k] && !got; k++)
        got = setlocale(LC_NUMERIC, names[k]);
    if (!got || strcmp(localeconv()->decimal_point, ",") != 0) {
        setlocale(LC_NUMERIC, "C");
        t_skip("no locale with a decimal comma installed");
    }
    char num[JSON_NUM_MAX];
    json_fmt_double(num, sizeof num, 0.25);
    int ok = strcmp(num, "0.25") == 0;
    json *j = json_parse("{\"v\":0.125}");
    ok = ok && j && json_num(j, "v") == 0.125;
    json_free(j);
    setlocale(LC_NUMERIC, "C");
    CHECK(ok);
}
