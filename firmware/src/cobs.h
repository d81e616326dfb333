/*
 * Consistent Overhead Byte Stuffing: removes every zero from a block so that
 * a single 0x00 can end each frame on the wire. The receiver resynchronises
 * at the next zero whatever garbage came before.
 */
#ifndef PANEL_COBS_H
#define PANEL_COBS_H

#include <stdint.h>

/* Encodes len bytes of in into out (room for len + len/254 + 1), no terminator; returns the length. */
uint16_t cobs_encode(const uint8_t *in, uint16_t len, uint8_t *out);

/*
 * Decodes len bytes (without the terminating zero) in place; returns the
 * decoded length, or -1 if the block holds a zero or a code runs past its end.
 */
int16_t cobs_decode(uint8_t *buf, uint16_t len);

#endif
