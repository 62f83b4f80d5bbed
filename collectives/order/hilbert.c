/*
 * collectives/order/hilbert.c — Hilbert curves: the classic one on a 2^k x 2^k grid, and the
 * generalised curve of any w x h rectangle (the recursive "gilbert" construction: split the
 * longer side in two, with a 3-way split when the shape would otherwise get too thin), which
 * keeps neighbouring cells close on the curve for any P.
 */
#include <stdlib.h>

#include "collectives/order/order.h"

void hilbert_d2xy(uint32_t n, uint32_t d, uint32_t *x, uint32_t *y)
{
    uint32_t rx, ry, t = d;
    *x = *y = 0;
    for (uint32_t s = 1; s < n; s *= 2) {
        rx = 1 & (t / 2);
        ry = 1 & (t ^ rx);
        if (ry == 0) { /* rotate the quadrant */
            if (rx == 1) {
                *x = s - 1 - *x;
                *y = s - 1 - *y;
            }
            uint32_t tmp = *x;
            *x = *y;
            *y = tmp;
        }
        *x += s * rx;
        *y += s * ry;
        t /= 4;
    }
}

static int sgn(int v) { return (v > 0) - (v < 0); }

/* Cells of the rectangle spanned from (x, y) by the major axis (ax, ay) and minor axis (bx, by). */
static void gilbert(int x, int y, int ax, int ay, int bx, int by, void (*fn)(int, int, void *), void *arg)
{
    int w = abs(ax + ay), h = abs(bx + by);
    int dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
    if (h == 1) { /* a single row */
        for (int i = 0; i < w; i++, x += dax, y += day)
            fn(x, y, arg);
        return;
    }
    if (w == 1) { /* a single column */
        for (int i = 0; i < h; i++, x += dbx, y += dby)
            fn(x, y, arg);
        return;
    }
    int ax2 = ax / 2, ay2 = ay / 2, bx2 = bx / 2, by2 = by / 2;
    int w2 = abs(ax2 + ay2), h2 = abs(bx2 + by2);
    if (2 * w > 3 * h) {
        if ((w2 % 2) && (w > 2)) { /* prefer even steps */
            ax2 += dax;
            ay2 += day;
        }
        /* long case: split in two along the major axis */
        gilbert(x, y, ax2, ay2, bx, by, fn, arg);
        gilbert(x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by, fn, arg);
    } else {
        if ((h2 % 2) && (h > 2)) {
            bx2 += dbx;
            by2 += dby;
        }
        /* standard case: one step up, one long horizontal, one step down */
        gilbert(x, y, bx2, by2, ax2, ay2, fn, arg);
        gilbert(x + bx2, y + by2, ax, ay, bx - bx2, by - by2, fn, arg);
        gilbert(x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2), -(ay - ay2),
                fn, arg);
    }
}

void gilbert_walk(int w, int h, void (*fn)(int x, int y, void *arg), void *arg)
{
    if (w >= h)
        gilbert(0, 0, w, 0, 0, h, fn, arg);
    else
        gilbert(0, 0, 0, h, w, 0, fn, arg);
}
