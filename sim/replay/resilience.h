/* resilience.h: failures, checkpoints and stragglers as part of the time to
 * accuracy. Interruptions arrive as a Poisson process whose rate is the sum
 * of per-component rates times the job's component counts; a checkpoint
 * every tau seconds (Young 1974: tau = sqrt(2 C M)) bounds the work a failure
 * loses; goodput is the share of wall time that makes progress. Stragglers:
 * each device's compute drawn from a normal distribution, the synchronous
 * step waiting for the slowest of its group (the expected maximum of N).
 * The rates' sources are in sim/replay/README.md and in every run's
 * assumptions. */
#ifndef TT_RESILIENCE_H
#define TT_RESILIENCE_H

struct cost_rates; /* cost.h */

/* What interrupts a job, each scaled by how many of its unit the job holds:
 * GPU (the die, its SRAM, system processor, thermal interface, silent data
 * corruption) and HBM per accelerator; NIC and fabric link (cable,
 * transceiver, switch port) per NIC; host hardware, software (bugs, NCCL
 * timeouts, dependencies) and planned maintenance per node. */
typedef enum {
    RES_GPU, RES_HBM, RES_NIC, RES_LINK, RES_HOST, RES_SOFTWARE, RES_PLANNED, RES_COMPONENTS
} resilience_component;
extern const char *const RESILIENCE_COMPONENT_NAMES[]; /* "gpu", "hbm", ... (NULL-terminated) */

/* The calibrated rate of a component: interruptions per unit per day. */
double resilience_default_rate(resilience_component c);

/* Restart after an interruption, before the checkpoint is read back. */
#define RESILIENCE_RESTART_S 600.0
/* Storage per node when neither platform nor scenario gives the file system's. */
#define RESILIENCE_NODE_WRITE_BPS 1e9
#define RESILIENCE_NODE_READ_BPS 3.4e9

/* A scenario's "resilience" block. */
typedef struct resilience_options {
    int failures;                          /* report interruptions, checkpoints, goodput (default 1) */
    double rate_per_day[RES_COMPONENTS];   /* per unit per day (default resilience_default_rate) */
    double checkpoint_interval_s;          /* 0: Young's */
    double checkpoint_bytes;               /* 0: the model's state */
    double checkpoint_s;                   /* blocking time of one checkpoint (0: bytes / write rate) */
    double storage_write_Bps, storage_read_Bps; /* 0: the platform's, else per node */
    double restart_s;                      /* default RESILIENCE_RESTART_S */
    double straggler_cv;                   /* sd / mean of a device's compute time (0: none) */
} resilience_options;

void resilience_options_default(resilience_options *o);

/* What a point brings: the job's units, its state, the failure-free run. */
typedef struct resilience_inputs {
    double gpus, nodes, nics;
    double state_bytes;                    /* what a checkpoint saves (options' checkpoint_bytes wins) */
    double platform_write_Bps, platform_read_Bps; /* the platform's storage (0: not given) */
    double time_s, time_p10_s, time_p90_s; /* to accuracy, failure-free */
    double busy_share;                     /* of a step, the accelerators' busy time */
} resilience_inputs;

typedef struct resilience_result {
    int on;
    double per_day[RES_COMPONENTS];        /* the job's interruptions per day by component */
    double interruptions_per_day, mtbf_s;
    double checkpoint_bytes, checkpoint_write_s, checkpoint_read_s, checkpoint_interval_s;
    double write_Bps, read_Bps, restart_s;
    double goodput, goodput_p10, goodput_p90; /* p10 the worse run */
    double interruptions;                  /* expected over the run */
    double time_s, time_p10_s, time_p90_s; /* to accuracy with failures (inf: never) */
    /* the wall time beyond the failure-free run's: its rent, energy at the meter, what it costs an owner */
    double lost_usd, lost_energy_j, lost_owned_usd;
    double straggler_s;                    /* added to the step (resilience_straggler_s) */
    long straggler_group;                  /* devices the step waits for */
} resilience_result;

/* Young's interval: sqrt(2 C M). */
double resilience_interval_s(double checkpoint_s, double mtbf_s);

/* Share of wall time making progress with a checkpoint of checkpoint_s every
 * interval_s of work and down_s lost per interruption besides the work since
 * the last checkpoint (half an interval and a checkpoint on average); 0 when
 * interruptions outpace progress. */
double resilience_goodput(double mtbf_s, double checkpoint_s, double interval_s, double down_s);

/* E[max of n independent standard normals]; 0 for n <= 1. */
double resilience_normal_max(long n);

/* The synchronous step's wait for its slowest of `group` devices whose
 * compute_s has the options' spread: seconds added to the step. */
double resilience_straggler_s(const resilience_options *o, double compute_s, long group);

/* Fills out (out->on 0 when o->failures is 0); the caller sets the straggler fields after. */
void resilience_of(const resilience_options *o, const resilience_inputs *in, const struct cost_rates *rates,
                   resilience_result *out);

/* The run's resilience assumptions, "name = value (why)", at most max;
 * storage_why: the platform's storage (NULL: none given). */
int resilience_notes(const resilience_options *o, const resilience_result *r, const char *storage_why,
                     char (*notes)[640], int max);

#endif
