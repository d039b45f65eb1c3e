/* Plans: load (read, parse, check the header, choose the operation's row
 * among the rows given, let the row load its section, render and hash the
 * resolved form), accessors, and the stimulus a plan describes. The header
 * keys are common to every operation:
 *     format = "brainlesslab-plan"    format_version = 4
 *     id = "name"                     operation = "connectome"
 *     description = "..."             (optional)
 * Which operations exist is the operations table's business
 * (src/experiment/operations.c): nothing here names one. */
#include "plan/plan_impl.h"
#include "brainlesslab/eqmodel.h"
#include "plan/plan_op.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "core/file.h"

static bl_status read_file(const char *path, char **text, size_t *len, bl_error *err)
{
    /* bl_read_small refuses FIFOs and devices (which would block or never
     * end) and anything over the plan size limit before reading it. */
    bl_status st = bl_read_small(path, BL_TOML_MAX_BYTES, text, len, err);
    if (st == BL_ERR_FORMAT)
        return bl_fail(err, BL_ERR_FORMAT, "%s: larger than the %zu-byte limit for a plan", path,
                       BL_TOML_MAX_BYTES);
    if (st)
        return st;
    /* toml++ would report a byte-order mark as a confusing syntax error at
     * line 1; say what it is. */
    if (*len >= 3 && !memcmp(*text, "\xEF\xBB\xBF", 3)) {
        free(*text);
        *text = NULL;
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: starts with a UTF-8 byte-order mark (BOM, bytes EF BB BF); save the plan "
                       "as UTF-8 without a BOM", path);
    }
    return BL_OK;
}

/* The row named `operation` among rows[0..n) (the first of a name wins). */
static const bl_operation *find_row(const bl_operation *const *rows, size_t n, const char *operation)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i] && rows[i]->name && !strcmp(rows[i]->name, operation))
            return rows[i];
    return NULL;
}

static bl_status unknown_operation(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *operation,
                                   const bl_operation *const *rows, size_t n)
{
    char shown[160], known[1024];
    size_t o = 0;
    known[0] = '\0';
    for (size_t i = 0; i < n && o < sizeof known; i++) {
        if (!rows[i] || !rows[i]->name || find_row(rows, i, rows[i]->name))
            continue; /* shadowed by an earlier row of that name */
        int w = snprintf(known + o, sizeof known - o, "%s%s", o ? ", " : "", rows[i]->name);
        o = w > 0 ? o + (size_t)w : o;
    }
    bl_pk_printable(shown, sizeof shown, operation, strlen(operation));
    return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(root, "operation"), "operation",
                      "unknown operation \"%s\" (supported: %s)", shown, known);
}

static bl_status read_header(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan,
                             const bl_operation *const *rows, size_t n_rows)
{
    const char *format, *id, *operation, *description = "";
    int64_t version;
    char shown[160];
    bl_status st = bl_pk_string(ctx, root, "", "format", 1, &format, NULL);
    if (st)
        return st;
    if (strcmp(format, BL_PLAN_FORMAT)) {
        bl_pk_printable(shown, sizeof shown, format, strlen(format));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(root, "format"), "format",
                          "\"%s\" is not a BrainlessLab plan (expected \"%s\")", shown, BL_PLAN_FORMAT);
    }
    if ((st = bl_pk_int(ctx, root, "", "format_version", 1, INT64_MIN, INT64_MAX, &version, NULL)))
        return st;
    if (version != BL_PLAN_FORMAT_VERSION)
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(root, "format_version"),
                          "format_version", "version %lld is not supported (this build reads version %d)",
                          (long long)version, BL_PLAN_FORMAT_VERSION);
    if ((st = bl_pk_string(ctx, root, "", "id", 1, &id, NULL)))
        return st;
    if (!bl_pk_valid_name(id, strlen(id))) {
        bl_pk_printable(shown, sizeof shown, id, strlen(id));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(root, "id"), "id",
                          "\"%s\" is not a valid id (1..%d characters of A-Z a-z 0-9 . _ -, not starting with . or -)", shown,
                          BL_PLAN_MAX_NAME);
    }
    if ((st = bl_pk_string(ctx, root, "", "operation", 1, &operation, NULL)) ||
        (st = bl_pk_string(ctx, root, "", "description", 0, &description, NULL)))
        return st;
    plan->op = find_row(rows, n_rows, operation);
    if (!plan->op)
        return unknown_operation(ctx, root, operation, rows, n_rows);
    plan->id = bl_pk_strdup(id);
    plan->operation = bl_pk_strdup(operation);
    plan->description = bl_pk_strdup(description);
    if (!plan->id || !plan->operation || !plan->description)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy the plan header");
    return BL_OK;
}

bl_status bl_pk_add_input(bl_plan *plan, const char *role, const char *path, const char *sha256,
                          uint64_t bytes, bl_error *err)
{
    size_t n = plan->n_inputs;
    bl_plan_input *inputs = realloc(plan->inputs, (n + 1) * sizeof *inputs);
    if (inputs)
        plan->inputs = inputs;
    char **strings = realloc(plan->input_strings, 2 * (n + 1) * sizeof *strings);
    if (strings)
        plan->input_strings = strings;
    if (!inputs || !strings)
        return bl_fail(err, BL_ERR_NOMEM, "cannot list the plan's inputs");
    strings[2 * n] = bl_pk_strdup(path);
    strings[2 * n + 1] = bl_pk_strdup(sha256);
    plan->n_inputs++; /* counted at once, so that destroy frees both strings */
    if (!strings[2 * n] || !strings[2 * n + 1])
        return bl_fail(err, BL_ERR_NOMEM, "cannot list the plan's inputs");
    inputs[n] = (bl_plan_input){.role = role, .path = strings[2 * n], .sha256 = strings[2 * n + 1],
                                .bytes = bytes};
    return BL_OK;
}

static bl_status load(const char *path, bl_plan *plan, const bl_operation *const *rows, size_t n_rows,
                      bl_error *err)
{
    char *text = NULL;
    size_t len = 0;
    bl_status st = read_file(path, &text, &len, err);
    if (st)
        return st;
    /* The plan hash input is the bytes parsed, read once. */
    char sha[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(text, len, sha);
    plan->path = realpath(path, NULL);
    if (!plan->path)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot resolve the path: %s", path, strerror(errno));
    if (!st)
        st = bl_pk_add_input(plan, "plan", plan->path, sha, len, err);
    bl_toml_doc *doc = NULL;
    if (!st)
        st = bl_toml_parse_text(text, len, path, &doc, err);
    /* Kept: the record's plan.toml is these bytes, never a re-read (issue 26). */
    plan->text = text;
    plan->text_len = len;
    if (st)
        return st;

    bl_pk_ctx ctx = {path, err};
    const bl_toml_node *root = bl_toml_root(doc);
    /* The plan's directory: realpath gave an absolute path, so a '/' exists. */
    char *dir = bl_pk_strdup(plan->path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (!slash)
        st = bl_fail(err, BL_ERR_NOMEM, "cannot copy a path");
    else
        slash[slash == dir ? 1 : 0] = '\0';
    if (!st && !(st = read_header(&ctx, root, plan, rows, n_rows)))
        st = plan->op->load(plan->op, &ctx, root, dir, plan);
    free(dir);
    bl_toml_destroy(doc);
    if (st)
        return st;

    plan->json = plan->op->render(plan, 0, 1);
    if (!plan->json)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot render the resolved plan", path);
    bl_sha256_buffer(plan->json, strlen(plan->json), plan->hash);
    return BL_OK;
}

bl_status bl_pk_load(const char *path, int part, int parts, const bl_operation *const *rows, size_t n_rows,
                     bl_plan **out, bl_error *err)
{
    *out = NULL;
    if (parts < 1 || part < 0 || part >= parts)
        return bl_fail(err, BL_ERR_INVALID, "%s: part %d of %d does not exist", path, part, parts);
    bl_plan *plan = calloc(1, sizeof *plan);
    if (!plan)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a plan");
    plan->part = part;
    plan->parts = parts;
    bl_status st = load(path, plan, rows, n_rows, err);
    if (st) {
        bl_plan_destroy(plan);
        return st;
    }
    *out = plan;
    return BL_OK;
}

static void free_populations(bl_pk_population *pops, size_t n)
{
    for (size_t i = 0; pops && i < n; i++) {
        free(pops[i].name);
        free(pops[i].selector);
        free(pops[i].neurons);
        free(pops[i].segments);
        free(pops[i].schedule);
        free(pops[i].current_variable);
        free(pops[i].current_values);
        free(pops[i].current_steps);
    }
    free(pops);
}

void bl_plan_destroy(bl_plan *plan)
{
    if (!plan)
        return;
    free(plan->path);
    free(plan->text);
    free(plan->id);
    free(plan->operation);
    free(plan->description);
    bl_connectome_destroy(plan->connectome);
    free(plan->connectome_path);
    free(plan->preset);
    bl_eq_model_destroy(plan->eq);
    free(plan->eq_json);
    free(plan->psth_pops);
    free_populations(plan->named, plan->n_named);
    free_populations(plan->stimuli, plan->n_stimuli);
    free_populations(plan->silences, plan->n_silences);
    free(plan->silenced);
    free(plan->backend);
    for (size_t i = 0; i < 2 * plan->n_inputs; i++)
        free(plan->input_strings[i]);
    free(plan->input_strings);
    free(plan->inputs);
    free(plan->json);
    if (plan->op && plan->op->free_spec)
        plan->op->free_spec(plan);
    free(plan);
}

const char *bl_plan_id(const bl_plan *plan) { return plan->id; }
const char *bl_plan_operation(const bl_plan *plan) { return plan->operation; }
const char *bl_plan_description(const bl_plan *plan) { return plan->description; }
const char *bl_plan_path(const bl_plan *plan) { return plan->path; }
const char *bl_plan_text(const bl_plan *plan, size_t *len)
{
    if (len)
        *len = plan->text_len;
    return plan->text;
}
const char *bl_plan_resolved_json(const bl_plan *plan) { return plan->json; }
const char *bl_plan_hash(const bl_plan *plan) { return plan->hash; }
const bl_res_plan *bl_plan_reservoir(const bl_plan *plan)
{
    return plan->op->flags & BL_OP_SPEC_RESERVOIR ? plan->spec : NULL;
}
bl_res_plan *bl_plan_reservoir_mut(bl_plan *plan)
{
    return plan->op->flags & BL_OP_SPEC_RESERVOIR ? plan->spec : NULL;
}
const bl_operation *bl_pk_row(const bl_plan *plan) { return plan->op; }
void *bl_pk_spec(const bl_plan *plan) { return plan->spec; }
static const bl_pk_screen *screen_of(const bl_plan *plan)
{
    return plan->op->flags & BL_OP_SPEC_SCREEN ? plan->spec : NULL;
}
size_t bl_plan_n_axes(const bl_plan *plan)
{
    const bl_pk_screen *sc = screen_of(plan);
    return sc ? sc->n_axes : 0;
}
const bl_plan_axis *bl_plan_axis_at(const bl_plan *plan, size_t i)
{
    const bl_pk_screen *sc = screen_of(plan);
    return sc && i < sc->n_axes ? &sc->axes[i] : NULL;
}
const bl_plan_audit *bl_plan_audit_spec(const bl_plan *plan)
{
    return plan->op->flags & BL_OP_SPEC_AUDIT ? &((const bl_pk_audit *)plan->spec)->view : NULL;
}

char *bl_plan_render(const bl_plan *plan, int full)
{
    return plan->op->render(plan, 1, full);
}

const bl_connectome *bl_plan_connectome(const bl_plan *plan) { return plan->connectome; }
const char *bl_plan_connectome_path(const bl_plan *plan) { return plan->connectome_path; }
const char *bl_plan_connectome_sha256(const bl_plan *plan) { return plan->manifest_sha256; }
const bl_lif_params *bl_plan_lif_params(const bl_plan *plan) { return &plan->params; }

size_t bl_plan_n_populations(const bl_plan *plan) { return plan->n_stimuli; }

const bl_plan_population *bl_plan_population_at(const bl_plan *plan, size_t i)
{
    return i < plan->n_stimuli ? &plan->stimuli[i].view : NULL;
}

size_t bl_plan_n_named_populations(const bl_plan *plan) { return plan->n_named; }

const bl_plan_population *bl_plan_named_population_at(const bl_plan *plan, size_t i)
{
    return i < plan->n_named ? &plan->named[i].view : NULL;
}

const bl_plan_population *bl_plan_find_population(const bl_plan *plan, const char *name)
{
    for (size_t i = 0; name && i < plan->n_named; i++)
        if (!strcmp(plan->named[i].name, name))
            return &plan->named[i].view;
    return NULL;
}

size_t bl_plan_n_silences(const bl_plan *plan) { return plan->n_silences; }

const bl_plan_population *bl_plan_silence_at(const bl_plan *plan, size_t i)
{
    return i < plan->n_silences ? &plan->silences[i].view : NULL;
}

const int32_t *bl_plan_silenced(const bl_plan *plan, size_t *n)
{
    *n = plan->n_silenced;
    return plan->silenced;
}

uint32_t bl_plan_trials(const bl_plan *plan) { return plan->trials; }
double bl_plan_duration_ms(const bl_plan *plan) { return plan->duration_ms; }
uint64_t bl_plan_steps(const bl_plan *plan) { return plan->steps; }
uint64_t bl_plan_seed(const bl_plan *plan) { return plan->seed; }
const char *bl_plan_backend(const bl_plan *plan) { return plan->backend; }
int bl_plan_threads(const bl_plan *plan) { return plan->threads; }
int bl_plan_output_spikes(const bl_plan *plan) { return plan->out_spikes; }
int bl_plan_output_counts(const bl_plan *plan) { return plan->out_counts; }
int bl_plan_output_state(const bl_plan *plan) { return plan->out_state; }
int bl_plan_output_propagation(const bl_plan *plan) { return plan->out_propagation; }
int bl_plan_top_responders(const bl_plan *plan) { return plan->top_responders; }
const bl_plan_population *bl_plan_spikes_subset(const bl_plan *plan) { return plan->spikes_subset; }
const bl_plan_population *bl_plan_probes(const bl_plan *plan, uint64_t *every_steps)
{
    *every_steps = plan->probe_every_steps;
    return plan->probe_pop;
}

size_t bl_plan_psth(const bl_plan *plan, const bl_plan_population *const **pops, uint64_t *bin_steps)
{
    *pops = plan->psth_pops;
    *bin_steps = plan->psth_bin_steps;
    return plan->n_psth_pops;
}
size_t bl_plan_n_inputs(const bl_plan *plan) { return plan->n_inputs; }

const bl_plan_input *bl_plan_input_at(const bl_plan *plan, size_t i)
{
    return i < plan->n_inputs ? &plan->inputs[i] : NULL;
}

bl_status bl_plan_add_stimulus(const bl_plan *plan, const bl_plan_population *p, double rate_hz, bl_stimulus *s,
                               bl_error *err)
{
    size_t first = bl_stimulus_n_populations(s);
    bl_status st = BL_OK;
    if (p->current) /* current injection: no Poisson population, no stream index */
        return bl_stimulus_add_current(s, p->neurons, p->n_neurons, p->current, err);
    if (p->n_schedule) {
        st = p->force ? bl_stimulus_add_forced_events(s, p->schedule, p->n_schedule, err)
                      : bl_stimulus_add_events(s, p->schedule, p->n_schedule, err);
        return st;
    }
    if (p->n_segments) {
        for (size_t k = 0; !st && k < p->n_segments; k++) {
            const double *g = p->segments + 3 * k;
            st = bl_stimulus_add_poisson(s, p->neurons, p->n_neurons, isnan(rate_hz) ? g[2] : rate_hz, g[0],
                                         g[1] >= plan->duration_ms ? -1.0 : g[1], err);
        }
    } else {
        /* A window that reaches the end of the trial is passed as "to the end"
         * (-1), so that no rounding of stop_ms can cut the last step. */
        double stop = p->stop_ms >= plan->duration_ms ? -1.0 : p->stop_ms;
        st = bl_stimulus_add_poisson(s, p->neurons, p->n_neurons, isnan(rate_hz) ? p->rate_hz : rate_hz, p->start_ms,
                                     stop, err);
    }
    for (size_t q = first; !st && p->force && q < bl_stimulus_n_populations(s); q++)
        st = bl_stimulus_set_force(s, q, 1, err);
    return st;
}

bl_status bl_plan_build_stimulus(const bl_plan *plan, bl_stimulus **out, bl_error *err)
{
    bl_stimulus *s;
    bl_status st = bl_stimulus_create(&s, err);
    *out = NULL;
    if (st)
        return st;
    for (size_t i = 0; i < plan->n_stimuli && !st; i++) {
        const bl_plan_population *p = &plan->stimuli[i].view;
        st = bl_plan_add_stimulus(plan, p, NAN, s, err);
        if (st)
            bl_fail_context(err, "%s: stimulus[%zu] (%s)", plan->path, i, p->name);
    }
    if (st) {
        bl_stimulus_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}
