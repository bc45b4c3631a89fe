/* scenario_resilience.c: a scenario's "resilience" section (scenario_load.h). */
#include "sim/replay/scenario_load.h"

/* resilience: {failures, rates: {gpu, hbm, nic, link, host, software,
 * planned}, checkpoint_interval_s, checkpoint_bytes, checkpoint_s,
 * storage_write_Bps, storage_read_Bps, restart_s, stragglers: {cv}}.
 * Absent: failures reported with the calibrated rates, no stragglers. */
int scenario_load_resilience(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"failures", "rates", "checkpoint_interval_s", "checkpoint_bytes",
                                       "checkpoint_s", "storage_write_Bps", "storage_read_Bps", "restart_s",
                                       "stragglers", NULL};
    static const char *const skeys[] = {"cv", NULL};
    resilience_options *o = &s->resilience;
    jx_obj e, k, st;
    int rc;
    resilience_options_default(o);
    if (s->is_collective)
        o->failures = 0;
    if ((rc = jx_child(r, "resilience", 0, &e)) || !e.obj)
        return rc;
    if (s->is_collective)
        return tt_error_set(r->err, TT_EINPUT, "%s: $.resilience: a collective scenario has no training run to "
                            "interrupt; remove it", r->file);
    if ((rc = jx_check_keys(&e, keys)) || (rc = jx_bool(&e, "failures", 0, &o->failures)) ||
        (rc = jx_seconds(&e, "checkpoint_interval_s", 0, 1e-3, 1e9, &o->checkpoint_interval_s)) ||
        (rc = jx_bytes(&e, "checkpoint_bytes", 0, 1, 1e18, &o->checkpoint_bytes)) ||
        (rc = jx_seconds(&e, "checkpoint_s", 0, 1e-6, 1e7, &o->checkpoint_s)) ||
        (rc = jx_rate(&e, "storage_write_Bps", 0, 1e3, 1e16, &o->storage_write_Bps)) ||
        (rc = jx_rate(&e, "storage_read_Bps", 0, 1e3, 1e16, &o->storage_read_Bps)) ||
        (rc = jx_seconds(&e, "restart_s", 0, 0, 1e7, &o->restart_s)) || (rc = jx_child(&e, "rates", 0, &k)) ||
        (rc = jx_child(&e, "stragglers", 0, &st)))
        return rc;
    if (k.obj && (rc = jx_check_keys(&k, RESILIENCE_COMPONENT_NAMES)))
        return rc;
    for (int c = 0; k.obj && c < RES_COMPONENTS; c++)
        if ((rc = jx_number(&k, RESILIENCE_COMPONENT_NAMES[c], 0, 0, 1e3, &o->rate_per_day[c])))
            return rc;
    if (st.obj && ((rc = jx_check_keys(&st, skeys)) || (rc = jx_number(&st, "cv", 1, 0, 1, &o->straggler_cv))))
        return rc;
    if (!o->failures && (jx_has(&e, "rates") || jx_has(&e, "checkpoint_interval_s") || jx_has(&e, "checkpoint_bytes") ||
                         jx_has(&e, "checkpoint_s") || jx_has(&e, "storage_write_Bps") ||
                         jx_has(&e, "storage_read_Bps") || jx_has(&e, "restart_s")))
        return tt_error_set(r->err, TT_EINPUT, "%s: $.resilience: \"failures\": false turns off what the other keys "
                            "set (rates, checkpoints, storage, restart); remove them or the \"failures\" key",
                            r->file);
    return TT_OK;
}
