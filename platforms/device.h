/* device.h: the hardware inside a node as data (platforms/devices.json and a
 * platform file's own "devices"): accelerators, CPU sockets, NICs, switches.
 * Efficiencies are the roofline's per-op-class fractions of peak, calibrated
 * once per device from public throughput figures (see devices.json). */
#ifndef TT_DEVICE_H
#define TT_DEVICE_H

#include <jansson.h>

#include "common/error.h"
#include "common/vocab.h"

typedef enum { DEVICE_ACCELERATOR, DEVICE_CPU, DEVICE_NIC, DEVICE_SWITCH, DEVICE_KIND_COUNT } device_kind;

enum { COLL_LIB_NONE, COLL_LIB_NCCL, COLL_LIB_RCCL };
extern const char *const COLL_LIB_NAMES[]; /* "none", "nccl", "rccl" */
extern const char *const DEVICE_KIND_NAMES[];    /* "accelerator", "cpu", "nic", "switch" */

typedef struct device_info {
    char name[48];
    char description[160];
    device_kind kind;
    double peak_flops[DTYPE_COUNT]; /* dense; 0 = the dtype is not supported */
    double mem_bytes, mem_Bps;      /* device memory (accelerator HBM, CPU DDR) */
    double tdp_w, idle_w;
    double price_usd_per_h;         /* 0 = unknown */
    int cores;                      /* CPU sockets */
    double thread_mem_Bps;          /* CPU sockets: what one thread streams (a single-threaded sum); 0 = unknown */
    double tcp_message_s;           /* CPU sockets: the kernel TCP stack's one-way cost of a message; 0 = unknown */
    double tcp_rx_Bps;              /* CPU sockets: what a TCP transport's one receive thread reads; 0 = unknown */
    double bandwidth_Bps;           /* NICs: per direction */
    /* Fraction of peak_flops[dtype] a layer of the class reaches when compute
     * bound; mem_efficiency is the fraction of mem_Bps when memory bound. */
    double efficiency[DTYPE_COUNT][OPCLASS_COUNT];
    double mem_efficiency;
    double compute_capability; /* NVIDIA GPUs (7.0 = Volta): NCCL's tuning by generation; 0 = not a CUDA GPU */
    /* Streaming multiprocessors (compute units) and the clock its peaks are quoted at: a kernel's
     * tiles fill the units in waves, and a kernel its loads bound issues at a rate per unit-cycle
     * (the transfer rule, sim/replay/calibration.c); 0 = unknown. */
    int compute_units;
    double clock_hz;
    /* The GPU's collective library: COLL_LIB_NCCL where compute_capability is
     * given, COLL_LIB_RCCL for AMD Instinct GPUs ("collective_library":
     * "rccl"): RCCL is NCCL's fork and keeps its ring and tree algorithms and
     * its tuner; without either a platform runs ttasim's own schedules. */
    int collective_library;
    /* A direct GPU-to-GPU link's rate as the library's topology counts it, per
     * direction (RCCL's ncclTopoXGMISpeed); 0 = NCCL's NVLink figure by generation. */
    double library_link_Bps;
    int switch_reduction;      /* switches: reduce in the switch (NVLink SHARP, NVSwitch gen3) */
    char vendor[16];           /* CPUs: "amd", "intel" (NCCL's network overhead differs) */
    double nccl_socket_Bps;    /* CPUs: the link between two sockets as NCCL's topology rates it (0 = unknown) */
    double p2p_write_Bps;      /* CPUs: what the root complex forwards of one PCIe device's DMA writes into another's
                                  memory (a NIC's GPU Direct RDMA receive through a host bridge); 0 = unknown, no limit */
    /* The per-op model (sim/replay/device_model.h): work per kernel at which a
     * kernel reaches half its class efficiency (0: every kernel at full
     * efficiency), host time to issue one kernel, and whether norm and
     * elementwise ops fuse into their producer. Fitted by 'ttasim calibrate'
     * into platforms/calibration/calibrated.json, which overrides devices.json. */
    double half_work_flops[DTYPE_COUNT];
    /* GEMMs: the reduction depth (K) at which a matrix product reaches half
     * its class efficiency, each output tile's fixed prologue and epilogue
     * over its K loop (0: not modelled, every depth at full efficiency). */
    double gemm_half_depth;
    double dispatch_s;
    int fusion;
    /* Backward-pass kernels (cuDNN dgrad and wgrad, GEMM transposes) reach
     * efficiency x this of peak: unitless, 1 = as the forward (the default). */
    double backward_efficiency[DTYPE_COUNT][OPCLASS_COUNT];
    /* fp8 runs' attention has parameters of its own (efficiency[DTYPE_FP8]
     * [OPCLASS_ATTENTION], at bf16's peak), fitted on fp8 points: Transformer
     * Engine's fused attention kernels, not bf16 runs' (0: bf16's). */
    int fp8_attention;
    /* Buying and powering it (the "purchase" block; 0 = not given). An
     * accelerator's draw is tdp_w busy, idle_w waiting; another device draws
     * power_w while the cluster runs. A NIC (or an accelerator on the fabric
     * itself) prices the fabric: a switch port and a cable per link. */
    int has_purchase;
    double price_usd, power_w;
    double switch_port_usd, switch_port_w, cable_usd, cable_w;
    int switch_radix; /* ports of one fabric switch */
    char purchase_why[400];
} device_info;

/* A set of device types by name. */
typedef struct device_table {
    device_info *dev;
    int n;
    json_t *assumptions; /* device name -> array of {"name", "value", "why"} */
    json_t *json;        /* device name -> its definition as read (a partial one merges over it) */
} device_table;

/* Adds every entry of the JSON object `devices` (keys are names) read from
 * file at JSON path `path`; a name already present is replaced, or updated
 * when the entry has no "kind" (a partial definition: {"price_usd": 2e4}). */
int device_table_add_json(device_table *t, const char *file, json_t *devices, const char *path,
                          tt_error *err);
/* Loads the shared library platforms/devices.json (found with datapath),
 * then the fitted parameters of platforms/calibration/calibrated.json over it. */
int device_table_load_library(device_table *t, tt_error *err);
/* platforms/devices.json alone: what 'ttasim calibrate' fits from. */
int device_table_load_uncalibrated(device_table *t, tt_error *err);
/* Applies a fitted-parameters document ('ttasim calibrate', format
 * "ttasim-calibrated") read from file to the devices it names. */
int device_table_apply_calibrated(device_table *t, const char *file, json_t *doc, tt_error *err);
const device_info *device_table_find(const device_table *t, const char *name);
/* Adds (or replaces) one device; pointers into the table move when it grows. */
int device_table_put(device_table *t, const device_info *d, tt_error *err);
void device_table_free(device_table *t);

/* The device's named assumptions (an array, NULL when it has none). */
json_t *device_table_assumptions(const device_table *t, const char *name);

/* The roofline efficiency for a class and dtype. */
double device_efficiency(const device_info *d, tt_dtype dt, op_class c);

/* The dtype whose kernels, peak and fitted parameters a precision's math
 * uses: bf16 where the tensor cores run it at fp16's peak (A100, H100: one
 * datapath, one calibration) is fp16; a dtype slower than fp32 (P40 fp16,
 * none at all) computes in fp32 on low-precision data. */
tt_dtype device_math_dtype(const device_info *d, tt_dtype dt);

/* The work per kernel at which a kernel of the dtype reaches half its
 * efficiency (the per-op model's half_work_flops). fp8 without its own is
 * bf16's scaled by the peaks: the same wave of tiles at twice the rate. */
double device_half_work(const device_info *d, tt_dtype dt);

/* The dtype whose peak an op class runs at under a training precision: fp8
 * (Transformer Engine's recipe) runs the linear layers' GEMMs in fp8 and
 * every other class in bf16; others as device_math_dtype. */
tt_dtype device_class_peak_dtype(const device_info *d, tt_dtype precision, op_class c);

/* The dtype whose fitted parameters (efficiency, backward efficiency) the
 * class uses: its peak's, except fp8 runs' attention where the device has
 * its own (fp8_attention). */
tt_dtype device_class_dtype(const device_info *d, tt_dtype precision, op_class c);

#endif
