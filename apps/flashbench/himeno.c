/* himeno.c: flashbench's Himeno-like workload (the Himeno benchmark, seed
 * 000 §4.3): Jacobi iterations of a 19-point Poisson stencil over a 3-D grid
 * of floats in seven arrays (p, a of 4 planes, b and c of 3, bnd, wrk1,
 * wrk2), the grid 2:1:1 as the paper's XXL, sized to the data. The last
 * residual, gosa, is the same for every method: its bits are the check. */
#include "flashbench.h"
#include <stdio.h>

#define DEFAULT_ITERATIONS 3
#define PLANES 14 /* p, a[4], b[3], c[3], bnd, wrk1, wrk2 */
#define FLOPS_PER_CELL 34
#define OMEGA 0.8f

struct grid {
    uint64_t imax, jmax, kmax, cells;
    float *p, *a, *b, *c, *bnd, *wrk1, *wrk2;
};

static uint64_t at(const struct grid *g, uint64_t i, uint64_t j, uint64_t k)
{
    return (i * g->jmax + j) * g->kmax + k;
}

/* The largest j with 2 j^3 cells of PLANES floats within `bytes`. */
static uint64_t side_for(uint64_t bytes)
{
    uint64_t cells = bytes / (PLANES * sizeof(float)), side = 1;
    while (2 * (side + 1) * (side + 1) * (side + 1) <= cells)
        side++;
    return side;
}

static bool take_arrays(struct grid *g)
{
    uint64_t plane = g->cells * sizeof(float);
    float **arrays[] = {&g->p, &g->a, &g->b, &g->c, &g->bnd, &g->wrk1, &g->wrk2};
    uint64_t planes[] = {1, 4, 3, 3, 1, 1, 1};
    for (uint32_t n = 0; n < sizeof planes / sizeof planes[0]; n++)
        if ((*arrays[n] = flash_memory_take(planes[n] * plane)) == NULL)
            return false;
    return true;
}

static void initialise(struct grid *g)
{
    float edge = (float)((g->imax - 1) * (g->imax - 1));
    for (uint64_t i = 0; i < g->imax; i++)
        for (uint64_t j = 0; j < g->jmax; j++)
            for (uint64_t k = 0; k < g->kmax; k++) {
                uint64_t n = at(g, i, j, k);
                for (int q = 0; q < 3; q++)
                    g->a[q * g->cells + n] = 1.0f, g->c[q * g->cells + n] = 1.0f;
                g->a[3 * g->cells + n] = 1.0f / 6.0f;
                g->bnd[n] = 1.0f;
                g->p[n] = (float)(i * i) / edge;
            }
}

/* One cell's update; returns ss (its residual part). */
static float cell(const struct grid *g, uint64_t i, uint64_t j, uint64_t k)
{
    const float *p = g->p, *a = g->a, *b = g->b, *c = g->c;
    uint64_t n = at(g, i, j, k), m = g->cells;
    uint64_t ip = at(g, i + 1, j, k), im = at(g, i - 1, j, k);
    uint64_t jp = at(g, i, j + 1, k), jm = at(g, i, j - 1, k);
    float s0 = a[n] * p[ip] + a[m + n] * p[jp] + a[2 * m + n] * p[n + 1] +
               b[n] * (p[at(g, i + 1, j + 1, k)] - p[at(g, i + 1, j - 1, k)] -
                       p[at(g, i - 1, j + 1, k)] + p[at(g, i - 1, j - 1, k)]) +
               b[m + n] * (p[jp + 1] - p[jm + 1] - p[jp - 1] + p[jm - 1]) +
               b[2 * m + n] * (p[ip + 1] - p[im + 1] - p[ip - 1] + p[im - 1]) + c[n] * p[im] +
               c[m + n] * p[jm] + c[2 * m + n] * p[n - 1] + g->wrk1[n];
    return (s0 * a[3 * m + n] - p[n]) * g->bnd[n];
}

static float jacobi(struct grid *g)
{
    float gosa = 0.0f;
    for (uint64_t i = 1; i + 1 < g->imax; i++)
        for (uint64_t j = 1; j + 1 < g->jmax; j++)
            for (uint64_t k = 1; k + 1 < g->kmax; k++) {
                float ss = cell(g, i, j, k);
                gosa += ss * ss;
                g->wrk2[at(g, i, j, k)] = g->p[at(g, i, j, k)] + OMEGA * ss;
            }
    for (uint64_t i = 1; i + 1 < g->imax; i++)
        for (uint64_t j = 1; j + 1 < g->jmax; j++)
            for (uint64_t k = 1; k + 1 < g->kmax; k++)
                g->p[at(g, i, j, k)] = g->wrk2[at(g, i, j, k)];
    return gosa;
}

long flash_himeno(const struct flash_options *options, struct flash_result *result)
{
    uint64_t side = side_for(options->bytes);
    if (side < 3) {
        printf("flashbench: himeno wants at least 3 cells a side (%d bytes)\n",
               (int)(2 * 27 * PLANES * sizeof(float)));
        return -1;
    }
    struct grid g = {.imax = 2 * side, .jmax = side, .kmax = side};
    g.cells = g.imax * g.jmax * g.kmax;
    uint64_t iterations = options->rounds != 0 ? options->rounds : DEFAULT_ITERATIONS;
    if (flash_memory_start(options, 7) != 0 || !take_arrays(&g))
        return -1;
    initialise(&g);
    float gosa = 0.0f;
    uint64_t start = flash_now_us();
    for (uint64_t n = 0; n < iterations; n++)
        gosa = jacobi(&g);
    long synced = flash_memory_sync();
    result->microseconds = flash_now_us() - start;
    flash_memory_end();
    __builtin_memcpy(&result->gosa_bits, &gosa, sizeof gosa);
    result->verified = synced == 0 && gosa > 0.0f && gosa == gosa; /* positive, not a NaN */
    result->rounds = iterations;
    result->flops = FLOPS_PER_CELL * (g.imax - 2) * (g.jmax - 2) * (g.kmax - 2) * iterations;
    result->grid[0] = (uint32_t)g.imax, result->grid[1] = (uint32_t)g.jmax;
    result->grid[2] = (uint32_t)g.kmax;
    return 0;
}
