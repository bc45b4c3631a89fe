/* ttasim model list | show NAME [--json]: the model zoo, counted from the
 * shapes the trainer executes. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/units.h"
#include "sim/cli/cli.h"
#include "sim/cli/model_cli.h"
#include "trainer/model.h"
#include "trainer/trace.h"

extern const cli_command cmd_model;

static void model_help(FILE *out)
{
    fprintf(out,
            "ttasim model list [--json]\n"
            "ttasim model show NAME [--json] [model options]\n\n"
            "Lists the zoo, or shows one model: parameters, parameter bytes (fp32),\n"
            "forward and backward FLOPs per sample (a multiply-add is 2) and a per-layer\n"
            "table (parameters, forward FLOPs, activation bytes kept per sample).\n\n"
            "  --json      print one JSON document on stdout\n"
            "  --help      this text\n\n");
    model_cli_help(out);
}

/* per sample; decoders add their GEMMs (model_gemm) and MoE layers their routing */
static json_t *layer_json(const model_layer *L)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:f, s:f, s:f}", "name", L->name, "class",
                          opclass_name(L->cls), "params", (json_int_t)L->params, "forward_flops",
                          L->fwd_flops, "backward_flops", L->bwd_flops, "activation_bytes",
                          4 * L->act_elems);
    if (L->experts > 0)
        json_object_update_new(o, json_pack("{s:i, s:i, s:f}", "experts", L->experts, "top_k",
                                            L->top_k, "tokens_routed", L->routed));
    if (L->ngemms > 0)
        json_object_set_new(o, "gemms", trace_gemms_json(L, 1));
    return o;
}

static int show(const char *name, const model_opts *o, int as_json)
{
    tt_error err = {0};
    model *m;
    int rc = model_create(&m, name, o, &err);
    if (rc)
        return cli_report_error(rc, err.msg);
    const param_set *ps = model_params(m);
    double fwd = model_forward_flops_per_sample(m), bwd = model_backward_flops_per_sample(m);
    if (as_json) {
        json_t *layers = json_array();
        for (int i = 0; i < model_nlayers(m); i++)
            json_array_append_new(layers, layer_json(model_layer_at(m, i)));
        json_t *doc = json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:i, s:o}", "model", name,
                                "description", model_describe(name), "params",
                                (json_int_t)ps->numel, "param_bytes", (json_int_t)(4 * ps->numel),
                                "forward_flops_per_sample", fwd, "backward_flops_per_sample", bwd,
                                "activation_bytes_per_sample",
                                model_activation_bytes_per_sample(m),
                                "param_tensors", ps->nviews, "layers", layers);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        printf("model                %s: %s\n", name, model_describe(name));
        printf("parameters           %zu in %d tensors (%.1f MB fp32)\n", ps->numel, ps->nviews,
               4e-6 * (double)ps->numel);
        printf("forward FLOPs        %.4g per sample\n", fwd);
        printf("backward FLOPs       %.4g per sample\n", bwd);
        char act[32];
        printf("activations          %sB per sample (fp32, kept for backward)\n\n",
               units_format_bytes(model_activation_bytes_per_sample(m), act, sizeof act));
        printf("%-4s %-48s %-11s %12s %14s %14s\n", "#", "layer", "class", "params",
               "fwd FLOPs", "act bytes");
        for (int i = 0; i < model_nlayers(m); i++) {
            const model_layer *L = model_layer_at(m, i);
            printf("%-4d %-48s %-11s %12.0f %14.0f %14.0f\n", i, L->name, opclass_name(L->cls), L->params,
                   L->fwd_flops, 4 * L->act_elems);
        }
    }
    model_free(m);
    return TT_OK;
}

static int list(int as_json)
{
    json_t *arr = json_array();
    int w = (int)strlen("model"); /* the name column fits the longest name */
    for (int i = 0; model_zoo_name(i); i++)
        w = (int)strlen(model_zoo_name(i)) > w ? (int)strlen(model_zoo_name(i)) : w;
    if (!as_json)
        printf("%-*s %16s %16s  %s\n", w, "model", "params", "fwd FLOPs/sample", "description");
    model_opts o;
    model_opts_default(&o);
    for (int i = 0; model_zoo_name(i); i++) {
        tt_error err = {0};
        model *m;
        int rc = model_create(&m, model_zoo_name(i), &o, &err);
        if (rc) {
            json_decref(arr);
            return cli_report_error(rc, err.msg);
        }
        size_t n = model_params(m)->numel;
        double f = model_forward_flops_per_sample(m);
        if (as_json)
            json_array_append_new(arr, json_pack("{s:s, s:I, s:f, s:s}", "name", model_zoo_name(i),
                                                 "params", (json_int_t)n,
                                                 "forward_flops_per_sample", f, "description",
                                                 model_describe(model_zoo_name(i))));
        else
            printf("%-*s %16zu %16.4g  %s\n", w, model_zoo_name(i), n, f,
                   model_describe(model_zoo_name(i)));
        model_free(m);
    }
    if (as_json) {
        json_t *doc = json_pack("{s:o}", "models", arr);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(arr);
    }
    return TT_OK;
}

static int model_main(int argc, char **argv)
{
    struct option opts[MODEL_CLI_COUNT + 3] = {{"json", no_argument, NULL, 'j'},
                                               {"help", no_argument, NULL, 'h'}};
    model_cli_options(opts + 2);
    model_opts o;
    model_opts_default(&o);
    int as_json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'j') {
            as_json = 1;
        } else if (c == 'h') {
            model_help(stdout);
            return TT_OK;
        } else if (c >= MODEL_CLI_BASE) {
            tt_error err = {0};
            if (model_cli_apply(c, optarg, &o, &err))
                return cli_usage_error(&cmd_model, "%s", err.msg);
        } else {
            return cli_bad_option(&cmd_model, argv, optind, optopt, opts, c == ':');
        }
    }
    if (optind == argc)
        return cli_usage_error(&cmd_model, "missing 'list' or 'show NAME'");
    if (strcmp(argv[optind], "list") == 0 && optind == argc - 1)
        return list(as_json);
    if (strcmp(argv[optind], "show") == 0 && optind == argc - 2)
        return show(argv[optind + 1], &o, as_json);
    if (strcmp(argv[optind], "show") == 0)
        return cli_usage_error(&cmd_model, "'show' takes one model name ('ttasim model list')");
    return cli_usage_error(&cmd_model, "unknown subcommand '%s' (expected 'list' or 'show')",
                           argv[optind]);
}

const cli_command cmd_model = {
    "model", "the model zoo: layers, parameters, FLOPs",
    "model list [--json] | show NAME [--json]" MODEL_CLI_USAGE, model_main, model_help,
};
