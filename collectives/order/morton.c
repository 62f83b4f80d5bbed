/*
 * collectives/order/morton.c — Morton (Z) order over the P x P block matrix (the Morton
 * paper, ../shared/papers/004, sec. 2.1-2.2): the bit interleave for P a power of two, with
 * BMI2 pdep/pext chosen at run time, and the balanced Z curve of any P by binary recursion.
 * Pure index arithmetic; see order.h for the conventions (x = src, y = dst).
 */
#include <stdbool.h>

#include "collectives/order/order.h"
#include "hint.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MORTON_X86 1
#else
#define MORTON_X86 0
#endif

#define MASK_X 0x55555555u /* even bits: x */
#define MASK_Y 0xAAAAAAAAu /* odd bits: y */

/* Spread the low 16 bits of v to the even bits (and back): the portable path. */
static uint32_t spread(uint32_t v)
{
    v &= 0xFFFFu;
    v = (v | (v << 8)) & 0x00FF00FFu;
    v = (v | (v << 4)) & 0x0F0F0F0Fu;
    v = (v | (v << 2)) & 0x33333333u;
    v = (v | (v << 1)) & 0x55555555u;
    return v;
}

static uint32_t compact(uint32_t v)
{
    v &= 0x55555555u;
    v = (v | (v >> 1)) & 0x33333333u;
    v = (v | (v >> 2)) & 0x0F0F0F0Fu;
    v = (v | (v >> 4)) & 0x00FF00FFu;
    v = (v | (v >> 8)) & 0x0000FFFFu;
    return v;
}

uint32_t morton_encode_loop(uint32_t x, uint32_t y) { return spread(x) | (spread(y) << 1); }

void morton_decode_loop(uint32_t code, uint32_t *x, uint32_t *y)
{
    *x = compact(code);
    *y = compact(code >> 1);
}

#if MORTON_X86
__attribute__((target("bmi2"))) static uint32_t enc_bmi2(uint32_t x, uint32_t y)
{
    return _pdep_u32(x, MASK_X) | _pdep_u32(y, MASK_Y);
}

__attribute__((target("bmi2"))) static void dec_bmi2(uint32_t code, uint32_t *x, uint32_t *y)
{
    *x = _pext_u32(code, MASK_X);
    *y = _pext_u32(code, MASK_Y);
}
#endif

int morton_have_bmi2(void)
{
#if MORTON_X86
    return __builtin_cpu_supports("bmi2") ? 1 : 0;
#else
    return 0;
#endif
}

int morton_encode_bmi2(uint32_t x, uint32_t y, uint32_t *code)
{
#if MORTON_X86
    if (morton_have_bmi2()) {
        *code = enc_bmi2(x & 0xFFFFu, y & 0xFFFFu);
        return 1;
    }
#else
    (void)x, (void)y, (void)code;
#endif
    return 0;
}

int morton_decode_bmi2(uint32_t code, uint32_t *x, uint32_t *y)
{
#if MORTON_X86
    if (morton_have_bmi2()) {
        dec_bmi2(code, x, y);
        return 1;
    }
#else
    (void)code, (void)x, (void)y;
#endif
    return 0;
}

uint32_t morton_encode(uint32_t x, uint32_t y)
{
    uint32_t c;
    return morton_encode_bmi2(x, y, &c) ? c : morton_encode_loop(x, y);
}

void morton_decode(uint32_t code, uint32_t *x, uint32_t *y)
{
    if (!morton_decode_bmi2(code, x, y))
        morton_decode_loop(code, x, y);
}

/* One step of the balanced recursion on the matrix w x h: which dimension is split and how
   big M0 (top / left) is. Rows on a tie, so that 2^k x 2^k splits as the interleave does
   (y holds the higher bit of each pair). */
static bool split_rows(uint32_t w, uint32_t h) { return h >= w; }

uint32_t morton_zvalue(uint32_t w, uint32_t h, uint32_t x, uint32_t y)
{
    uint32_t z = 0;
    while ((uint64_t)w * h > 1) {
        if (split_rows(w, h)) {
            uint32_t h0 = h / 2;
            if (y < h0) {
                h = h0;
            } else {
                z += h0 * w;
                y -= h0;
                h -= h0;
            }
        } else {
            uint32_t w0 = w / 2;
            if (x < w0) {
                w = w0;
            } else {
                z += w0 * h;
                x -= w0;
                w -= w0;
            }
        }
    }
    return z;
}

void morton_coords(uint32_t w, uint32_t h, uint32_t z, uint32_t *x, uint32_t *y)
{
    uint32_t x0 = 0, y0 = 0;
    while ((uint64_t)w * h > 1) {
        if (split_rows(w, h)) {
            uint32_t h0 = h / 2, n0 = h0 * w;
            if (z < n0) {
                h = h0;
            } else {
                z -= n0;
                y0 += h0;
                h -= h0;
            }
        } else {
            uint32_t w0 = w / 2, n0 = w0 * h;
            if (z < n0) {
                w = w0;
            } else {
                z -= n0;
                x0 += w0;
                w -= w0;
            }
        }
    }
    *x = x0;
    *y = y0;
}

int morton_segment(int P, int rank, struct order_tuple *out)
{
    if (P < 1 || P > 65535 || rank < 0 || rank >= P || out == NULL)
        return HINT_ERR_ARG;
    uint32_t n = (uint32_t)P, first = (uint32_t)rank * n;
    bool pow2 = (n & (n - 1)) == 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t z = first + i, x, y;
        if (pow2)
            morton_decode(z, &x, &y); /* on the fly, no metadata (sec. 2.2) */
        else
            morton_coords(n, n, z, &x, &y);
        out[i] = (struct order_tuple){z + 1, x, y};
    }
    return HINT_SUCCESS;
}
