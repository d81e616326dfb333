/*
 * CRC-16/XMODEM (poly 0x1021, init 0, no reflection): avr-libc's
 * _crc_xmodem_update on the AVR and the same bit loop on the host, equal to
 * Python's binascii.crc_hqx(data, 0). Appended big-endian, a frame's CRC over
 * body plus CRC is zero.
 */
#ifndef PANEL_CRC16_H
#define PANEL_CRC16_H

#include <stdint.h>

uint16_t crc16_update(uint16_t crc, uint8_t byte);
uint16_t crc16(const uint8_t *data, uint8_t len);

#endif
