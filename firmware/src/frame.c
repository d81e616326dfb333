/* Frame encode and decode: CRC, COBS and the version check in one place. */
#include "frame.h"

#include "cobs.h"
#include "config.h"
#include "crc16.h"

uint8_t frame_encode(const uint8_t *body, uint8_t len, uint8_t *out) {
    uint8_t raw[BODY_MAX + 2];
    for (uint8_t i = 0; i < len; i++) {
        raw[i] = body[i];
    }
    uint16_t crc = crc16(body, len);
    raw[len] = (uint8_t)(crc >> 8);
    raw[len + 1] = (uint8_t)crc;
    uint8_t n = (uint8_t)cobs_encode(raw, (uint8_t)(len + 2), out);
    out[n++] = 0;
    return n;
}

int16_t frame_decode(uint8_t *buf, uint8_t len) {
    int16_t n = cobs_decode(buf, len);
    if (n < 0) {
        return FRAME_ERR_COBS;
    }
    if (n < 4) {
        return FRAME_ERR_SHORT;
    }
    if (crc16(buf, (uint8_t)n) != 0) {
        return FRAME_ERR_CRC;
    }
    if (buf[0] != PROTOCOL_VERSION) {
        return FRAME_ERR_VERSION;
    }
    return (int16_t)(n - 2);
}
