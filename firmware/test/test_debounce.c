/*
 * Table-driven debounce tests in the manner of QMK's debounce_test_common:
 * each case lists key changes and the debounced changes expected at given
 * times. Every case runs with one scan per millisecond, with 1..9 extra scans
 * per millisecond, and with time jumping straight from one listed time to the
 * next; afterwards 60 s of idle scans must change nothing, and raw must never
 * be modified.
 */
#include <stdint.h>
#include <string.h>

#include "debounce.h"
#include "unit.h"

#define MAX_STEPS 16
#define NONE 0xFF

typedef struct {
    uint16_t t;
    uint8_t in_row, in_col, in_state;    /* key change applied at t, or in_row NONE */
    uint8_t out_row, out_col, out_state; /* debounced change expected at t, or out_row NONE */
} step_t;

typedef struct {
    const char *name;
    uint16_t base; /* clock at t = 0, to cross the 16-bit wrap */
    step_t steps[MAX_STEPS];
} case_t;

#define IN(t, r, c, s) {t, r, c, s, NONE, 0, 0}
#define OUT(t, r, c, s) {t, NONE, 0, 0, r, c, s}
#define END {0, NONE, 0, 0, NONE, 0, 0}

static const case_t cases[] = {
    {"clean press and release", 0, {IN(0, 0, 0, 1), OUT(5, 0, 0, 1), IN(20, 0, 0, 0), OUT(25, 0, 0, 0), END}},
    {"bouncing press gives one change after the last bounce", 0,
     {IN(0, 1, 2, 1), IN(1, 1, 2, 0), IN(2, 1, 2, 1), IN(3, 1, 2, 0), IN(4, 1, 2, 1), OUT(9, 1, 2, 1), END}},
    {"glitch shorter than the debounce time is ignored", 0, {IN(0, 2, 4, 1), IN(3, 2, 4, 0), END}},
    {"bouncing release", 0,
     {IN(0, 3, 1, 1), OUT(5, 3, 1, 1), IN(20, 3, 1, 0), IN(21, 3, 1, 1), IN(22, 3, 1, 0), OUT(27, 3, 1, 0),
      END}},
    {"keys are debounced independently", 0,
     {IN(0, 0, 0, 1), IN(2, 0, 1, 1), OUT(5, 0, 0, 1), OUT(7, 0, 1, 1), IN(9, 0, 0, 0), OUT(14, 0, 0, 0), END}},
    {"operator row and a seat row at once", 0, {IN(10, 4, 1, 1), IN(10, 2, 3, 1), OUT(15, 2, 3, 1), OUT(15, 4, 1, 1), END}},
    {"long hold", 0, {IN(0, 1, 0, 1), OUT(5, 1, 0, 1), IN(9000, 1, 0, 0), OUT(9005, 1, 0, 0), END}},
    {"clock wraps at 16 bits", 65532, {IN(0, 0, 4, 1), OUT(5, 0, 4, 1), IN(6, 0, 4, 0), OUT(11, 0, 4, 0), END}},
};

enum mode { EVERY_MS, EXTRA_SCANS, JUMPS };

static int step_count(const case_t *c) {
    int n = 0;
    while (n < MAX_STEPS && !(c->steps[n].in_row == NONE && c->steps[n].out_row == NONE)) {
        n++;
    }
    return n;
}

/* Scans once or more at time t and checks raw stayed intact; returns the cooked changes. */
static void scan_at(debounce_t *d, const matrix_row_t raw[MATRIX_ROWS], matrix_row_t cooked[MATRIX_ROWS],
                    uint16_t now, int scans, matrix_row_t changes[MATRIX_ROWS]) {
    matrix_row_t before[MATRIX_ROWS];
    matrix_row_t raw_copy[MATRIX_ROWS];
    memcpy(before, cooked, sizeof before);
    memcpy(raw_copy, raw, sizeof raw_copy);
    for (int s = 0; s < scans; s++) {
        debounce(d, raw, cooked, now);
    }
    CHECK(memcmp(raw_copy, raw, sizeof raw_copy) == 0, "raw modified");
    for (int r = 0; r < MATRIX_ROWS; r++) {
        changes[r] = before[r] ^ cooked[r];
    }
}

static void run_case(const case_t *c, enum mode mode, int extra) {
    debounce_t d;
    matrix_row_t raw[MATRIX_ROWS] = {0};
    matrix_row_t cooked[MATRIX_ROWS] = {0};
    matrix_row_t changes[MATRIX_ROWS];
    int n = step_count(c);
    uint16_t last = c->steps[n - 1].t;
    debounce_init(&d, c->base);
    for (uint32_t t = 0; t <= last; t++) {
        int listed = 0;
        matrix_row_t expected[MATRIX_ROWS] = {0};
        for (int i = 0; i < n; i++) {
            const step_t *s = &c->steps[i];
            if (s->t != t) {
                continue;
            }
            listed = 1;
            if (s->in_row != NONE) {
                raw[s->in_row] = (matrix_row_t)((raw[s->in_row] & ~(1u << s->in_col)) | (s->in_state << s->in_col));
            }
            if (s->out_row != NONE) {
                expected[s->out_row] |= (matrix_row_t)(1u << s->out_col);
                CHECK(((raw[s->out_row] >> s->out_col) & 1) == s->out_state, "%s: bad case at %u", c->name, t);
            }
        }
        if (mode == JUMPS && !listed) {
            continue;
        }
        scan_at(&d, raw, cooked, (uint16_t)(c->base + t), mode == EXTRA_SCANS ? 1 + extra : 1, changes);
        CHECK(memcmp(changes, expected, sizeof changes) == 0, "%s (mode %d, extra %d): wrong changes at t=%u",
              c->name, mode, extra, t);
    }
    for (uint32_t t = last + 1; t <= last + 60000u; t += 7) {
        scan_at(&d, raw, cooked, (uint16_t)(c->base + t), 1, changes);
        for (int r = 0; r < MATRIX_ROWS; r++) {
            CHECK(changes[r] == 0, "%s: changed while idle at t=%u", c->name, t);
        }
    }
}

void test_debounce(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], EVERY_MS, 0);
        for (int extra = 1; extra <= 9; extra++) {
            run_case(&cases[i], EXTRA_SCANS, extra);
        }
        run_case(&cases[i], JUMPS, 0);
    }
}
