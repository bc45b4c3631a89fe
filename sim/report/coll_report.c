/* A collective measurement as JSON and text (coll_report.h). */
#include "sim/report/coll_report.h"

json_t *coll_report_json(const scenario *sc, const coll_scenario_result *r)
{
    json_t *coll = json_pack("{s:s, s:s, s:s, s:i, s:f, s:f, s:f, s:f}", "op", r->op, "requested_algo",
                             r->requested, "algo", r->algo, "ranks", r->ranks, "bytes", r->bytes, "time_s",
                             r->time_s, "algbw_Bps", r->algbw_Bps, "busbw_Bps", r->busbw_Bps);
    json_object_set_new(coll, "nccl", *r->nccl ? json_string(r->nccl) : json_null());
    json_t *doc = json_pack("{s:s, s:s, s:s, s:o}", "scenario", sc->name, "platform", r->platform, "network",
                            sc->network ? "calibrated" : "ideal", "collective", coll);
    if (sc->ref_busbw_Bps > 0 || sc->ref_op_time_s > 0) {
        json_t *ref = json_object();
        if (sc->ref_busbw_Bps > 0) {
            json_object_set_new(ref, "busbw_Bps", json_real(sc->ref_busbw_Bps));
            json_object_set_new(ref, "busbw_ratio", json_real(r->busbw_Bps / sc->ref_busbw_Bps));
        }
        if (sc->ref_op_time_s > 0) {
            json_object_set_new(ref, "op_time_s", json_real(sc->ref_op_time_s));
            json_object_set_new(ref, "op_time_ratio", json_real(r->time_s / sc->ref_op_time_s));
        }
        json_object_set_new(ref, "source", sc->ref_source ? json_string(sc->ref_source) : json_null());
        json_object_set_new(doc, "reference", ref);
    }
    return doc;
}

void coll_report_text(FILE *out, const scenario *sc, const coll_scenario_result *r)
{
    fprintf(out, "scenario        %s\nplatform        %s, %d ranks, network %s\n", sc->name, r->platform, r->ranks,
            sc->network ? "calibrated" : "ideal");
    fprintf(out, "collective      %s of %.6g bytes, %s", r->op, r->bytes, r->requested);
    if (*r->nccl)
        fprintf(out, " -> NCCL's %s, run as %s\n", r->nccl, r->algo);
    else
        fprintf(out, " -> %s\n", r->algo);
    fprintf(out, "time            %.6g us\nalgbw           %.4g GB/s\nbusbw           %.4g GB/s\n", r->time_s * 1e6,
            r->algbw_Bps / 1e9, r->busbw_Bps / 1e9);
    if (sc->ref_busbw_Bps > 0)
        fprintf(out, "published busbw %.4g GB/s (predicted / published %.3f)\n", sc->ref_busbw_Bps / 1e9,
                r->busbw_Bps / sc->ref_busbw_Bps);
    if (sc->ref_op_time_s > 0)
        fprintf(out, "published time  %.6g us (predicted / published %.3f)\n", sc->ref_op_time_s * 1e6,
                r->time_s / sc->ref_op_time_s);
    if (sc->ref_source)
        fprintf(out, "source          %s\n", sc->ref_source);
}
