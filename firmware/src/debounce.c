/*
 * sym_defer_pk: every key has its own countdown, armed whenever its raw
 * reading differs from the debounced state and re-armed on every further
 * change, cancelled when the reading returns to the debounced state. When a
 * countdown runs out the debounced state takes the raw reading.
 */
#include "debounce.h"

void debounce_init(debounce_t *d, uint16_t now) {
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        for (uint8_t c = 0; c < MATRIX_COLS; c++) {
            d->countdown[r][c] = 0;
        }
    }
    d->last_ms = now;
}

bool debounce(debounce_t *d, const matrix_row_t raw[MATRIX_ROWS], matrix_row_t cooked[MATRIX_ROWS],
              uint16_t now) {
    uint16_t elapsed = (uint16_t)(now - d->last_ms);
    d->last_ms = now;
    bool changed = false;
    for (uint8_t r = 0; r < MATRIX_ROWS; r++) {
        for (uint8_t c = 0; c < MATRIX_COLS; c++) {
            matrix_row_t mask = (matrix_row_t)(1u << c);
            uint8_t *left = &d->countdown[r][c];
            if (((raw[r] ^ cooked[r]) & mask) == 0) {
                *left = 0;
                continue;
            }
            if (*left == 0) {
                *left = DEBOUNCE;
                continue;
            }
            if (elapsed >= *left) {
                *left = 0;
                cooked[r] ^= mask;
                changed = true;
            } else {
                *left = (uint8_t)(*left - elapsed);
            }
        }
    }
    return changed;
}
