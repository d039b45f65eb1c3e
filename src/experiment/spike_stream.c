/* Spikes streamed to disk during a run, one SONATA file per trial, and the
 * time-binned counts of named populations gathered on the way (xp_impl.h).
 *
 * Why a file per trial: every trial restarts at time 0, so the spikes of
 * several trials in one SONATA population would not be sorted by time and a
 * reader that follows the format (which has no notion of trials) would merge
 * them into one recording. One file per trial is a valid SONATA spike file
 * each, sorted by time, naming the connectome's node population. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/sonata.h"
#include "core/invariant.h"
#include "experiment/xp_impl.h"

#define BUFFER 16384

typedef struct trial_out {
    bl_sonata_writer *w;
    double *ts;
    uint64_t *ids;
    size_t n;
    int done;
    bl_sha256 *h; /* of this trial's (step, neuron) int32 pairs, every spike */
    unsigned char digest[32];
#ifndef NDEBUG
    uint64_t seen;       /* spikes handed so far (Debug: the stream's order is asserted) */
    int32_t last[2];     /* the last (step, neuron) */
#endif
} trial_out;

struct bl_xp_spikes {
    bl_record *rec;
    char dir[256], population[256];
    uint32_t trials;
    uint64_t steps, n_neurons, written;
    double dt_ms;
    uint8_t *keep;
    int write_files;
    trial_out *t;
    /* PSTH: each neuron's populations (CSR), and the counts. */
    size_t n_pops;
    uint64_t bin_steps, bins;
    int64_t *member_off;
    int32_t *member;
    int32_t *psth;
};

static bl_status open_trial(bl_xp_spikes *s, uint32_t trial, bl_error *err)
{
    trial_out *t = &s->t[trial];
    char name[320], path[4096];
    snprintf(name, sizeof name, "%s/trial-%04" PRIu32 ".h5", s->dir, trial);
    bl_status st = bl_record_path(s->rec, name, path, sizeof path, err);
    if (!st)
        st = bl_sonata_writer_open(path, s->population, &t->w, err);
    if (!st) {
        t->ts = malloc(BUFFER * sizeof *t->ts);
        t->ids = malloc(BUFFER * sizeof *t->ids);
        if (!t->ts || !t->ids)
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate a spike buffer for trial %" PRIu32, trial);
    }
    return st;
}

static bl_status flush_trial(bl_xp_spikes *s, trial_out *t, bl_error *err)
{
    bl_status st = bl_sonata_writer_append(t->w, t->n, t->ts, t->ids, err);
    t->n = 0;
    return st;
}

bl_status bl_xp_spikes_open(bl_record *rec, const char *dir, const char *population, uint32_t trials,
                            uint64_t steps, double dt_ms, uint64_t n_neurons, const uint8_t *keep,
                            const bl_xp_psth_spec *psth, int write_files, bl_xp_spikes **out, bl_error *err)
{
    *out = NULL;
    bl_xp_spikes *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a spike stream");
    s->rec = rec;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    snprintf(s->population, sizeof s->population, "%s", population);
    s->trials = trials;
    s->steps = steps;
    s->dt_ms = dt_ms;
    s->n_neurons = n_neurons;
    s->write_files = write_files;
    s->t = calloc(trials ? trials : 1, sizeof *s->t);
    bl_status st = s->t ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "cannot allocate %" PRIu32 " trial streams", trials);
    if (!st && keep) {
        if (!(s->keep = malloc(n_neurons ? n_neurons : 1)))
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the spike subset");
        else
            memcpy(s->keep, keep, n_neurons);
    }
    if (!st && psth && psth->n_pops) {
        s->n_pops = psth->n_pops;
        s->bin_steps = psth->bin_steps;
        s->bins = (steps + psth->bin_steps - 1) / psth->bin_steps;
        uint64_t cells = (uint64_t)trials * s->n_pops * s->bins, total = 0;
        for (size_t p = 0; p < s->n_pops; p++)
            total += psth->pops[p]->n_neurons;
        s->member_off = calloc(n_neurons + 1, sizeof *s->member_off);
        s->member = malloc((total ? total : 1) * sizeof *s->member);
        s->psth = calloc(cells ? cells : 1, sizeof *s->psth);
        if (!s->member_off || !s->member || !s->psth)
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate a PSTH of %" PRIu64 " bins", cells);
        for (size_t p = 0; !st && p < s->n_pops; p++)
            for (size_t a = 0; a < psth->pops[p]->n_neurons; a++)
                s->member_off[psth->pops[p]->neurons[a] + 1]++;
        for (uint64_t i = 0; !st && i < n_neurons; i++)
            s->member_off[i + 1] += s->member_off[i];
        int64_t *fill = st ? NULL : malloc((n_neurons ? n_neurons : 1) * sizeof *fill);
        if (!st && !fill)
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate PSTH membership");
        if (!st) {
            memcpy(fill, s->member_off, n_neurons * sizeof *fill);
            for (size_t p = 0; p < s->n_pops; p++)
                for (size_t a = 0; a < psth->pops[p]->n_neurons; a++)
                    s->member[fill[psth->pops[p]->neurons[a]]++] = (int32_t)p;
        }
        free(fill);
    }
    if (st) {
        bl_xp_spikes_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}

#ifndef NDEBUG
/* A trial's spikes arrive as one stream in (step, neuron) order, each neuron
 * in the network: the order the hash, the SONATA file (sorted by time) and
 * the PSTH bins are promised in. */
static int stream_sane(const trial_out *t, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                       uint64_t n_neurons, bl_error *why)
{
    int32_t prev[2] = {t->last[0], t->last[1]};
    for (size_t a = 0; a < n; a++) {
        if (neurons[a] < 0 || (uint64_t)neurons[a] >= n_neurons)
            return BL_BROKEN(why, "spike stream, trial %" PRIu32 ": neuron %d at step %" PRIu32 " is not in the "
                             "network (%" PRIu64 " neurons)", trial, neurons[a], step, n_neurons);
        if ((t->seen || a) && ((int32_t)step < prev[0] || ((int32_t)step == prev[0] && neurons[a] <= prev[1])))
            return BL_BROKEN(why, "spike stream, trial %" PRIu32 ": (step %" PRIu32 ", neuron %d) after (step %d, "
                             "neuron %d)", trial, step, neurons[a], prev[0], prev[1]);
        prev[0] = (int32_t)step;
        prev[1] = neurons[a];
    }
    return 1;
}
#endif

bl_status bl_xp_spikes_sink(void *user, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                            bl_error *err)
{
    bl_xp_spikes *s = user;
    if (trial >= s->trials)
        return bl_fail(err, BL_ERR_INTERNAL, "spikes of trial %" PRIu32 " beyond the %" PRIu32 " trials", trial,
                       s->trials);
    trial_out *t = &s->t[trial];
#ifndef NDEBUG
    BL_ASSERT_SANE(stream_sane, t, trial, step, neurons, n, s->n_neurons);
    if (n) {
        t->seen += n;
        t->last[0] = (int32_t)step;
        t->last[1] = neurons[n - 1];
    }
#endif
    if (s->psth) {
        int32_t *row = s->psth + (uint64_t)trial * s->n_pops * s->bins;
        uint64_t bin = step / s->bin_steps;
        for (size_t a = 0; a < n; a++)
            for (int64_t m = s->member_off[neurons[a]]; m < s->member_off[neurons[a] + 1]; m++)
                row[(uint64_t)s->member[m] * s->bins + bin]++;
    }
    if (!t->h && !(t->h = bl_sha256_create()))
        return bl_fail(err, BL_ERR_NOMEM, "cannot hash the spikes of trial %" PRIu32, trial);
    for (size_t a = 0; a < n; a++) {
        int32_t pair[2] = {(int32_t)step, neurons[a]};
        bl_sha256_update(t->h, pair, sizeof pair);
    }
    if (!s->write_files)
        return BL_OK;
    bl_status st = t->w ? BL_OK : open_trial(s, trial, err);
    double ts = (double)step * s->dt_ms; /* a spike at step s has time s * dt */
    for (size_t a = 0; !st && a < n; a++) {
        if (s->keep && !s->keep[neurons[a]])
            continue;
        t->ts[t->n] = ts;
        t->ids[t->n] = (uint64_t)neurons[a];
        if (++t->n == BUFFER)
            st = flush_trial(s, t, err);
    }
    return st;
}

static int hexval(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

bl_status bl_xp_spikes_end_trials(bl_xp_spikes *s, uint32_t first, uint32_t n, bl_error *err)
{
    bl_status st = BL_OK;
    for (uint32_t k = first; !st && k < first + n && k < s->trials; k++) {
        trial_out *t = &s->t[k];
        if (!t->h && !(t->h = bl_sha256_create()))
            return bl_fail(err, BL_ERR_NOMEM, "cannot hash the spikes of trial %" PRIu32, k);
        char hex[65];
        bl_sha256_finish(t->h, hex);
        t->h = NULL;
        for (int b = 0; b < 32; b++)
            t->digest[b] = (unsigned char)(hexval(hex[2 * b]) << 4 | hexval(hex[2 * b + 1]));
        if (!s->write_files) {
            t->done = 1;
            continue;
        }
        if (!t->w)
            st = open_trial(s, k, err);
        if (!st)
            st = flush_trial(s, t, err);
        if (!st) {
            s->written += bl_sonata_writer_n(t->w);
            st = bl_sonata_writer_close(t->w, err);
            t->w = NULL;
        }
        free(t->ts);
        free(t->ids);
        t->ts = NULL;
        t->ids = NULL;
        t->done = 1;
    }
    return st;
}

size_t bl_xp_spikes_psth_row(const bl_xp_spikes *s) { return s->psth ? s->n_pops * (size_t)s->bins : 0; }

const unsigned char *bl_xp_spikes_trial_digest(const bl_xp_spikes *s, uint32_t trial)
{
    return trial < s->trials && s->t[trial].done ? s->t[trial].digest : NULL;
}

/* A resumed run: the trial ran before; its file is on disk already and was
 * checked against the checkpoint (checkpoint.c). */
bl_status bl_xp_spikes_restore(bl_xp_spikes *s, uint32_t trial, const unsigned char digest[32],
                               const int32_t *psth_row, bl_error *err)
{
    if (trial >= s->trials || s->t[trial].h || s->t[trial].w || s->t[trial].done)
        return bl_fail(err, BL_ERR_INTERNAL, "trial %" PRIu32 " cannot be restored into the spike stream", trial);
    trial_out *t = &s->t[trial];
    memcpy(t->digest, digest, 32);
    if (s->psth)
        memcpy(s->psth + (uint64_t)trial * s->n_pops * s->bins, psth_row, bl_xp_spikes_psth_row(s) * sizeof *s->psth);
    t->done = 1;
    return BL_OK;
}

const int32_t *bl_xp_spikes_psth(const bl_xp_spikes *s, uint64_t *bins)
{
    *bins = s->bins;
    return s->psth;
}

uint64_t bl_xp_spikes_written(const bl_xp_spikes *s) { return s->written; }

void bl_xp_spikes_digest(const bl_xp_spikes *s, char hex[65])
{
    bl_sha256 *h = bl_sha256_create();
    if (!h) {
        hex[0] = '\0';
        return;
    }
    for (uint32_t k = 0; k < s->trials; k++)
        bl_sha256_update(h, s->t[k].digest, 32);
    bl_sha256_finish(h, hex);
}

void bl_xp_spikes_destroy(bl_xp_spikes *s)
{
    if (!s)
        return;
    for (uint32_t k = 0; s->t && k < s->trials; k++) {
        if (s->t[k].h) {
            char hex[65];
            bl_sha256_finish(s->t[k].h, hex); /* frees it */
        }
        bl_sonata_writer_abort(s->t[k].w);
        free(s->t[k].ts);
        free(s->t[k].ids);
    }
    free(s->t);
    free(s->keep);
    free(s->member_off);
    free(s->member);
    free(s->psth);
    free(s);
}
