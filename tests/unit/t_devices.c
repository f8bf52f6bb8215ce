/* `set devices` (src/devices.c): the accepted forms and what they mean,
 * the ordinals a run is given, the run record's options, and one clear
 * line (byte offset, what was expected) for each kind of bad list, after
 * which the setting is unchanged. */
#include "check.h"

#include <string.h>

#include "devices.h"
#include "err.h"
#include "kernels.h"
#include "session.h"
#include "settings.h"

static engine_opts fresh(void)
{
    engine_opts o;
    engine_opts_default(&o);
    return o;
}

TEST(default_is_the_one_device_of_set_device)
{
    engine_opts o = fresh();
    int list[KERN_MAX_DEVICES];
    CHECK(!devices_listed(&o));
    CHECK_EQ_INT(devices_resolve(&o, list), 0);
    CHECK_EQ_INT(devices_resolve(NULL, list), 0);
    char b[64];
    devices_describe(&o, b, sizeof b);
    CHECK(strcmp(b, "default") == 0);
}

TEST(a_list_resolves_to_its_ordinals_ascending)
{
    engine_opts o = fresh();
    CHECK(devices_parse("3,0,12", &o) == 0);
    int list[KERN_MAX_DEVICES];
    CHECK_EQ_INT(devices_resolve(&o, list), 3);
    CHECK_EQ_INT(list[0], 0);
    CHECK_EQ_INT(list[1], 3);
    CHECK_EQ_INT(list[2], 12);
    char b[64];
    devices_describe(&o, b, sizeof b);
    CHECK(strcmp(b, "0,3,12") == 0);
    /* A list of one is a list: the run goes through the device queue. */
    CHECK(devices_parse("0", &o) == 0);
    CHECK(devices_listed(&o));
    CHECK_EQ_INT(devices_resolve(&o, list), 1);
    CHECK_EQ_INT(list[0], 0);
    /* The largest ordinal and the most devices a run takes. */
    CHECK(devices_parse("63,1,2,3,4,5,6,7", &o) == 0);
    CHECK_EQ_INT(devices_resolve(&o, list), KERN_MAX_DEVICES);
    CHECK_EQ_INT(list[KERN_MAX_DEVICES - 1], 63);
    CHECK(devices_parse("default", &o) == 0);
    CHECK(!devices_listed(&o));
}

TEST(all_is_every_device_present)
{
    engine_opts o = fresh();
    CHECK(devices_parse("all", &o) == 0);
    CHECK(devices_listed(&o));
    int list[KERN_MAX_DEVICES];
    int have = kern_device_count(); /* 0 on a machine without a GPU */
    int want = have < KERN_MAX_DEVICES ? have : KERN_MAX_DEVICES;
    CHECK_EQ_INT(devices_resolve(&o, list), want);
    for (int k = 0; k < want; k++)
        CHECK_EQ_INT(list[k], k);
    char b[64];
    devices_describe(&o, b, sizeof b);
    CHECK(strcmp(b, "all") == 0);
}

/* Each bad value: refused with one line containing what (and the setting
 * as it was). */
static void bad(const char *value, const char *what)
{
    engine_opts o = fresh();
    CHECK(devices_parse("1,2", &o) == 0);
    int rc = devices_parse(value, &o);
    CHECK_MSG(rc == TCJ_EINVAL, "'%s' accepted", value);
    CHECK_MSG(strstr(err_msg(), what) != NULL, "'%s': '%s' lacks '%s'", value, err_msg(), what);
    CHECK_MSG(strncmp(err_msg(), "devices: ", 9) == 0 && !strchr(err_msg(), '\n'),
              "'%s': not one line naming the setting: %s", value, err_msg());
    char b[64];
    devices_describe(&o, b, sizeof b);
    CHECK_MSG(strcmp(b, "1,2") == 0, "'%s' changed the setting to %s", value, b);
}

TEST(bad_lists_are_refused_with_one_line)
{
    bad("0,0", "device 0 is listed twice in '0,0'");
    bad("2,1,2", "device 2 is listed twice");
    bad("", "byte 0 of '' is not a device ordinal");
    bad("gpu0", "byte 0 of 'gpu0' is not a device ordinal");
    bad("0,,1", "byte 2 of '0,,1' is not a device ordinal");
    bad("0,1,", "byte 4 of '0,1,' is not a device ordinal");
    bad("-1", "byte 0 of '-1'");
    bad("0;1", "expected ',' or the end at byte 1 of '0;1'");
    bad("0,1x", "expected ',' or the end at byte 3");
    bad("1,64", "ordinal at byte 2 of '1,64' is above 63");
    bad("99999999999999999999", "is above 63");
    bad("0,1,2,3,4,5,6,7,8", "at most 8 devices");
    bad("All", "byte 0 of 'All'");
}

TEST(the_setting_row_and_the_run_record)
{
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    const setting *t = setting_find("devices");
    CHECK(t != NULL);
    char opts[512], val[64];
    settings_describe(&s, NULL, opts, sizeof opts);
    CHECK_MSG(strstr(opts, "devices=") == NULL, "default runs read as before: %s", opts);
    char *v[] = {(char *)"1,0", NULL};
    CHECK(t->set(&s, v) == 0);
    t->get(&s, val, sizeof val);
    CHECK(strcmp(val, "0,1") == 0);
    settings_describe(&s, NULL, opts, sizeof opts);
    CHECK_STR_CONTAINS(opts, " devices=0,1");
    char *w[] = {(char *)"0,0", NULL};
    CHECK(t->set(&s, w) == TCJ_EINVAL);
    t->get(&s, val, sizeof val);
    CHECK(strcmp(val, "0,1") == 0);
}
