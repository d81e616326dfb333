/*
 * Symmetric, deferred, per-key debounce (QMK's sym_defer_pk): a key's
 * debounced state changes only after its raw reading has differed from it and
 * stayed unchanged for DEBOUNCE ms. A bouncing press therefore gives one
 * change, late by DEBOUNCE ms after the last bounce.
 *
 * Contract: raw holds this scan's readings and is never modified; on entry
 * cooked is the previous debounced state, on return the new one. now is the
 * millisecond clock; it may jump (the elapsed time is applied at once).
 */
#ifndef PANEL_DEBOUNCE_H
#define PANEL_DEBOUNCE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef uint8_t matrix_row_t;

typedef struct {
    uint8_t countdown[MATRIX_ROWS][MATRIX_COLS]; /* ms left; 0 = idle */
    uint16_t last_ms;
} debounce_t;

void debounce_init(debounce_t *d, uint16_t now);

/* Runs one scan; returns true if cooked changed. */
bool debounce(debounce_t *d, const matrix_row_t raw[MATRIX_ROWS], matrix_row_t cooked[MATRIX_ROWS],
              uint16_t now);

#endif
