/*
 * Frames on the wire: COBS(body || CRC16-BE(body)) followed by 0x00, where
 * body = protocol version, message type, payload (docs/protocol.md).
 */
#ifndef PANEL_FRAME_H
#define PANEL_FRAME_H

#include <stdint.h>

enum frame_error {
    FRAME_ERR_COBS = -1,    /* stray zero or a code past the end */
    FRAME_ERR_SHORT = -2,   /* fewer bytes than version, type and CRC */
    FRAME_ERR_CRC = -3,     /* checksum mismatch */
    FRAME_ERR_VERSION = -4, /* a protocol version this firmware does not speak */
};

/* Encodes body (len <= BODY_MAX) into out (FRAME_MAX bytes), terminator included; returns the length. */
uint8_t frame_encode(const uint8_t *body, uint8_t len, uint8_t *out);

/*
 * Decodes a received block (terminator stripped) in place; on success the body
 * starts at buf[0] and its length is returned, otherwise a frame_error.
 */
int16_t frame_decode(uint8_t *buf, uint8_t len);

#endif
