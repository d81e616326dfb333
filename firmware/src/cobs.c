/* COBS encoder and in-place decoder; a run of 254 non-zero bytes takes the 0xFF code. */
#include "cobs.h"

uint16_t cobs_encode(const uint8_t *in, uint16_t len, uint8_t *out) {
    uint16_t code_at = 0;
    uint8_t code = 1;
    uint16_t o = 1;
    for (uint16_t i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        } else {
            out[o++] = in[i];
            code++;
            if (code == 0xFF) {
                out[code_at] = code;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    return o;
}

int16_t cobs_decode(uint8_t *buf, uint16_t len) {
    uint16_t r = 0;
    uint16_t w = 0;
    while (r < len) {
        uint8_t code = buf[r++];
        if (code == 0 || r + code - 1 > len) {
            return -1;
        }
        for (uint8_t i = 1; i < code; i++) {
            uint8_t b = buf[r++];
            if (b == 0) {
                return -1;
            }
            buf[w++] = b;
        }
        if (code != 0xFF && r < len) {
            buf[w++] = 0;
        }
    }
    return (int16_t)w;
}
