/* rng.h: a small counter-friendly random number generator (splitmix64), so
 * every stream (initialisation, dropout, synthetic data) is seeded and
 * reproducible bit for bit on any machine. */
#ifndef TT_RNG_H
#define TT_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct rng {
    uint64_t state;
} rng;

static inline uint64_t rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A stream for (seed, key): independent streams per sample index or layer. */
static inline rng rng_at(uint64_t seed, uint64_t key)
{
    rng r = {rng_mix(seed * 0x9e3779b97f4a7c15ULL + rng_mix(key + 0x632be59bd9b4e019ULL))};
    return r;
}

static inline uint64_t rng_u64(rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return rng_mix(r->state);
}

/* Uniform in [0, 1) with 24 random bits (exact in float). */
static inline float rng_uniform(rng *r)
{
    return (float)(rng_u64(r) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double rng_uniform53(rng *r)
{
    return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in (0, 1) with 53 random bits: never 0, for a logarithm. */
static inline double rng_open53(rng *r)
{
    return ((double)(rng_u64(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline uint64_t rng_below(rng *r, uint64_t n)
{
    return rng_u64(r) % n;
}

/* Standard normal by Box-Muller (one value per call; simple and exact enough). */
static inline float rng_normal(rng *r)
{
    double u1 = rng_open53(r);
    double u2 = rng_uniform53(r);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

#endif
