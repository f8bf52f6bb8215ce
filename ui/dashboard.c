#include "dashboard.h"

#include "err.h"

int ui_dashboard_run(session *s)
{
    return err_set(TCJ_EUNSUP, "the dashboard is not available in this build");
}
